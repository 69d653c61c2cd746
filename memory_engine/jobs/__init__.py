"""The worker's door: the Celery tasks (tasks.py), thin, taking ids, over the services."""
