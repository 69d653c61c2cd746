"""Evaluate the memory on LongMemEval beside plain retrievers (bench/longmemeval_run.py).

    manage.py evaluate_longmemeval                         # the development split (34 questions)
    manage.py evaluate_longmemeval --questions 37f165cf    # one question
    manage.py evaluate_longmemeval --reuse                 # keep the histories ingested by an earlier run

Each question's history is ingested into a space of its own (user "lme-<question id>"), with no LLM, then
the question is asked. Prints the tables (the paper's recall_any/all@k and NDCG@k at session and turn level,
the evidence a context of 250 to 4,000 tokens shows, by method and question type) and writes them to
<out>/longmemeval.md, with every question's rankings in <out>/longmemeval.json. --reuse takes a question's
space as it is when it holds its whole history: for what changes retrieval only, as a setting read when
asking; run without it after a change to how turns are stored. Run it on a database of its own, e.g.
DATABASE_URL=sqlite:///var/lme.sqlite3, after `manage.py migrate`.
"""

import json
import shlex
import sys
import time
from dataclasses import asdict
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from bench import longmemeval_run
from bench.progress import ProgressBar
from memory_engine.config import memory_settings
from memory_engine.formats.longmemeval import load_questions


class Command(BaseCommand):
    help = "Ingest each LongMemEval question's history, ask it, compare the memory with plain retrievers."

    def add_arguments(self, parser):
        parser.add_argument(
            "--file", default=str(memory_settings().longmemeval_file), help="a LongMemEval file (.json or .json.gz)"
        )
        parser.add_argument("--questions", nargs="*", default=None, help="question ids (default: all in the file)")
        parser.add_argument("--out", default="var/eval", help="folder for longmemeval.json and longmemeval.md")
        parser.add_argument("--reuse", action="store_true", help="keep a question's history ingested before")
        parser.add_argument(
            "--no-dense", action="store_true", help="leave the dense baseline out (it embeds every turn: slow)"
        )

    def handle(self, *args, file, questions, out, reuse, no_dense, **options):
        try:
            found = load_questions(file)
        except (OSError, ValueError) as error:
            raise CommandError(f"cannot read LongMemEval questions from {file}: {error}") from error
        if questions:
            missing = set(questions) - {q["question_id"] for q in found}
            if missing:
                raise CommandError(f"no question(s) {', '.join(sorted(missing))} in {file}")
            found = [q for q in found if q["question_id"] in questions]
        started = time.perf_counter()
        progress = ProgressBar(self.stderr)
        results = []
        for number, question in enumerate(found, start=1):
            began = time.perf_counter()
            result = longmemeval_run.evaluate_question(question, reuse=reuse, dense=not no_dense, progress=progress)
            result.seconds = round(time.perf_counter() - began, 1)
            results.append(result)
            self.stderr.write(f"{number}/{len(found)} {result.question_id}: {result.seconds:.0f} s")
        summary = longmemeval_run.summarise(results)
        meta = {
            "command": "manage.py evaluate_longmemeval " + shlex.join(sys.argv[2:]),
            "file": file,
            "seconds": round(time.perf_counter() - started, 1),
            "context_token_budget": memory_settings().context_token_budget,
        }
        text = longmemeval_run.markdown(summary)
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "longmemeval.md").write_text(f"`{meta['command']}`\n\n{text}")
        payload = {"meta": meta, "summary": summary, "questions": [asdict(r) for r in results]}
        (folder / "longmemeval.json").write_text(json.dumps(payload, indent=1))
        self.stdout.write(text)
