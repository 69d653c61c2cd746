"""Measure ideas for what the model sees on LoCoMo, beside the memory as it ships (bench/ablation.py).

    manage.py ablate_locomo                                 # the dev split: ingest (no LLM), then every idea
    manage.py ablate_locomo --reuse                         # the spaces a previous run left, as they are
    manage.py ablate_locomo --samples conv-26 conv-30 --limit-pages 60   # a quick smoke run

Prints and writes <out>/ablation.md: a row an idea (recall@10, the evidence a context of 1,000 / 1,500 /
2,000 tokens shows, its tokens at 1,500, the settings each held-out fold chose), and where the evidence ranks
in the memory's order. Each conversation is ingested as evaluate_locomo --no-llm ingests it, into the same
spaces (user "locomo-eval-<id>"), so --reuse can take the spaces either command left.
"""

import shlex
import sys
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from bench import ablation
from bench.locomo_run import chosen_samples, ingest_for_evaluation
from bench.progress import ProgressBar
from memory_engine.config import memory_settings
from memory_engine.formats.locomo import clean_evidence, iter_pages
from memory_engine.models import MemorySpace
from memory_engine.services.comparison import dialogue_ids

CATEGORIES = (1, 2, 3, 4)
CATEGORY_NAMES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


class Command(BaseCommand):
    help = "Measure retrieval and packing ideas on LoCoMo by leave-one-conversation-out, without building them."

    def add_arguments(self, parser):
        parser.add_argument(
            "--file",
            default=str(memory_settings().locomo_file),
            help="a LoCoMo JSON file (default: MEMORYOS_LOCOMO_FILE)",
        )
        parser.add_argument("--samples", nargs="*", default=None, help="sample ids (default: all in the file)")
        parser.add_argument("--limit-pages", type=int, default=None, help="ingest only the first N pages")
        parser.add_argument("--reuse", action="store_true", help="use the spaces a previous run left; ingest none")
        parser.add_argument("--out", default="var/ablation", help="folder for ablation.md")

    def handle(self, *args, file, samples, limit_pages, reuse, out, **options):
        chosen = chosen_samples(file, samples)
        if len(chosen) < 2:
            raise CommandError("leave-one-out needs at least two conversations")
        started = time.perf_counter()
        progress = ProgressBar(self.stderr)
        conversations = []
        for sample in chosen:
            if reuse:
                user_id = f"locomo-eval-{sample['sample_id']}".lower()
                space = MemorySpace.objects.filter(user__external_id=user_id).first()
                if space is None:
                    raise CommandError(f"no space for {sample['sample_id']} to reuse: run without --reuse first")
                pages = list(iter_pages(sample))
            else:
                space, pages, _ = ingest_for_evaluation(sample, llm=None, limit=limit_pages, progress=progress)
            ingested = {turn for page in pages for turn in page.dia_ids}
            questions = [
                (qa["question"], int(qa["category"]), evidence)
                for qa in sample["qa"]
                if int(qa["category"]) in CATEGORIES and (evidence := clean_evidence(qa.get("evidence", []), ingested))
            ]
            self.stderr.write(f"{sample['sample_id']}: reading the features of {len(questions)} questions")
            conversations.append(ablation.read_conversation(space, sample["sample_id"], questions, dialogue_ids(space)))
        cfg = memory_settings()
        results = []
        for idea in ablation.ideas(cfg.top_pages, cfg.fill_pages):
            self.stderr.write(f"measuring: {idea.name}")
            results.append(ablation.measure(conversations, idea))
        lines = report(results, ablation.evidence_ranks(conversations), conversations)
        lines.append(
            f"\n`{shlex.join(['manage.py', *sys.argv[1:]])}`, {time.perf_counter() - started:.0f} s, "
            f"{sum(len(c.questions) for c in conversations)} questions."
        )
        text = "\n".join(lines) + "\n"
        Path(out).mkdir(parents=True, exist_ok=True)
        (Path(out) / "ablation.md").write_text(text)
        self.stdout.write(text)


def report(results: list[ablation.Result], ranks: dict[str, dict[int, int]], conversations: list) -> list[str]:
    budgets = ablation.BUDGETS
    lines = [
        "## Ideas for what the model sees (LoCoMo, categories 1-4, no LLM)",
        "",
        f"| idea | recall@{ablation.K} | "
        + " | ".join(f"shown at {b:,}" for b in budgets)
        + f" | tokens at {ablation.CHOOSE_AT:,} | multi-hop recall@{ablation.K} | setting (each fold) |",
        "| --- " * (len(budgets) + 5) + "|",
    ]
    for result in results:
        p = result.pooled
        multi_n, multi = p.by_category.get(1, [0, 0.0])
        chosen = sorted(set(result.chosen))
        lines.append(
            f"| {result.idea.name} | {p.recall / p.n:.3f} | "
            + " | ".join(f"{p.shown[b] / p.n:.3f}" for b in budgets)
            + f" | {p.tokens[ablation.CHOOSE_AT] / p.n:,.0f} | {multi / max(multi_n, 1):.3f} | "
            + ("; ".join(result.chosen) if len(chosen) > 1 else chosen[0])
            + " |"
        )
    lines += [
        "",
        "Where each evidence turn's page ranks in the memory's order (turns):",
        "",
        "| rank | " + " | ".join(CATEGORY_NAMES[c] for c in CATEGORIES) + " | all |",
        "| --- " * (len(CATEGORIES) + 2) + "|",
    ]
    for band, by_category in ranks.items():
        counts = [by_category.get(c, 0) for c in CATEGORIES]
        lines.append(f"| {band} | " + " | ".join(str(n) for n in counts) + f" | {sum(counts)} |")
    lines.append(f"\nConversations: {', '.join(c.sample_id for c in conversations)}.")
    return lines
