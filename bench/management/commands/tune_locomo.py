"""Choose retrieval settings on LoCoMo by leave-one-conversation-out (bench/loo.py).

    manage.py tune_locomo --grid RETRIEVAL_LEXICAL_WEIGHT=0.3,0.5,0.7 --grid RETRIEVAL_CHAIN_WEIGHT=0,0.1,0.2
    manage.py tune_locomo --no-llm --grid RETRIEVAL_IGNORE_NAMES=true,false      # quicker: no promotion
    manage.py tune_locomo --no-llm --one-at-a-time --grid RETRIEVAL_DATES=false --grid RETRIEVAL_CHAIN_WEIGHT=0
                                                   # an ablation: the defaults, then each change on its own

Each conversation is ingested once, as evaluate_locomo ingests it (the settings tried here do not change
what is stored), then every question is ranked under every combination of the grid, and recall@k of the
memory on categories 1-4 is scored as evaluate_locomo scores it. For each conversation, the combination
best on the other conversations is scored on it. Prints and writes <out>/tune.md and <out>/tune.json:
every combination on every conversation, the folds, the held-out mean and its spread, and for each
combination recall@5/10/25 per category, pooled over the conversations. With --one-at-a-time the
combinations are the settings as they are, then each value of the grid changed on its own (an ablation
table) rather than every combination of the values.
"""

import itertools
import json
import shlex
import sys
import time
from contextlib import contextmanager
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.test.utils import override_settings

from bench.locomo_run import KS, chosen_samples, ingest_for_evaluation, memory_ranking
from bench.loo import Score, best_setting, held_out_mean, leave_one_out, pooled
from bench.progress import ProgressBar
from memory_engine.config import memory_settings
from memory_engine.formats.locomo import clean_evidence
from memory_engine.llm import get_llm
from memory_engine.models import MemorySpace
from memory_engine.services.comparison import dialogue_ids, evidence_recall
from memory_engine.services.spaces import PARAMETER_SETTINGS

# Settings read at retrieval time only, so one ingestion serves every value; each with its parser.
TUNABLE = {
    "RETRIEVAL_LEXICAL_WEIGHT": float,
    "RETRIEVAL_CHAIN_WEIGHT": float,
    "RETRIEVAL_IGNORE_NAMES": lambda text: {"true": True, "false": False}[text.lower()],
    "RETRIEVAL_DATES": lambda text: {"true": True, "false": False}[text.lower()],
    "RETRIEVAL_RERANKER_WEIGHT": float,  # with MEMORYOS_RERANKER naming a reranker
}
# A setting that is also a space's parameter is tried on the space (a space's own value wins over the
# setting, which only seeds new spaces).
SPACE_PARAMETER_OF = {setting.upper(): name for name, setting in PARAMETER_SETTINGS.items()}
CATEGORIES = (1, 2, 3, 4)

Combination = tuple[tuple[str, object], ...]


def parse_grid(specs: list[str], *, one_at_a_time: bool = False) -> list[Combination]:
    """["NAME=v1,v2", ...] -> every combination, in order; with `one_at_a_time`, the settings as they are
    (the empty combination) and then each value on its own. Raises CommandError for a bad spec."""
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
    if one_at_a_time:
        return [(), *[(change,) for axis in axes for change in axis]]
    return [tuple(combination) for combination in itertools.product(*axes)]


@contextmanager
def tried(space: MemorySpace, combination: Combination):
    """The settings of `combination` in force, and the space's parameters among them set on `space` (in
    memory only), until the block ends."""
    values = dict(combination)
    parameters = {SPACE_PARAMETER_OF[name]: value for name, value in values.items() if name in SPACE_PARAMETER_OF}
    before = {name: getattr(space, name) for name in parameters}
    with override_settings(MEMORYOS={**settings.MEMORYOS, **values}):
        try:
            for name, value in parameters.items():
                setattr(space, name, value)
            yield
        finally:
            for name, value in before.items():
                setattr(space, name, value)


def label(combination: Combination) -> str:
    return " ".join(f"{name.removeprefix('RETRIEVAL_')}={value}" for name, value in combination) or "as set"


class Command(BaseCommand):
    help = "Choose retrieval settings on LoCoMo by leave-one-conversation-out."

    def add_arguments(self, parser):
        parser.add_argument("--grid", action="append", default=[], help="NAME=v1,v2 (repeat for more settings)")
        parser.add_argument(
            "--file",
            default=str(memory_settings().locomo_file),
            help="a LoCoMo JSON file (default: MEMORYOS_LOCOMO_FILE)",
        )
        parser.add_argument("--samples", nargs="*", default=None, help="sample ids (default: all in the file)")
        parser.add_argument("--k", type=int, default=10, choices=KS, help="recall@k to choose by")
        parser.add_argument("--no-llm", action="store_true", help="no LLM: no promotion to long-term")
        parser.add_argument("--limit-pages", type=int, default=None, help="ingest only the first N pages")
        parser.add_argument("--out", default="var/tune", help="folder for tune.md and tune.json")
        parser.add_argument(
            "--one-at-a-time",
            action="store_true",
            help="the settings as they are, then each grid value on its own (an ablation), not every combination",
        )

    def handle(self, *args, grid, file, samples, k, no_llm, limit_pages, out, one_at_a_time, **options):
        combinations = parse_grid(grid, one_at_a_time=one_at_a_time)
        chosen = chosen_samples(file, samples)
        if len(chosen) < 2:
            raise CommandError("leave-one-out needs at least two conversations")
        llm = None if no_llm else get_llm()
        started = time.perf_counter()
        progress = ProgressBar(self.stderr)
        table: dict[str, dict[str, Score]] = {label(c): {} for c in combinations}
        # setting -> "category@k" -> recall summed over every conversation's questions
        by_category: dict[str, dict[str, Score]] = {label(c): {} for c in combinations}
        for sample in chosen:
            space, pages, _ = ingest_for_evaluation(sample, llm=llm, limit=limit_pages, progress=progress)
            ingested = {turn for page in pages for turn in page.dia_ids}
            questions = [
                (qa["question"], int(qa["category"]), evidence)
                for qa in sample["qa"]
                if int(qa["category"]) in CATEGORIES and (evidence := clean_evidence(qa.get("evidence", []), ingested))
            ]
            turns = dialogue_ids(space)
            for number, combination in enumerate(combinations, start=1):
                with tried(space, combination):
                    rankings = [memory_ranking(space, question, turns, max(KS)) for question, _, _ in questions]
                pairs = zip(questions, rankings, strict=True)
                recall = sum(evidence_recall(evidence, ranking, k) for (_, _, evidence), ranking in pairs)
                table[label(combination)][sample["sample_id"]] = Score(recall, len(questions))
                add_by_category(by_category[label(combination)], questions, rankings)
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
            "by_category": {s: {key: score.mean for key, score in row.items()} for s, row in by_category.items()},
        }
        text = markdown(report, table)
        folder = Path(out)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "tune.md").write_text(text, encoding="utf-8")
        (folder / "tune.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        self.stdout.write(text)
        self.stdout.write(f"wrote {folder / 'tune.md'}, {folder / 'tune.json'}")


def add_by_category(row: dict[str, Score], questions: list[tuple[str, int, list[str]]], rankings: list) -> None:
    """Adds each question's recall at every k to its category's sum and to all categories' ("all@k")."""
    for (_, category, evidence), ranking in zip(questions, rankings, strict=True):
        for k in KS:
            recall = Score(evidence_recall(evidence, ranking, k), 1)
            for key in (f"{category}@{k}", f"all@{k}"):
                row[key] = row.get(key, Score(0.0, 0)) + recall


CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


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
        cells = [f"{row[c].mean:.3f}" for c in conversations] + [f"{pooled(row, conversations).mean:.3f}"]
        lines.append(f"| {setting} | " + " | ".join(cells) + " |")
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
        f"Each setting's recall@{k} per category and recall@5/10/25 on categories 1-4, pooled over the conversations:",
        "",
        "| setting | "
        + " | ".join(f"{name}@{k}" for name in CATEGORY_NAMES.values())
        + " | "
        + " | ".join(f"1-4 @{each}" for each in KS)
        + " |",
        "| --- |" + " --- |" * (len(CATEGORY_NAMES) + len(KS)),
    ]
    for setting, row in report["by_category"].items():
        cells = [f"{row.get(f'{c}@{k}', 0.0):.3f}" for c in CATEGORY_NAMES] + [f"{row[f'all@{e}']:.3f}" for e in KS]
        lines.append(f"| {setting} | " + " | ".join(cells) + " |")
    lines.append("")
    return "\n".join(lines)
