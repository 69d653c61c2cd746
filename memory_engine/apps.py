from django.apps import AppConfig


class MemoryEngineConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "memory_engine"
    verbose_name = "Memory engine"

    def ready(self) -> None:
        # The Celery tasks are registered in every process, not only in a worker: the services send them
        # by name (services/dispatch.py), from the Celery app's registry, which only an import fills.
        from memory_engine.jobs import tasks  # noqa: F401
