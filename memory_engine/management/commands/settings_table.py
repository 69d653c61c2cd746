"""Write docs/settings.md's table of the settings from memory_engine/config.py: `manage.py
settings_table` rewrites the table between its markers, `--check` says whether it is current (a test runs it)."""

from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from memory_engine.config import settings_table

DOC = Path(settings.BASE_DIR) / "docs" / "settings.md"
BEGIN = "<!-- the settings: written by `manage.py settings_table` from memory_engine/config.py -->\n"
END = "<!-- end of the settings -->\n"


def with_table(text: str) -> str:
    """The document with the table between its markers made from the settings now."""
    if BEGIN not in text or END not in text:
        raise CommandError(f"{DOC} has no place for the table: its two markers are missing")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + BEGIN + settings_table() + END + tail


class Command(BaseCommand):
    help = "Write the table of the settings in docs/settings.md (from memory_engine/config.py)."

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="fail if docs/settings.md's table is not current")

    def handle(self, *args, check=False, **options):
        text = DOC.read_text()
        current = with_table(text)
        if check:
            if current != text:
                raise CommandError(f"{DOC}: the settings table is not current (manage.py settings_table)")
            self.stdout.write(f"{DOC} is current")
            return
        DOC.write_text(current)
        self.stdout.write(f"wrote the settings into {DOC}")
