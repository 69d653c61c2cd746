from django.apps import AppConfig


class BenchConfig(AppConfig):
    """Benchmarks and evaluations: no models, no URLs; their `manage.py` commands."""

    name = "bench"
    verbose_name = "MemoryOS benchmarks"
