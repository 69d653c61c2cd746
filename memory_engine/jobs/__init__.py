"""What a turn sets off: storing it and answering it (conversation.py), deciding where work runs
(dispatch.py), the Celery tasks, consolidation jobs and conversation imports."""
