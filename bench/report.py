"""The evaluation's report: figures per method and category, as JSON, a markdown table and a PNG chart.

Recall is averaged over questions that have evidence; "1-4" pools categories 1-4 (category 5,
adversarial, is reported apart, as LoCoMo's README asks). Pure functions except the two writers.
"""

import json
import platform
from dataclasses import asdict
from pathlib import Path
from statistics import mean
from typing import Any

from bench.locomo_run import MEMORY, SampleResult
from bench.metrics import bleu1, evidence_recall, locomo_answer_score
from memory_engine.formats.locomo import CATEGORY_NAMES

GROUPS: list[tuple[str, tuple[int, ...]]] = [
    *((f"{c} {CATEGORY_NAMES[c]}", (c,)) for c in (1, 2, 3, 4)),
    ("1-4 all", (1, 2, 3, 4)),
    ("5 adversarial", (5,)),
]


def _mean(values: list[float]) -> float | None:
    return round(mean(values), 4) if values else None


def summarise(samples: list[SampleResult], ks: tuple[int, ...]) -> dict[str, Any]:
    """Figures per method and per category group: recall@k, tokens of the top-k turns, the memory's
    context tokens, and (where answers exist) LoCoMo F1 and BLEU-1."""
    questions = [q for s in samples for q in s.questions]
    methods = list(questions[0].ranked) if questions else []
    answered_methods = sorted({m for q in questions for m in q.answers})
    out: dict[str, Any] = {"questions": len(questions), "recall": {}, "turn_tokens": {}, "answers": {}}
    for method in methods:
        out["recall"][method] = {}
        out["turn_tokens"][method] = {}
        for group, categories in GROUPS:
            chosen = [q for q in questions if q.category in categories and q.evidence]
            out["recall"][method][group] = {
                "n": len(chosen),
                **{f"@{k}": _mean([evidence_recall(q.evidence, q.ranked[method], k) for q in chosen]) for k in ks},
            }
        pooled = [q for q in questions if q.category in (1, 2, 3, 4)]
        out["turn_tokens"][method] = {f"@{k}": _mean([q.turn_tokens[method][k] for q in pooled]) for k in ks}
    out["memory_context_tokens"] = _mean([q.memory_context_tokens for q in questions])
    out["context_recall"] = {}
    for group, categories in GROUPS:
        chosen = [q for q in questions if q.category in categories and q.evidence]
        out["context_recall"][group] = {
            "n": len(chosen),
            "recall": _mean([len(set(q.evidence) & set(q.context_turns)) / len(set(q.evidence)) for q in chosen]),
            "turns": _mean([len(q.context_turns) for q in chosen]),
        }
    out["curve"] = curve_summary(questions)
    for method in answered_methods:
        out["answers"][method] = {}
        for group, categories in GROUPS:
            chosen = [q for q in questions if q.category in categories and method in q.answers]
            out["answers"][method][group] = {
                "n": len(chosen),
                "f1": _mean([locomo_answer_score(q.answers[method], q.answer, q.category) for q in chosen]),
                "bleu1": _mean([bleu1(q.answers[method], q.answer) for q in chosen if q.category != 5]),
            }
    return out


def curve_summary(questions: list) -> dict[str, dict[int, dict[str, float | None]]]:
    """method -> budget -> the context's mean tokens and the share of the evidence it showed, per category
    group (1-4 and each of them), over the questions with evidence."""
    out: dict[str, dict[int, dict[str, float | None]]] = {}
    with_curve = [q for q in questions if q.curve and q.evidence]
    for method, by_budget in (with_curve[0].curve if with_curve else {}).items():
        out[method] = {}
        for budget in by_budget:
            point: dict[str, float | None] = {
                "tokens": _mean([q.curve[method][budget][0] for q in with_curve if q.category in (1, 2, 3, 4)])
            }
            for group, categories in GROUPS:
                chosen = [q for q in with_curve if q.category in categories]
                point[group] = _mean([q.curve[method][budget][1] / len(set(q.evidence)) for q in chosen])
            out[method][budget] = point
    return out


def curve_markdown(curve: dict) -> list[str]:
    """The curve as a table: a row a budget, each method's evidence shown (1-4) and its mean tokens."""
    if not curve:
        return []
    methods = list(curve)
    lines = [
        "## Evidence in the context against its tokens (categories 1-4)",
        "",
        "The share of a question's evidence turns its prompt context shows, and the tokens that context "
        "takes (mean), at each budget: the memory's context packed as a chat's is (short-term, profile, "
        "pages, knowledge), the plain retrievers' first turns that fit.",
        "",
        "| budget | " + " | ".join(methods) + " |",
        "| --- |" + " --- |" * len(methods),
    ]
    for budget in curve[methods[0]]:
        cells = [f"{_cell(curve[m][budget]['1-4 all'])} ({curve[m][budget]['tokens']:.0f} tok)" for m in methods]
        lines.append(f"| {budget} | " + " | ".join(cells) + " |")
    groups = [g for g, _ in GROUPS if not g.startswith("5")]
    lines += ["", "By category, the memory's context:", ""]
    lines += ["| budget | " + " | ".join(groups) + " |", "| --- |" + " --- |" * len(groups)]
    memory = curve.get(MEMORY, {})
    for budget, point in memory.items():
        lines.append(f"| {budget} | " + " | ".join(_cell(point[g]) for g in groups) + " |")
    return [*lines, ""]


def machine() -> dict[str, str]:
    import os

    return {
        "platform": platform.platform(),
        "python": platform.python_version(),
        "cpus": str(os.cpu_count()),
        "processor": platform.processor() or platform.machine(),
    }


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _kept_note(meta: dict) -> str:
    kept = meta.get("kept_from_earlier_runs") or []
    return f" ({', '.join(kept)} kept from an earlier run of the same key)" if kept else ""


def markdown(summary: dict[str, Any], samples: list[SampleResult], ks: tuple[int, ...], meta: dict) -> str:
    """A readable report: what ran, recall tables per k, tokens, answer scores and ingestion costs."""
    lines = [
        "# LoCoMo evaluation",
        "",
        f"Command: `{meta['command']}`  ",
        f"File: `{meta['file']}`; samples: {', '.join(s.sample_id for s in samples)}; "
        f"questions: {summary['questions']}; LLM: {meta['llm']}; "
        f"{meta['seconds']:.0f} s of evaluation{_kept_note(meta)}.  ",
        "Retrieval settings: " + ", ".join(f"{k}={v}" for k, v in meta.get("retrieval", {}).items()) + ".",
        "",
    ]
    groups = [g for g, _ in GROUPS]
    for k in ks:
        lines += [f"## Evidence recall@{k} (distinct dialogue turns)", ""]
        lines += ["| method | " + " | ".join(groups) + " |", "| --- |" + " --- |" * len(groups)]
        for method, by_group in summary["recall"].items():
            name = f"**{method}**" if method == MEMORY else method
            lines.append(f"| {name} | " + " | ".join(_cell(by_group[g][f"@{k}"]) for g in groups) + " |")
        lines.append("")
    counts = next(iter(summary["recall"].values()), {})
    lines.append("Questions with evidence: " + ", ".join(f"{g} {counts[g]['n']}" for g in groups) + ".")
    lines += ["", "## Context tokens per question (categories 1-4)", ""]
    lines += ["| method | " + " | ".join(f"top {k} turns" for k in ks) + " |", "| --- |" + " --- |" * len(ks)]
    for method, by_k in summary["turn_tokens"].items():
        lines.append(f"| {method} | " + " | ".join(f"{by_k[f'@{k}']:.0f}" for k in ks) + " |")
    lines += [
        "",
        f"The memory's whole default prompt context (short-term, profile, knowledge, pages; a budget of "
        f"{meta.get('context_token_budget', '?')} tokens) averaged {summary['memory_context_tokens']:.0f} tokens "
        "per question. The evidence it shows (turns of its pages, short-term included, and the turns its "
        "knowledge came from):",
        "",
        "| | " + " | ".join(groups) + " |",
        "| --- |" + " --- |" * len(groups),
        "| evidence recall in the context | "
        + " | ".join(_cell(summary["context_recall"][g]["recall"]) for g in groups)
        + " |",
        "| dialogue turns shown | "
        + " | ".join(f"{summary['context_recall'][g]['turns'] or 0:.1f}" for g in groups)
        + " |",
        "",
    ]
    lines += curve_markdown(summary.get("curve", {}))
    if summary["answers"]:
        lines += ["## Answers: LoCoMo F1 (category 5: share answered 'not mentioned') and BLEU-1", ""]
        lines += ["| method | " + " | ".join(groups) + " |", "| --- |" + " --- |" * len(groups)]
        for method, by_group in summary["answers"].items():
            cells = [
                f"{_cell(by_group[g]['f1'])} / {_cell(by_group[g]['bleu1'])} (n={by_group[g]['n']})" for g in groups
            ]
            lines.append(f"| {method} | " + " | ".join(cells) + " |")
        lines.append("")
    lines += ["## Ingestion through the engine", ""]
    lines += [
        "| sample | pages | turns | LLM calls | calls/turn | prompt tok | completion tok | rejected | errors | "
        "seconds | short/mid/archived pages | sessions | user / assistant knowledge |",
        "| --- |" + " --- |" * 12,
    ]
    for s in samples:
        i = s.ingest
        lines.append(
            f"| {s.sample_id} | {s.pages} | {s.dialogue_turns} | {i.llm_calls} | "
            f"{i.llm_calls / max(s.dialogue_turns, 1):.3f} | "
            f"{i.prompt_tokens} | {i.completion_tokens} | {i.items_rejected} | {len(i.errors)} | {i.seconds:.0f} | "
            f"{s.tiers.get('short', 0)}/{s.tiers.get('mid', 0)}/{s.tiers.get('archived', 0)} | {s.sessions} | "
            f"{s.knowledge.get('user_knowledge', 0)} / {s.knowledge.get('assistant_knowledge', 0)} |"
        )
    return "\n".join(lines) + "\n"


def write_json(path: Path, summary: dict, samples: list[SampleResult], meta: dict) -> None:
    payload = {"meta": meta, "machine": machine(), "summary": summary, "samples": [asdict(s) for s in samples]}
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def write_chart(path: Path, summary: dict, k: int = 10) -> None:
    """A grouped bar chart: recall@k per category group, one bar per method."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    groups = [g for g, _ in GROUPS if not g.startswith("5")]
    methods = list(summary["recall"])
    width = 0.8 / max(len(methods), 1)
    fig, ax = plt.subplots(figsize=(9, 4.5), dpi=110)
    for i, method in enumerate(methods):
        values = [summary["recall"][method][g][f"@{k}"] or 0.0 for g in groups]
        positions = [x + (i - (len(methods) - 1) / 2) * width for x in range(len(groups))]
        bars = ax.bar(positions, values, width, label=method)
        if method == MEMORY:
            for bar in bars:
                bar.set_edgecolor("black")
    ax.set_xticks(range(len(groups)), groups)
    ax.set_ylim(0, 1)
    ax.set_ylabel(f"evidence recall@{k} (turns)")
    ax.set_title(f"LoCoMo evidence recall@{k}: memory vs plain retrievers")
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def write_curve_chart(path: Path, curve: dict) -> None:
    """Evidence shown (categories 1-4) against the context's mean tokens, a line a method, a point a budget."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7.5, 4.5), dpi=110)
    for method, by_budget in curve.items():
        points = sorted((p["tokens"] or 0.0, p["1-4 all"] or 0.0) for p in by_budget.values())
        ax.plot(
            [x for x, _ in points],
            [y for _, y in points],
            marker="o",
            label=method,
            linewidth=2.5 if method == MEMORY else 1.5,
        )
    ax.set_xscale("log")
    budgets = sorted({int(b) for by_budget in curve.values() for b in by_budget})
    ax.set_xticks(budgets, [f"{b:,}" for b in budgets])
    ax.minorticks_off()
    ax.set_xlabel("context tokens (mean; budgets 250 to 4,000)")
    ax.set_ylabel("share of the evidence shown")
    ax.set_ylim(0, 1)
    ax.set_title("LoCoMo: evidence in the context against its size")
    ax.legend(loc="lower right", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
