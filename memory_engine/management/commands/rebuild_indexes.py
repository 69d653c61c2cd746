from django.core.management.base import BaseCommand, CommandError

from memory_engine.services.operations import EmbeddingModelMismatch, rebuild_space_indexes, reembed_space
from memory_engine.services.spaces import all_spaces


class Command(BaseCommand):
    help = "Rebuild the FAISS sidecar indexes of every space (or one) from the database."

    def add_arguments(self, parser):
        parser.add_argument("--space", type=int, help="only this space id")
        parser.add_argument(
            "--reembed", action="store_true", help="re-embed all vectors with the configured model first"
        )

    def handle(self, *args, space=None, reembed=False, **options):
        chosen = all_spaces(space_id=space)
        if space is not None and not chosen:
            raise CommandError(f"no space with id {space}")
        for item in chosen:
            try:
                if reembed:
                    self.stdout.write(f"space {item.pk} ({item}): re-embedded {reembed_space(item)} vectors")
                counts = rebuild_space_indexes(item)
            except EmbeddingModelMismatch as exc:
                raise CommandError(str(exc)) from None
            summary = ", ".join(f"{name} {n}" for name, n in counts.items())
            self.stdout.write(f"space {item.pk} ({item}): {summary}")
