import os

from celery import Celery
from celery.signals import task_postrun, task_prerun
from django.db import close_old_connections

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")

app = Celery("playground")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks(["memory_engine.jobs"])  # memory_engine/jobs/tasks.py


@task_prerun.connect
@task_postrun.connect
def return_database_connections(sender=None, **kwargs) -> None:
    """Around each task a worker runs, give its database connections back to the pool (or close them,
    without one) and drop any that broke, as Django does around a web request. Celery's own fix-up would
    close the whole pool instead (settings.CELERY_DB_REUSE_MAX says why it does not): a new PostgreSQL
    backend, a process fork with a cold catalogue cache on the server, for every task. A task run eagerly
    is inside its caller's work (and maybe its transaction): its connections are left alone."""
    if not getattr(getattr(sender, "request", None), "is_eager", False):
        close_old_connections()
