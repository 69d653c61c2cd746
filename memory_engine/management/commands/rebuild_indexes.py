from django.core.management.base import BaseCommand, CommandError

from memory_engine.errors import EmbeddingModelMismatch
from memory_engine.services.operations import space_indexes_rebuild
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
                rebuilt = space_indexes_rebuild(item, reembed=reembed)
            except EmbeddingModelMismatch as exc:
                raise CommandError(str(exc)) from None
            if rebuilt.reembedded is not None:
                self.stdout.write(f"space {item.pk} ({item}): re-embedded {rebuilt.reembedded} vectors")
            summary = ", ".join(f"{name} {n}" for name, n in rebuilt.vectors.items())
            self.stdout.write(f"space {item.pk} ({item}): {summary}")
