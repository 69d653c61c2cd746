from django.core.management.base import BaseCommand, CommandError

from memory_engine.models import MemorySpace
from memory_engine.services.operations import EmbeddingModelMismatch, rebuild_space_indexes, reembed_space


class Command(BaseCommand):
    help = "Rebuild the FAISS sidecar indexes of every space (or one) from the database."

    def add_arguments(self, parser):
        parser.add_argument("--space", type=int, help="only this space id")
        parser.add_argument(
            "--reembed", action="store_true", help="re-embed all vectors with the configured model first"
        )

    def handle(self, *args, space=None, reembed=False, **options):
        spaces = MemorySpace.objects.select_related("user", "assistant").order_by("pk")
        if space is not None:
            spaces = spaces.filter(pk=space)
            if not spaces.exists():
                raise CommandError(f"no space with id {space}")
        for item in spaces:
            try:
                if reembed:
                    self.stdout.write(f"space {item.pk} ({item}): re-embedded {reembed_space(item)} vectors")
                counts = rebuild_space_indexes(item)
            except EmbeddingModelMismatch as exc:
                raise CommandError(str(exc)) from None
            summary = ", ".join(f"{name} {n}" for name, n in counts.items())
            self.stdout.write(f"space {item.pk} ({item}): {summary}")
