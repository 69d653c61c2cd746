"""Write the export document's JSON Schema (memory_engine/export_format.py): `manage.py export_schema`
rewrites docs/export.schema.json, `--check` says whether it is current (a test runs it)."""

import json
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from memory_engine.export_format import json_schema

PUBLISHED = Path(settings.BASE_DIR) / "docs" / "export.schema.json"


def schema_text() -> str:
    return json.dumps(json_schema(), indent=2, ensure_ascii=False) + "\n"


class Command(BaseCommand):
    help = "Write the JSON Schema of an export (what GET .../export/ returns and a restore accepts)."

    def add_arguments(self, parser):
        parser.add_argument("--check", action="store_true", help="fail if docs/export.schema.json is not current")

    def handle(self, *args, check=False, **options):
        text = schema_text()
        if check:
            if not PUBLISHED.exists() or PUBLISHED.read_text() != text:
                raise CommandError(f"{PUBLISHED} is not current: run manage.py export_schema")
            self.stdout.write(f"{PUBLISHED} is current")
            return
        PUBLISHED.write_text(text)
        self.stdout.write(f"wrote {PUBLISHED}")
