"""What a promotion keeps with no LLM, and whether it is knowledge (bench/knowledge_kept.py): no model, no database.

manage.py bench_knowledge_kept --sample FILE --seed N   # draw a sample of what is kept, to be labelled
manage.py bench_knowledge_kept --labelled FILE ...      # read labelled samples against what is kept now
"""

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from bench import knowledge_kept


class Command(BaseCommand):
    help = "Draw a sample of the entries kept with no LLM to label, or score labelled samples against what is kept now."

    def add_arguments(self, parser):
        parser.add_argument("--sample", type=Path, help="write a sample to label here (JSON)")
        parser.add_argument("--seed", type=int, default=1)
        parser.add_argument("--labelled", type=Path, nargs="*", default=[], help="labelled samples to score")

    def handle(self, *args, sample, seed, labelled, **options):
        if sample is None and not labelled:
            raise CommandError("give --sample FILE or --labelled FILE ...")
        if sample is not None:
            drawn = knowledge_kept.sample(seed)
            sample.write_text(json.dumps({"seed": seed, "entries": drawn}, ensure_ascii=False, indent=1))
            self.stdout.write(f"{len(drawn)} entries written to {sample}")
        for path in labelled:
            found = knowledge_kept.scored(json.loads(path.read_text())["entries"])
            self.stdout.write(f"\n{path.name}")
            self.stdout.write("| corpus | kind | labelled | still kept | facts among kept | facts lost |")
            self.stdout.write("| --- | --- | --- | --- | --- | --- |")
            for (corpus, kind), row in sorted(found["rows"].items()):
                share = f"{row['facts kept'] / row['kept']:.1%}" if row["kept"] else "-"
                self.stdout.write(
                    f"| {corpus} | {kind} | {row['labelled']} | {row['kept']} | {row['facts kept']} ({share}) "
                    f"| {row['facts lost']} |"
                )
            listed = (("kept, not a fact", found["kept, not facts"]), ("a fact no longer kept", found["lost"]))
            for said, entries in listed:
                for entry in entries:
                    self.stdout.write(f"  {said} ({entry['corpus']}, {entry['kind']}): {entry['text'][:140]}")
