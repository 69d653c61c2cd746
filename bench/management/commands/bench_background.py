"""What a restore and a comparison cost a web request, before and after they moved to a worker.

    manage.py bench_background --pages 300 --questions 200 --k 10

See bench/background.py. Prints the request's seconds before (the work in the request) and now (check and
record a job), their ratio, and the worker's seconds now.
"""

import json as json_module

from django.core.management.base import BaseCommand

from bench.background import measure, table


class Command(BaseCommand):
    help = "Time a restore and a comparison in the request (as before) and as a worker's job (now), side by side."

    def add_arguments(self, parser):
        parser.add_argument("--pages", type=int, default=300)
        parser.add_argument("--questions", type=int, default=200)
        parser.add_argument("--k", type=int, default=10)
        parser.add_argument("--json", default=None, help="also write the figures to this file")

    def handle(self, *args, pages, questions, k, json, **options):
        figures = measure(pages=pages, questions=questions, k=k)
        self.stdout.write(table(figures))
        if json:
            with open(json, "w") as out:
                out.write(_dumps(figures))


def _dumps(figures: dict) -> str:
    return json_module.dumps(figures, indent=2)
