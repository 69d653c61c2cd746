"""Train the learnt reader of engine/asking.py on the chat sets and data/intents.json (bench/asking.py),
print its measure (each chat set left out in turn) and write it to engine/asking_weights.json.

    manage.py train_asking            measure, then write the reader
    manage.py train_asking --dry-run  measure only
"""

import json

from django.core.management.base import BaseCommand

from bench import asking as training
from memory_engine.engine import asking


class Command(BaseCommand):
    help = "Train, measure and write the learnt reader of questions about what the person said."

    def add_arguments(self, parser):
        parser.add_argument("--dry-run", action="store_true", help="measure only; write nothing")

    def handle(self, *args, dry_run=False, **options):
        measured, reader = training.train()
        self.stdout.write(
            f"each chat set left out in turn: {measured['questions read as such']} questions and "
            f"{measured['small talk read as questions']} small-talk messages read by the rules as questions"
        )
        self.stdout.write("| threshold | questions turned away | small talk turned away |\n| --- | --- | --- |")
        for threshold, counts in measured["by threshold"].items():
            self.stdout.write(f"| {threshold} | {counts['asks turned away']} | {counts['small talk turned away']} |")
        if reader is None:
            self.stdout.write("no threshold turns away few enough questions: nothing written")
            return
        self.stdout.write(f"threshold kept: {reader.threshold} (embedder {reader.label})")
        if not dry_run:
            asking.WEIGHTS_FILE.write_text(json.dumps(reader.as_dict()) + "\n")
            self.stdout.write(f"written: {asking.WEIGHTS_FILE}")
