from django.apps import AppConfig
from django.conf import settings


class MemoryEngineConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "memory_engine"
    verbose_name = "Memory engine"

    def ready(self) -> None:
        if settings.MEMORYOS_WARM_UP:
            from memory_engine.warm_up import warm_up_in_background  # imports torch: only when asked

            warm_up_in_background()
