"""Choose retrieval settings on LoCoMo by leave-one-conversation-out (bench/loo.py).

    manage.py tune_locomo --grid RETRIEVAL_LEXICAL_WEIGHT=0.3,0.5,0.7 --grid RETRIEVAL_CHAIN_WEIGHT=0,0.1,0.2
    manage.py tune_locomo --no-llm --grid RETRIEVAL_IGNORE_NAMES=true,false      # quicker: no promotion

Each conversation is ingested once, as evaluate_locomo ingests it (the settings tried here do not change
what is stored), then every question is ranked under every combination of the grid, and recall@k of the
memory on categories 1-4 is scored as evaluate_locomo scores it. For each conversation, the combination
best on the other conversations is scored on it. Prints and writes <out>/tune.md and <out>/tune.json:
every combination on every conversation, the folds, the held-out mean and its spread.
"""

import itertools
import json
import shlex
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.test.utils import override_settings

from bench.locomo_run import KS, chosen_samples, ingest_for_evaluation, memory_ranking, page_turn_ids
from bench.loo import Score, best_setting, held_out_mean, leave_one_out
from bench.metrics import evidence_recall
from bench.progress import ProgressBar
from memory_engine.jobs.locomo import DEV_FILE, clean_evidence
from memory_engine.llm import get_llm

# Settings read at retrieval time only, so one ingestion serves every value; each with its parser.
TUNABLE = {
    "RETRIEVAL_LEXICAL_WEIGHT": float,
    "RETRIEVAL_CHAIN_WEIGHT": float,
    "RETRIEVAL_IGNORE_NAMES": lambda text: {"true": True, "false": False}[text.lower()],
    "RETRIEVAL_DATES": lambda text: {"true": True, "false": False}[text.lower()],
}
CATEGORIES = (1, 2, 3, 4)

Combination = tuple[tuple[str, object], ...]


def parse_grid(specs: list[str]) -> list[Combination]:
    """["NAME=v1,v2", ...] -> every combination, in order. Raises CommandError for a bad spec."""
    axes = []
    for spec in specs:
        name, _, values = spec.partition("=")
        if name not in TUNABLE:
            raise CommandError(f"cannot tune {name!r}: one of {', '.join(TUNABLE)} (read at retrieval time)")
        try:
            parsed = [TUNABLE[name](v.strip()) for v in values.split(",") if v.strip()]
        except (ValueError, KeyError) as error:
            raise CommandError(f"bad value in {spec!r}: {error}") from error
        if not parsed:
            raise CommandError(f"no values in {spec!r}")
        axes.append([(name, value) for value in parsed])
    if not axes:
        raise CommandError("give at least one --grid NAME=v1,v2")
    return [tuple(combination) for combination in itertools.product(*axes)]


def label(combination: Combination) -> str:
    return " ".join(f"{name.removeprefix('RETRIEVAL_')}={value}" for name, value in combination)


class Command(BaseCommand):
    help = "Choose retrieval settings on LoCoMo by leave-one-conversation-out."

    def add_arguments(self, parser):
        parser.add_argument("--grid", action="append", default=[], help="NAME=v1,v2 (repeat for more settings)")
        parser.add_argument("--file", default=str(DEV_FILE), help="a LoCoMo JSON file (default: the dev split)")
        parser.add_argument("--samples", nargs="*", default=None, help="sample ids (default: all in the file)")
        parser.add_argument("--k", type=int, default=10, choices=KS, help="recall@k to choose by")
        parser.add_argument("--no-llm", action="store_true", help="no LLM: no promotion to long-term")
        parser.add_argument("--limit-pages", type=int, default=None, help="ingest only the first N pages")
        parser.add_argument("--out", default="var/tune", help="folder for tune.md and tune.json")

    def handle(self, *args, grid, file, samples, k, no_llm, limit_pages, out, **options):
        combinations = parse_grid(grid)
        chosen = chosen_samples(file, samples)
        if len(chosen) < 2:
            raise CommandError("leave-one-out needs at least two conversations")
        llm = None if no_llm else get_llm()
        started = time.perf_counter()
        progress = ProgressBar(self.stderr)
        table: dict[str, dict[str, Score]] = {label(c): {} for c in combinations}
        for sample in chosen:
            space, pages, _ = ingest_for_evaluation(sample, llm=llm, limit=limit_pages, progress=progress)
            ingested = {turn for page in pages for turn in page.dia_ids}
            questions = [
                (qa["question"], evidence)
                for qa in sample["qa"]
                if int(qa["category"]) in CATEGORIES and (evidence := clean_evidence(qa.get("evidence", []), ingested))
            ]
            turns = page_turn_ids(pages)
            for number, combination in enumerate(combinations, start=1):
                with override_settings(MEMORYOS={**settings.MEMORYOS, **dict(combination)}):
                    recall = sum(
                        evidence_recall(evidence, memory_ranking(space, question, turns, max(KS)), k)
                        for question, evidence in questions
                    )
                table[label(combination)][sample["sample_id"]] = Score(recall, len(questions))
                progress(f"{sample['sample_id']} settings", number, len(combinations))

        folds = leave_one_out(table)
        report = {
            "command": "manage.py tune_locomo " + shlex.join(sys.argv[2:]),
            "k": k,
            "llm": llm.name if llm is not None else "none (no promotion)",
            "seconds": time.perf_counter() - started,
            "recall": {s: {c: score.mean for c, score in row.items()} for s, row in table.items()},
            "questions": {c: score.n for c, score in next(iter(table.values())).items()},
            "folds": [fold.__dict__ for fold in folds],
            "held_out_mean": held_out_mean(table, folds),
            "chosen_on_all": best_setting(table, [s["sample_id"] for s in chosen]),
        }
        text = markdown(report, table)
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "tune.md").write_text(text, encoding="utf-8")
        (folder / "tune.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        self.stdout.write(text)
        self.stdout.write(f"wrote {folder / 'tune.md'}, {folder / 'tune.json'}")


def markdown(report: dict, table: dict[str, dict[str, Score]]) -> str:
    k = report["k"]
    conversations = list(report["questions"])
    lines = [
        f"# Leave-one-conversation-out: recall@{k} of the memory, categories 1-4",
        "",
        f"Command: `{report['command']}`; LLM: {report['llm']}; {report['seconds']:.0f} s.",
        "",
        "| setting | " + " | ".join(conversations) + " | all |",
        "| --- |" + " --- |" * (len(conversations) + 1),
    ]
    for setting, row in table.items():
        pooled = Score(sum(s.total for s in row.values()), sum(s.n for s in row.values()))
        lines.append(
            f"| {setting} | " + " | ".join(f"{row[c].mean:.3f}" for c in conversations) + f" | {pooled.mean:.3f} |"
        )
    lines += [
        "",
        f"Questions: {', '.join(f'{c} {n}' for c, n in report['questions'].items())}.",
        "",
        "| left out | chosen on the others | its recall there | its recall on the one left out |",
        "| --- | --- | --- | --- |",
    ]
    held = [fold["held_out_score"] for fold in report["folds"]]
    for fold in report["folds"]:
        lines.append(
            f"| {fold['held_out']} | {fold['chosen']} | {fold['chosen_on_others']:.3f} | {fold['held_out_score']:.3f} |"
        )
    lines += [
        "",
        f"Held out, pooled by question: **{report['held_out_mean']:.3f}** (conversations {min(held):.3f} to "
        f"{max(held):.3f}); chosen on all {len(conversations)}: {report['chosen_on_all']}.",
        "",
    ]
    return "\n".join(lines)
