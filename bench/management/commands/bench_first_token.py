"""Time to first token of a streamed chat reply, beside the reply not streamed: bench/first_token.py.

DATABASE_URL=sqlite:///var/bench-first-token.sqlite3 manage.py bench_first_token --replies 10
"""

import tempfile
from pathlib import Path

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError

from bench.first_token import run, table


class Command(BaseCommand):
    help = "Time a chat reply's first words over HTTP (production server), streamed and not, cold and warm."

    def add_arguments(self, parser):
        parser.add_argument("--replies", type=int, default=10, help="warm replies per LLM, each way")
        parser.add_argument("--turns", type=int, default=60, help="turns of the conversation in memory")
        parser.add_argument("--sample", default="conv-26")
        parser.add_argument("--llm", nargs="+", choices=["offline", "fake"], default=["offline", "fake"])
        parser.add_argument("--fake-token-ms", type=float, default=20.0, help="the scripted server's pace")

    def handle(self, *args, replies, turns, sample, llm, fake_token_ms, **options):
        database = str(settings.DATABASES["default"]["NAME"])
        if "bench" not in database:
            raise CommandError(f"the database {database!r} is not a benchmark's: its name must contain 'bench'")
        call_command("migrate", verbosity=0)
        with tempfile.TemporaryDirectory(prefix="first-token-") as folder:
            results = run(
                sample=sample,
                turns=turns,
                replies=replies,
                llms=llm,
                fake_token_ms=fake_token_ms,
                run_dir=Path(folder),
                log=lambda line: self.stderr.write(line),
            )
        self.stdout.write(
            f"\nTime to first token: {sample}, {turns} turns in memory, {replies} warm replies each way, "
            f"scripted server at {fake_token_ms:g} ms a word; median (p95) over the warm replies"
        )
        for line in table(results):
            self.stdout.write(line)
