"""What importing a large file costs: the web process's part and the worker's, each in a fresh process.

    manage.py bench_import                                  # 5 MB and 50 MB ChatGPT exports, 500 turns stored
    manage.py bench_import --sizes-mb 1 --store-turns 40    # a quick run

See bench/imports.py. Prints, for each export, the seconds and peak memory of the web part (the body
streamed to disk, checked whole and listed), and side by side the worker's three: the embedder alone on
the export's turns (the bound), every turn imported in bulk, and the first --store-turns turns imported
a turn at a time; with each process's memory before its part and what the import left in the memory.
"""

import json

from django.core.management.base import BaseCommand

from bench.imports import measure, run_role, table


class Command(BaseCommand):
    help = "Time and weigh an import of a large ChatGPT export: the web process's part and the worker's."

    def add_arguments(self, parser):
        parser.add_argument("--sizes-mb", type=float, nargs="+", default=[5, 50])
        parser.add_argument("--store-turns", type=int, default=500)
        parser.add_argument("--work-dir", default="var/bench-import")
        parser.add_argument("--json", default=None, help="also write the figures to this file")
        parser.add_argument(
            "--role", choices=("web", "embedder", "bulk", "turn"), default=None, help="(internal) one part, here"
        )
        parser.add_argument("--file", default=None, help="(internal) the export of --role's part")
        parser.add_argument("--result", default=None, help="(internal) where --role's part writes its figures")

    def handle(self, *args, sizes_mb, store_turns, work_dir, json, role, file, result, **options):
        if role:
            run_role(role, file=file, store_turns=store_turns, result=result)
            return
        rows = measure(sizes_mb=sizes_mb, store_turns=store_turns, work_dir=work_dir, progress=self.stderr.write)
        self.stdout.write(table(rows))
        if json:
            with open(json, "w") as out:
                out.write(_dumps(rows))


def _dumps(rows: list) -> str:
    return json.dumps(rows, indent=2)
