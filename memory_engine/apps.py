from django.apps import AppConfig


class MemoryEngineConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "memory_engine"
    verbose_name = "Memory engine"
