"""Answers from memory alone, per conversation set (bench/recall_only.py): seconds a set, no model.

    manage.py bench_recall bench/data/chat_not_told.json bench/data/chat_fresh.json

Prints a markdown table, a row a set, and the small talk answered with a quote (with the rule that read it);
`--answers FILE` writes every answer as JSON, for comparing two checkouts question by question. Run it on a
database of its own (it creates memory users named ro-...), e.g. DATABASE_URL=sqlite:///var/bench-recall.sqlite3,
after `manage.py migrate`.
"""

import json
from dataclasses import asdict
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from bench import recall_only


class Command(BaseCommand):
    help = "Answer each set's questions from memory alone (recall, no model) and count what it got."

    def add_arguments(self, parser):
        parser.add_argument("files", nargs="+", help="conversation sets (JSON)")
        parser.add_argument(
            "--answers", dest="answers_file", help="write every answer here (JSON): set, message, answer, recalled"
        )

    def handle(self, *args, files, answers_file=None, **options):
        paths = [Path(name) for name in files]
        missing = [str(path) for path in paths if not path.is_file()]
        if missing:
            raise CommandError(f"no such set: {', '.join(missing)}")
        # No key: recall answers, and the consolidation keeps the person's own words (no LLM call). It runs
        # here, after each turn (recall_only.run), not in a worker: nothing is sent to a broker.
        quiet = {"LLM_PROVIDER": "offline", "LLM_BASE_URL": "", "CONSOLIDATION": "inline"}
        settings.MEMORYOS = {**settings.MEMORYOS, **quiet}
        answered = {path.stem: recall_only.run(path) for path in paths}
        rows = [recall_only.summary(label, answers) for label, answers in answered.items()]
        columns = list(rows[0])
        self.stdout.write("| " + " | ".join(columns) + " |")
        self.stdout.write("|" + " --- |" * len(columns))
        for row in rows:
            self.stdout.write("| " + " | ".join(str(row[c]) for c in columns) + " |")
        for label, answers in answered.items():
            for answer in recall_only.small_talk_quoted(answers):
                self.stdout.write(
                    f"\nsmall talk answered with a quote ({label}, read as: {answer.read_as}): {answer.asked!r}\n"
                    f"  -> {answer.text!r}"
                )
        if answers_file:
            rows = [
                {**asdict(answer), "set": label, "recalled": answer.recalled, "guessed": answer.guessed}
                for label, found in answered.items()
                for answer in found
            ]
            Path(answers_file).write_text(json.dumps(rows, indent=1))
