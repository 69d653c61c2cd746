"""How messages are read (bench/intents.py): the labelled corpus and every chat set, no model, seconds.

manage.py bench_intents              # the corpus, and a row a chat set
manage.py bench_intents --misses     # and the questions no rule read as asking about memory
"""

from django.core.management.base import BaseCommand

from bench import intents

COLUMNS = ("set", "questions", "memory", "maybe", "none", "small talk", "small talk as memory")


class Command(BaseCommand):
    help = "Read the labelled messages and every chat set's turns, and count what each was read as."

    def add_arguments(self, parser):
        parser.add_argument("--misses", action="store_true", help="list the questions read as asking nothing")

    def handle(self, *args, misses, **options):
        found = intents.corpus()
        self.stdout.write(f"labelled messages (bench/data/intents.json): {found['as labelled']} of {found['messages']}")
        for item in found["wrong"]:
            self.stdout.write(f"  read {item['read']} ({item['rule']}), labelled {item['label']}: {item['message']}")
        self.stdout.write("")
        self.stdout.write("| " + " | ".join(COLUMNS) + " |")
        self.stdout.write("|" + " --- |" * len(COLUMNS))
        rows = [intents.chat_set(path) for path in intents.chat_sets()]
        for row in rows:
            self.stdout.write("| " + " | ".join(str(row[c]) for c in COLUMNS) + " |")
        rules: dict[str, int] = {}
        for row in rows:
            for name, count in row["rules"]:
                rules[name] = rules.get(name, 0) + count
        self.stdout.write("")
        self.stdout.write(
            "rules that decided the questions: "
            + "; ".join(f"{n} {c}" for n, c in sorted(rules.items(), key=lambda p: -p[1]))
        )
        if misses:
            for row in rows:
                for message in row["questions read as none"]:
                    self.stdout.write(f"  {row['set']}: {message}")
