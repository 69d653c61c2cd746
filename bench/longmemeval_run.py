"""The LongMemEval evaluation (Wu et al., ICLR 2025): a person talking to an assistant, one history a question.

Each question's history (about 50 sessions, 500 turns) is read as a LoCoMo sample (formats/longmemeval.py)
and ingested into a fresh space of its own as evaluate_locomo ingests (bench/locomo_run.py, no LLM: the
person's turn and the assistant's reply after it make a page); then the question is asked, on the day it
is asked (`question_date`: what the memory takes for now), and ranked by the memory and by the plain
retrievers over every turn (bench/baselines.py).

Figures, as the paper reports them, for the questions with evidence (abstention questions, id ending in
"_abs", are left out of retrieval figures, as the paper does):
- turn level: recall_any@k (some evidence turn among the first k distinct turns), recall_all@k (every one)
  and NDCG@k (binary relevance) of the `has_answer` turns;
- session level: the same of `answer_session_ids`, the sessions ranked by their first turn in the ranking;
- the evidence a prompt context of each budget shows (comparison.evidence_curve for the memory, the
  retrievers' first turns that fit for them: locomo_run.plain_curve), as for LoCoMo.
The memory's ranking is what it places in a context, best first (locomo_run.memory_ranking).
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.baselines import BM25Turns, DenseTurns, TurnRanker
from bench.locomo_run import BUDGETS, MEMORY, ingest_conversation, memory_ranking, plain_curve
from memory_engine.engine.retriever import estimate_tokens
from memory_engine.formats.locomo import iter_pages, iter_turns, turn_document
from memory_engine.formats.longmemeval import as_sample
from memory_engine.models import MemorySpace
from memory_engine.services.comparison import dialogue_ids, evidence_curve

KS = (5, 10)
DEPTH = 50  # how many turns of each ranking are kept: sessions at @10 need more than 10 turns
ASSISTANT_ID = "lme-eval"
Progress = Callable[[str, int, int], None]


@dataclass
class QuestionResult:
    question_id: str
    question_type: str
    question: str
    answer: str
    abstention: bool
    evidence: list[str]  # the has_answer turns
    answer_sessions: list[int]  # session numbers (in date order, from 1)
    ranked: dict[str, list[str]]  # method -> turn ids, best first (DEPTH)
    curve: dict[str, dict[int, list[int]]] = field(default_factory=dict)  # method -> budget -> [tokens, shown]
    pages: int = 0
    turns: int = 0
    seconds: float = 0.0


def session_of(turn: str) -> int:
    """ "D12:3" -> 12. Pure."""
    return int(turn[1:].partition(":")[0])


def sessions_ranked(turns: Sequence[str]) -> list[int]:
    """The sessions of a turn ranking, each at the place of its first turn. Pure."""
    seen: list[int] = []
    for turn in turns:
        number = session_of(turn)
        if number not in seen:
            seen.append(number)
    return seen


def recall_any(wanted: Sequence, ranked: Sequence, k: int) -> float:
    return float(bool(set(wanted) & set(ranked[:k])))


def recall_all(wanted: Sequence, ranked: Sequence, k: int) -> float:
    return float(set(wanted) <= set(ranked[:k]))


def ndcg(wanted: Sequence, ranked: Sequence, k: int) -> float:
    """NDCG@k with binary relevance. Pure."""
    relevant = set(wanted)
    gain = sum(1 / math.log2(place + 2) for place, item in enumerate(ranked[:k]) if item in relevant)
    ideal = sum(1 / math.log2(place + 2) for place in range(min(k, len(relevant))))
    return gain / ideal if ideal else 0.0


def figures(result: QuestionResult, method: str, ks: tuple[int, ...] = KS) -> dict[str, float]:
    """The paper's figures of one method on one question (it must have evidence). Pure."""
    turns = result.ranked[method]
    sessions = sessions_ranked(turns)
    out = {}
    for k in ks:
        out[f"turn_any@{k}"] = recall_any(result.evidence, turns, k)
        out[f"turn_all@{k}"] = recall_all(result.evidence, turns, k)
        out[f"turn_ndcg@{k}"] = ndcg(result.evidence, turns, k)
        out[f"session_any@{k}"] = recall_any(result.answer_sessions, sessions, k)
        out[f"session_all@{k}"] = recall_all(result.answer_sessions, sessions, k)
        out[f"session_ndcg@{k}"] = ndcg(result.answer_sessions, sessions, k)
    return out


def lme_space(sample: dict[str, Any], *, reuse: bool, progress: Progress | None) -> tuple[MemorySpace, int]:
    """The question's space with its history ingested (no LLM), and its page count. With `reuse`, a space
    of this question already holding every page is taken as it is (for trying what retrieval alone
    changes: the storing settings must be the same)."""
    pages = list(iter_pages(sample))
    user_id = f"lme-{sample['sample_id']}".lower()
    if reuse:
        found = MemorySpace.objects.filter(user__external_id=user_id, assistant__external_id=ASSISTANT_ID).first()
        if found is not None and found.last_seq == len(pages):
            return found, len(pages)
    space, pages, _ = ingest_conversation(
        sample, user_id=user_id, assistant_id=ASSISTANT_ID, llm=None, promote=False, progress=progress
    )
    return space, len(pages)


VECTORS = Path("var/lme-vectors")  # the dense baseline's turn vectors, kept for runs with `reuse`


def _dense_turns(question_id: str, turns: list, *, reuse: bool) -> DenseTurns:
    """The dense baseline over the turns; with `reuse`, their vectors from an earlier run when it kept them
    for the same turns (embedding 500 long turns is most of a question's time once its history is in)."""
    path = VECTORS / f"{question_id}.npy"
    if reuse and path.exists():
        vectors = np.load(path)
        if len(vectors) == len(turns):
            return DenseTurns(turns, vectors)
    ranker = DenseTurns(turns)
    VECTORS.mkdir(parents=True, exist_ok=True)
    np.save(path, ranker.vectors)
    return ranker


def evaluate_question(
    question: dict[str, Any], *, reuse: bool = False, dense: bool = True, progress: Progress | None = None
):
    """Ingest one question's history into its own space (replacing an earlier one unless `reuse`) and rank
    its turns with the memory and the plain retrievers (the dense one only with `dense`: embedding every
    turn is most of a question's time once its history is in). Changes the database."""
    sample = as_sample(question)
    space, page_count = lme_space(sample, reuse=reuse, progress=progress)
    qa = sample["qa"][0]
    turns = list(iter_turns(sample))
    now = datetime.fromisoformat(sample["question_date"])
    tokens_of = {t.dia_id: estimate_tokens(turn_document(t)) for t in turns}
    rankers: list[TurnRanker] = [BM25Turns(turns)]
    if dense:
        rankers.append(_dense_turns(sample["sample_id"], turns, reuse=reuse))
    turn_ids = dialogue_ids(space)
    result = QuestionResult(
        question_id=sample["sample_id"],
        question_type=qa["category"],
        question=qa["question"],
        answer=qa["answer"],
        abstention=sample["abstention"],
        evidence=list(qa["evidence"]),
        answer_sessions=list(sample["answer_sessions"]),
        ranked={MEMORY: memory_ranking(space, qa["question"], turn_ids, DEPTH, now=now)},
        pages=page_count,
        turns=len(turns),
    )
    for ranker in rankers:
        whole = ranker.rank(qa["question"], len(turns))
        result.ranked[ranker.name] = whole[:DEPTH]
        if result.evidence:
            result.curve[ranker.name] = plain_curve(whole, tokens_of, result.evidence)
    if result.evidence:
        result.curve[MEMORY] = evidence_curve(space, qa["question"], result.evidence, turn_ids, now=now)
    return result


# --- the report ----------------------------------------------------------------------------------------


def _mean(values: Sequence[float]) -> float:
    return round(sum(values) / len(values), 3) if values else 0.0


def summarise(results: Sequence[QuestionResult]) -> dict:
    """method -> group ("all" and each type) -> figure -> mean, and method -> group -> budget -> the mean
    share of the evidence shown, over the questions with evidence. Pure."""
    scored = [r for r in results if r.evidence and not r.abstention]
    methods = list(scored[0].ranked) if scored else []
    groups = {"all": scored, **{t: [r for r in scored if r.question_type == t] for t in _types(scored)}}
    table: dict[str, Any] = {"questions": len(scored), "abstention": sum(r.abstention for r in results)}
    for method in methods:
        per_group = {}
        for name, chosen in groups.items():
            rows = [figures(r, method) for r in chosen]
            per_group[name] = {key: _mean([row[key] for row in rows]) for key in (rows[0] if rows else {})}
            per_group[name]["n"] = len(chosen)
            per_group[name]["curve"] = {
                budget: _mean([r.curve[method][budget][1] / len(r.evidence) for r in chosen]) for budget in BUDGETS
            }
            per_group[name]["tokens"] = {
                budget: round(sum(r.curve[method][budget][0] for r in chosen) / max(1, len(chosen)))
                for budget in BUDGETS
            }
        table[method] = per_group
    return table


def _types(results: Sequence[QuestionResult]) -> list[str]:
    return sorted({r.question_type for r in results})


def markdown(summary: dict) -> str:
    """The tables: the paper's figures by method, then the evidence in the context by budget and method,
    then the memory's and BM25's by question type."""
    methods = [m for m in summary if m not in ("questions", "abstention")]
    if not methods:
        return "No question with evidence.\n"
    lines = [
        f"{summary['questions']} questions with evidence ({summary['abstention']} abstention questions left out).",
        "",
        "| method | " + " | ".join(k for k in _figure_keys()) + " |",
        "| --- |" + " --- |" * len(_figure_keys()),
    ]
    for method in methods:
        row = summary[method]["all"]
        lines.append(f"| {method} | " + " | ".join(f"{row[k]:.3f}" for k in _figure_keys()) + " |")
    lines += ["", "Evidence turns shown in a context of each budget (tokens), all questions:", ""]
    lines += ["| method | " + " | ".join(str(b) for b in BUDGETS) + " |", "| --- |" + " --- |" * len(BUDGETS)]
    for method in methods:
        curve = summary[method]["all"]["curve"]
        lines.append(f"| {method} | " + " | ".join(f"{curve[b]:.3f}" for b in BUDGETS) + " |")
    types = [g for g in summary[methods[0]] if g != "all"]
    for method in methods:
        lines += ["", f"{method}, by question type: turn recall_all@10, then the evidence shown at each budget", ""]
        lines += [
            "| type | n | turn_all@10 | " + " | ".join(str(b) for b in BUDGETS) + " |",
            "| --- | --- | --- |" + " --- |" * len(BUDGETS),
        ]
        for group in types:
            row = summary[method][group]
            cells = " | ".join(f"{row['curve'][b]:.3f}" for b in BUDGETS)
            lines.append(f"| {group} | {row['n']} | {row['turn_all@10']:.3f} | {cells} |")
    return "\n".join(lines) + "\n"


def _figure_keys() -> list[str]:
    return [f"{level}_{kind}@{k}" for level in ("session", "turn") for k in KS for kind in ("any", "all", "ndcg")]
