"""The LoCoMo evaluation run: each conversation goes through the real engine, then every question is asked.

speaker_a speaks as the user and speaker_b as the assistant (as the reference's evaluation did): a
speaker_a turn and the speaker_b turn after it make one page, stored with `short_term.page_store` and
consolidated inline after each page (short-term -> mid-term -> long-term, the LLM promoting hot
sessions), exactly as a chat would be, only without a worker in between.

For each question every method ranks the conversation's dialogue turns:
- the memory: the items `retrieve` returns (mid-term pages and knowledge entries, best fused score
  first); a page places its one or two turns, a knowledge entry places the turn its statement came
  from. Short-term pages and the profile are always in the prompt whatever the question: they are not
  ranked, and neither counted against k nor credited;
- the plain baselines over all turns (baselines.py).
Recall@k counts the first k distinct turns of each ranking. With an LLM, each method's context also
answers the question briefly, and the answer is scored with LoCoMo's F1 and BLEU-1.

Retrieval here does not count hits (`count_hits=False`), so asking never changes the memory and the
result does not depend on the order of the questions.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.core.management.base import CommandError

from bench.baselines import BM25Turns, DenseTurns, LastTurns, TurnRanker
from memory_engine.engine.retriever import Item, Retrieval, estimate_tokens, retrieve
from memory_engine.formats.locomo import (
    LocomoPage,
    Turn,
    clean_evidence,
    iter_pages,
    iter_turns,
    load_samples,
    turn_document,
)
from memory_engine.interfaces.memoryos import MemoryOS
from memory_engine.llm import LLM, LLMError
from memory_engine.models import LongTermEntry, MemorySpace, Page
from memory_engine.services.comparison import (
    CURVE_BUDGETS,
    TurnIds,
    dialogue_ids,
    distinct_turns,
    evidence_curve,
    ranked_items,
)
from memory_engine.services.ingest import IngestCounters, TurnIn, ingest
from memory_engine.store import index

logger = logging.getLogger(__name__)

MEMORY = "MemoryOS"
FULL_CONVERSATION = "full conversation"
KS = (5, 10, 25)
ANSWER_K = 10  # the baselines answer from their top 10 turns
ASSISTANT_ID = "locomo-eval"
BUDGETS = CURVE_BUDGETS  # the curve: the evidence a prompt context shows against its tokens
Progress = Callable[[str, int, int], None]  # (label, done, total)


@dataclass
class QuestionResult:
    sample_id: str
    number: int
    category: int
    question: str
    answer: str
    evidence: list[str]
    ranked: dict[str, list[str]]  # method -> turn ids, best first
    turn_tokens: dict[str, dict[int, int]]  # method -> k -> tokens of its first k turns
    memory_context_tokens: int  # the memory's whole default prompt context for this question
    answers: dict[str, str] = field(default_factory=dict)
    context_turns: list[str] = field(default_factory=list)  # the turns that context shows, in its order
    # method -> budget -> [tokens its context used, evidence turns it showed] (evidence_curve, plain_curve)
    curve: dict[str, dict[int, list[int]]] = field(default_factory=dict)


@dataclass
class SampleResult:
    sample_id: str
    user: str
    assistant: str
    pages: int  # stored turns: a speaker_a turn and the speaker_b reply after it
    dialogue_turns: int
    ingest: IngestCounters
    questions: list[QuestionResult]
    tiers: dict[str, int]
    sessions: int
    knowledge: dict[str, int]


def ingest_conversation(
    sample: dict[str, Any],
    *,
    user_id: str,
    assistant_id: str,
    llm: LLM | None,
    promote: bool = True,
    limit: int | None = None,
    chunk_turns: int | None = None,
    progress: Progress | None = None,
    reuse: bool = False,
) -> tuple[MemorySpace, list[LocomoPage], IngestCounters]:
    """Ingest the sample's conversation (services.ingest, as an import does, in chunks of `chunk_turns`; 1 is
    turn by turn, as a chat) into a fresh space: an existing
    one of that user and assistant is deleted first, with its index files. A failed promotion is tried
    again at the next page rather than after the cooldown, so the figures do not depend on the speed of
    the machine. Returns the space, the pages in order (page seq i is pages[i - 1]) and the counters.
    Safe to repeat: each run starts over. With `reuse`, an existing space already holding every page is
    taken as it is, with empty counters (for trying what retrieval alone changes: the storing settings
    must be the same).
    """
    conversation = sample["conversation"]
    memory = MemoryOS(consolidate=False)
    memory.create_user(user_id, display_name=conversation["speaker_a"])
    memory.create_assistant(
        assistant_id, name=conversation["speaker_b"], persona=f"You are {conversation['speaker_b']}."
    )
    space = memory.space(user_id=user_id, assistant_id=assistant_id)
    pages = list(iter_pages(sample))[:limit]
    if reuse and space.last_seq == len(pages):
        return space, pages, IngestCounters()
    if space.last_seq:
        index.forget_space(space.pk, delete_files=True)
        space.delete()
        space = memory.space(user_id=user_id, assistant_id=assistant_id)

    turns = (TurnIn(p.user_input, p.agent_response, p.timestamp, {"dia_ids": p.dia_ids}) for p in pages)
    label = f"{sample['sample_id']} ingest pages"
    counters = ingest(
        space,
        turns,
        llm=llm,
        promotion=promote and llm is not None,
        retry_now=True,
        chunk_turns=chunk_turns,
        progress=(lambda n: progress(label, n, len(pages))) if progress else None,
    )
    space.refresh_from_db()
    return space, pages, counters


def chosen_samples(file: str, sample_ids: list[str] | None) -> list[dict[str, Any]]:
    """The samples of a LoCoMo file, or only those named. CommandError for an unreadable file or an id
    that is not in it."""
    try:
        samples = load_samples(file)
    except (OSError, ValueError) as error:
        raise CommandError(f"cannot read LoCoMo samples from {file}: {error}") from error
    if not sample_ids:
        return samples
    missing = set(sample_ids) - {s["sample_id"] for s in samples}
    if missing:
        raise CommandError(f"no sample(s) {', '.join(sorted(missing))} in {file}")
    return [s for s in samples if s["sample_id"] in sample_ids]


def ingest_for_evaluation(
    sample: dict[str, Any],
    *,
    llm: LLM | None,
    promote: bool = True,
    limit: int | None = None,
    progress: Progress | None = None,
    reuse: bool = False,
) -> tuple[MemorySpace, list[LocomoPage], IngestCounters]:
    """ingest_conversation into the evaluation's own space for this sample (user "locomo-eval-<id>")."""
    return ingest_conversation(
        sample,
        user_id=f"locomo-eval-{sample['sample_id']}".lower(),
        assistant_id=ASSISTANT_ID,
        llm=llm,
        promote=promote,
        limit=limit,
        progress=progress,
        reuse=reuse,
    )


def memory_ranking(
    space: MemorySpace, question: str, turn_ids: TurnIds, depth: int, *, now: datetime | None = None
) -> list[str]:
    """The turns the memory places in the context for `question` (asked at `now`), best first (see the module
    doc); `turn_ids` is comparison.dialogue_ids(space)."""
    return distinct_turns(ranked_items(space, question, depth, now=now), turn_ids)


def context_turns(retrieval: Retrieval, turn_ids: TurnIds) -> list[str]:
    """The dialogue turns the memory's prompt context shows for a retrieval: every page it holds
    (short-term included), and the turns its profile and knowledge entries came from."""
    return distinct_turns(retrieval.items(), turn_ids)


def fit_turns(ranked: list[str], tokens_of: dict[str, int], budget: int) -> tuple[int, list[str]]:
    """The turns of a ranking a context of `budget` tokens shows, and the tokens they take: in order, a turn
    that does not fit left out and a later, shorter one still taken (as the memory's context is packed).
    Pure."""
    shown, used = [], 0
    for turn in ranked:
        if used + tokens_of[turn] <= budget:
            shown.append(turn)
            used += tokens_of[turn]
    return used, shown


def plain_curve(
    ranked: list[str], tokens_of: dict[str, int], evidence: list[str], budgets: tuple[int, ...] = BUDGETS
) -> dict[int, list[int]]:
    """budget -> [tokens, evidence turns shown] of a plain ranking's first turns that fit (fit_turns), in
    the form of comparison.evidence_curve's. A turn costs its text as the memory's page shows it ("Speaker:
    text"), so the token axes compare. Pure."""
    wanted = set(evidence)
    curve = {}
    for budget in budgets:
        used, shown = fit_turns(ranked, tokens_of, budget)
        curve[budget] = [used, len(wanted & set(shown))]
    return curve


def _turn_line(turn: Turn) -> str:
    return f"[{turn.session_datetime}] {turn.speaker}: {turn.text}"


def _tokens_of_first(ranked: list[str], text_of: dict[str, str], ks: tuple[int, ...]) -> dict[int, int]:
    return {k: sum(estimate_tokens(text_of[t]) for t in ranked[:k]) for k in ks}


def memory_context_text(retrieval: Retrieval, user: str, assistant: str) -> str:
    """The memory's context as the answering prompt shows it: profile, knowledge, past and recent pages."""

    def page_line(item: Item) -> str:
        when = item.provenance.get("timestamp", "")[:10]
        text = item.text.replace("User: ", f"{user}: ").replace("Assistant: ", f"{assistant}: ")
        return f"[{when}] {text}"

    lines = [f"{user}'s profile: {i.text}" for i in retrieval.profile]
    lines += [f"{user} said: {i.text}" for i in retrieval.user_knowledge]
    lines += [f"{assistant} said: {i.text}" for i in retrieval.assistant_knowledge]
    lines += [page_line(i) for i in retrieval.pages]
    lines += [page_line(i) for i in retrieval.short_term]
    return "\n".join(lines)


ANSWER_SYSTEM = (
    "You answer questions about a long conversation between {a} and {b}, using only the context given. "
    "Answer with a short phrase (a few words, a name, a date), not a sentence. Dates in brackets say when "
    "something was said. If the context does not contain the answer, answer: Not mentioned in the conversation."
)


def answer_question(llm: LLM, *, context: str, question: str, a: str, b: str) -> str:
    """One short answer from `context`; an LLM failure is recorded as an empty answer (scores 0)."""
    messages = [
        {"role": "system", "content": ANSWER_SYSTEM.format(a=a, b=b)},
        {"role": "user", "content": f"Context:\n{context}\n\nQuestion: {question}\nShort answer:"},
    ]
    try:
        return llm.chat(messages, max_tokens=32, temperature=0.0).text.strip()
    except LLMError as error:
        logger.warning("answering %r failed: %s", question, error)
        return ""


def _fit_tail(lines: list[str], max_tokens: int) -> str:
    """The newest lines that fit `max_tokens` (the whole conversation when it fits)."""
    kept, used = [], 0
    for line in reversed(lines):
        cost = estimate_tokens(line) + 1
        if used + cost > max_tokens:
            break
        kept.append(line)
        used += cost
    return "\n".join(reversed(kept))


def spread(count: int, limit: int | None) -> set[int]:
    """`limit` question numbers (1-based) spread evenly over `count`, all of them when limit is None.
    LoCoMo lists questions grouped by category, so the first N would be one or two categories. Pure."""
    if limit is None or limit >= count:
        return set(range(1, count + 1))
    return {1 + (j * count) // limit for j in range(limit)}


def evaluate_sample(
    sample: dict[str, Any],
    *,
    llm: LLM | None,
    answer: bool = False,
    answer_limit: int | None = None,
    full_context_tokens: int = 100_000,
    promote: bool = True,
    ks: tuple[int, ...] = KS,
    limit_pages: int | None = None,
    limit_questions: int | None = None,
    progress: Progress | None = None,
    reuse: bool = False,
) -> SampleResult:
    """Ingest one LoCoMo sample into a fresh space and ask all its questions with every method.

    Changes the database: the space of user "locomo-eval-<sample_id>" and assistant "locomo-eval" is
    replaced (with `reuse`, kept when it holds every page: ingest_conversation). `answer` needs `llm`;
    `answer_limit` answers only N questions spread over the sample (all still get recall). The
    full-conversation baseline keeps the newest turns that fit `full_context_tokens`.
    """
    conversation = sample["conversation"]
    a, b = conversation["speaker_a"], conversation["speaker_b"]
    space, pages, stats = ingest_for_evaluation(
        sample, llm=llm, promote=promote, limit=limit_pages, progress=progress, reuse=reuse
    )
    ingested = {turn for page in pages for turn in page.dia_ids}
    turns = [t for t in iter_turns(sample) if t.dia_id in ingested]
    text_of = {t.dia_id: _turn_line(t) for t in turns}
    tokens_of = {t.dia_id: estimate_tokens(turn_document(t)) for t in turns}
    rankers: list[TurnRanker] = [LastTurns(turns), BM25Turns(turns), DenseTurns(turns)]
    curve_rankers = {ranker.name: ranker for ranker in rankers if not isinstance(ranker, LastTurns)}
    turn_ids = dialogue_ids(space)
    depth = max(ks)
    full_context = _fit_tail([text_of[t.dia_id] for t in turns], full_context_tokens)

    results = []
    qas = sample["qa"][:limit_questions]
    to_answer = spread(len(qas), answer_limit)
    for number, qa in enumerate(qas, start=1):
        question = qa["question"]
        ranked = {ranker.name: ranker.rank(question, depth) for ranker in rankers}
        ranked[MEMORY] = memory_ranking(space, question, turn_ids, depth)
        default = retrieve(space, question, count_hits=False)
        evidence = clean_evidence(qa.get("evidence", []), ingested)
        curve = {MEMORY: evidence_curve(space, question, evidence, turn_ids)}
        for name, ranker in curve_rankers.items():
            curve[name] = plain_curve(ranker.rank(question, len(turns)), tokens_of, evidence)
        result = QuestionResult(
            sample_id=sample["sample_id"],
            number=number,
            category=int(qa["category"]),
            question=question,
            answer=str(qa.get("answer", "")),  # some answers are integers; category 5 usually has none
            evidence=evidence,
            ranked={name: r[:depth] for name, r in ranked.items()},
            turn_tokens={name: _tokens_of_first(r, text_of, ks) for name, r in ranked.items()},
            memory_context_tokens=default.tokens_used,
            context_turns=context_turns(default, turn_ids),
            curve=curve,
        )
        if answer and llm is not None and number in to_answer:
            contexts = {
                MEMORY: memory_context_text(default, a, b),
                BM25Turns.name: "\n".join(text_of[t] for t in ranked[BM25Turns.name][:ANSWER_K]),
                FULL_CONVERSATION: full_context,
            }
            for method, context in contexts.items():
                result.answers[method] = answer_question(llm, context=context, question=question, a=a, b=b)
        results.append(result)
        if progress:
            progress(f"{sample['sample_id']} questions", number, len(qas))

    tiers = {tier: Page.objects.filter(space=space, tier=tier).count() for tier in Page.Tier.values}
    knowledge = {
        kind: LongTermEntry.objects.filter(space=space, kind=kind, status=LongTermEntry.Status.ACTIVE).count()
        for kind in LongTermEntry.Kind.values
    }
    return SampleResult(
        sample_id=sample["sample_id"],
        user=a,
        assistant=b,
        pages=len(pages),
        dialogue_turns=sum(len(page.dia_ids) for page in pages),
        ingest=stats,
        questions=results,
        tiers=tiers,
        sessions=space.sessions.filter(status="active").count(),
        knowledge=knowledge,
    )
