"""Evaluate the memory on LoCoMo beside plain baselines (see bench/).

    manage.py evaluate_locomo                          # the whole dev split, offline stack
    manage.py evaluate_locomo --samples conv-26 --answer --answer-limit 50
    manage.py evaluate_locomo --limit-pages 40 --limit-questions 30 --no-llm   # a quick smoke run

Writes <out>/locomo.json (every question, every ranking), <out>/locomo.md (the tables),
<out>/locomo.png (recall@10 per category and method) and <out>/locomo-curve.png (the evidence a context
shows against its tokens, budgets 250 to 4,000), and prints the markdown. Deterministic given its
arguments: retrieval during the questions does not count hits, and the LLM answers at temperature 0.

Each conversation's results are written as soon as it is done (<out>/samples/), and the running recall is
printed; run the same command again after an interruption and it resumes: a conversation already done
with the same data, arguments, settings and code is taken as it is (bench/locomo_resume.py). --fresh
computes everything again. --reuse keeps each conversation's space from an earlier run when it holds every
page (for trying what retrieval alone changes: the storing settings must be the same).
"""

import shlex
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from bench import locomo_resume, report
from bench.locomo_run import KS, MEMORY, SampleResult, chosen_samples, evaluate_sample
from bench.progress import ProgressBar
from memory_engine.config import memory_settings
from memory_engine.llm import get_llm


class Command(BaseCommand):
    help = "Ingest LoCoMo conversations through the engine, ask every question, compare with plain baselines."

    def add_arguments(self, parser):
        parser.add_argument(
            "--file",
            default=str(memory_settings().locomo_file),
            help="a LoCoMo JSON file (default: MEMORYOS_LOCOMO_FILE)",
        )
        parser.add_argument("--samples", nargs="*", default=None, help="sample ids (default: all in the file)")
        parser.add_argument("--out", default="var/eval", help="folder for locomo.json, locomo.md, locomo.png")
        parser.add_argument("--limit-pages", type=int, default=None, help="ingest only the first N pages")
        parser.add_argument("--limit-questions", type=int, default=None, help="ask only the first N questions")
        parser.add_argument("--no-llm", action="store_true", help="no LLM: no promotion to long-term, no answers")
        parser.add_argument("--answer", action="store_true", help="answer questions with the LLM and score them")
        parser.add_argument(
            "--answer-limit",
            type=int,
            default=None,
            help="answer only N questions per sample, spread over its categories",
        )
        parser.add_argument(
            "--full-context-tokens",
            type=int,
            default=None,
            help="token cap of the full-conversation baseline (default: 3000 for the offline LLM, else none)",
        )
        parser.add_argument(
            "--fresh", action="store_true", help="compute every conversation again, even one done before"
        )
        parser.add_argument(
            "--reuse", action="store_true", help="keep a conversation's space ingested before (retrieval only)"
        )

    def handle(
        self,
        *args,
        file,
        samples,
        out,
        limit_pages,
        limit_questions,
        no_llm,
        answer,
        answer_limit,
        full_context_tokens,
        fresh,
        reuse,
        **options,
    ):
        if answer and no_llm:
            raise CommandError("--answer needs an LLM; drop --no-llm")
        chosen = chosen_samples(file, samples)
        llm = None if no_llm else get_llm()
        if full_context_tokens is None:
            full_context_tokens = 3000 if llm is not None and llm.weak else 10**7

        started = time.perf_counter()
        folder = Path(out)
        arguments = {
            "limit_pages": limit_pages,
            "limit_questions": limit_questions,
            "llm": llm.name if llm is not None else None,
            "answer": answer,
            "answer_limit": answer_limit,
            "full_context_tokens": full_context_tokens,
            "reuse": reuse,
        }
        code = locomo_resume.code_version()
        results: list[SampleResult] = []
        kept_ids, sample_seconds = [], 0.0
        for sample in chosen:
            key = locomo_resume.run_key(sample, arguments, code)
            kept = None if fresh else locomo_resume.load(folder, sample["sample_id"], key)
            if kept is not None:
                result, seconds = kept
                how = f"kept from an earlier run of the same key ({seconds:.0f} s then)"
                kept_ids.append(sample["sample_id"])
            else:
                began = time.perf_counter()
                result = evaluate_sample(
                    sample,
                    llm=llm,
                    answer=answer,
                    answer_limit=answer_limit,
                    full_context_tokens=full_context_tokens,
                    limit_pages=limit_pages,
                    limit_questions=limit_questions,
                    progress=ProgressBar(self.stderr),
                    reuse=reuse,
                )
                seconds = time.perf_counter() - began
                locomo_resume.save(folder, result, key, seconds)
                how = f"done in {seconds:.0f} s"
            results.append(result)
            sample_seconds += seconds
            self.stderr.write(f"{sample['sample_id']}: {how}; {running_recall([result])}")
            self.stderr.write(f"  so far ({len(results)} of {len(chosen)} conversations): {running_recall(results)}")
        summary = report.summarise(results, KS)
        meta = {
            "command": "manage.py evaluate_locomo " + shlex.join(sys.argv[2:]),
            "file": file,
            "llm": llm.name if llm is not None else "none (no promotion, no answers)",
            "seconds": sample_seconds,  # the conversations' own times, those kept from earlier runs too
            "seconds_this_run": time.perf_counter() - started,
            "kept_from_earlier_runs": kept_ids,
            "full_context_tokens": full_context_tokens,
            "context_token_budget": memory_settings().context_token_budget,
            "retrieval": {
                name: settings.MEMORYOS[name]
                for name in (
                    "RETRIEVAL_LEXICAL_WEIGHT",
                    "RETRIEVAL_CHAIN_WEIGHT",
                    "RETRIEVAL_IGNORE_NAMES",
                    "RETRIEVAL_DATES",
                    "RETRIEVAL_RERANKER_WEIGHT",
                    "RERANKER",
                )
            },
        }
        folder.mkdir(parents=True, exist_ok=True)
        text = report.markdown(summary, results, KS, meta)
        (folder / "locomo.md").write_text(text, encoding="utf-8")
        report.write_json(folder / "locomo.json", summary, results, meta)
        report.write_chart(folder / "locomo.png", summary)
        report.write_curve_chart(folder / "locomo-curve.png", summary["curve"])
        self.stdout.write(text)
        self.stdout.write(f"wrote {folder / 'locomo.md'}, {folder / 'locomo.json'}, {folder}/locomo*.png")


def running_recall(results: list[SampleResult], k: int = 10) -> str:
    """Recall@k on categories 1-4 of the memory and the plain retrievers over `results`, on one line."""
    recall = report.summarise(results, KS)["recall"]
    if not recall:
        return "no questions"
    order = [MEMORY, *(m for m in recall if m != MEMORY)]
    n = recall[MEMORY]["1-4 all"]["n"]
    cells = ", ".join(f"{m} {recall[m]['1-4 all'][f'@{k}'] or 0:.3f}" for m in order)
    return f"recall@{k} (1-4, {n} questions): {cells}"
