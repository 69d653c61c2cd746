"""How requests to the memory are read (bench/memory_requests.py): no model, no database, seconds.

manage.py bench_memory_requests [--labelled FILE]   # another labelled file, in the same shape (a held-out one)
"""

from pathlib import Path

from django.core.management.base import BaseCommand

from bench import memory_requests


class Command(BaseCommand):
    help = "Read the labelled requests to the memory, and every message where none is asked, and count."

    def add_arguments(self, parser):
        parser.add_argument(
            "--labelled", type=Path, default=memory_requests.LABELLED, help="the labelled messages (JSON) to read"
        )

    def handle(self, *args, labelled, **options):
        found = memory_requests.labelled(labelled)
        self.stdout.write(f"labelled messages ({labelled.name}), label -> read as:")
        for (label, got), count in sorted(found["counts"].items()):
            self.stdout.write(f"  {label:7s} -> {got:17s} {count}")
        for label, got, message in found["wrong"]:
            self.stdout.write(f"  labelled {label}, read {got}: {message}")
        self.stdout.write("")
        self.stdout.write("| where nothing is asked of the memory | messages | read as a request |")
        self.stdout.write("| --- | --- | --- |")
        for name, count, read in memory_requests.unasked():
            self.stdout.write(f"| {name} | {count} | {len(read)} |")
            for message in read:
                self.stdout.write(f"  read as a request: {message[:160]}")
