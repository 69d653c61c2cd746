"""What replies used and what a space costs.

Each reply's record (models.ReplyRecord), kept beside its turn: the model and its tokens, and the memory
the prompt held, as references, read again when the chat page shows "What it used" after a reload
(`used_now`). And what a space costs over time: its replies, its consolidation (ConsolidationRun: after
chat turns, and during imports) and its experiments' replays (the consolidation of their shadow spaces),
day by day, in LLM calls and tokens, and in money where the operator gave the model's prices
(MEMORYOS_LLM_PRICES: per million prompt and completion tokens)."""

from collections import defaultdict
from datetime import date, timedelta

from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from memory_engine.config import memory_settings
from memory_engine.documents import UsedDoc
from memory_engine.engine.retriever import Retrieval, items_now
from memory_engine.models import ConsolidationRun, Experiment, MemorySpace, Page, ReplyRecord

SECTIONS = ("short_term", "pages", "profile", "user_knowledge", "assistant_knowledge")


def reply_record(
    *, page: Page, retrieval: Retrieval, model: str, prompt_tokens: int, completion_tokens: int
) -> ReplyRecord:
    """Record what the reply stored as `page` used and cost."""
    used = [[item.kind, item.id, round(item.score, 6)] for name in SECTIONS for item in getattr(retrieval, name)]
    return ReplyRecord.objects.create(
        page=page,
        space_id=page.space_id,
        model=model[:200],
        prompt_tokens=max(0, prompt_tokens),
        completion_tokens=max(0, completion_tokens),
        memory_tokens=retrieval.tokens_used,
        token_budget=retrieval.token_budget,
        used=used,
    )


def used_counts(record: ReplyRecord) -> dict[str, int]:
    """How many items of each section the prompt held: {"short_term", "pages", "profile", "knowledge"}."""
    counts = {"short_term": 0, "pages": 0, "profile": 0, "knowledge": 0}
    for kind, _, _ in record.used:
        section = {"page": "pages", "short_term": "short_term", "profile": "profile"}.get(kind, "knowledge")
        counts[section] += 1
    return counts


def reply_costs(page: Page) -> dict | None:
    """For a turn this space's chat wrote, the model that wrote its reply, the tokens it cost, how many
    items of each section its prompt held (used_counts) and the turns it used (turns_used); None for a turn
    given whole."""
    record = getattr(page, "reply_record", None)
    if record is None:
        return None
    return {
        "model": record.model,
        "prompt_tokens": record.prompt_tokens,
        "completion_tokens": record.completion_tokens,
        "memory_tokens": record.memory_tokens,
        "token_budget": record.token_budget,
        "used": used_counts(record),
        "turns": turns_used(record),
    }


def turns_used(record: ReplyRecord) -> list[dict]:
    """The turns the reply used (its prompt held them, or it quotes them) that are still stored, in the order
    they were said: their ids and numbers, for links to them. Read with the other records' by
    turns_used_read when a list of turns is shown."""
    found = getattr(record, "turns_found", None)
    if found is None:
        turns_used_read([record])
        found = record.turns_found
    return found


def _turn_ids(record: ReplyRecord) -> list[int]:
    return [pk for kind, pk, _ in record.used if kind in ("page", "short_term")]


def turns_used_read(records) -> None:
    """Read the turns each of `records` used (turns_used) in one query for them all, kept on each record."""
    records = [record for record in records if record is not None]
    wanted = {(record.space_id, pk) for record in records for pk in _turn_ids(record)}
    seqs = {}
    if wanted:
        found = Page.objects.filter(
            space_id__in={space for space, _ in wanted}, pk__in={pk for _, pk in wanted}
        ).values_list("space_id", "pk", "seq")
        seqs = {(space, pk): seq for space, pk, seq in found}
    for record in records:
        used = sorted((seqs[record.space_id, pk], pk) for pk in set(_turn_ids(record)) if (record.space_id, pk) in seqs)
        record.turns_found = [{"page_id": pk, "seq": seq} for seq, pk in used]


def used_now(record: ReplyRecord) -> dict:
    """What the reply used (documents.UsedDoc: a retrieval's sections, without the sessions ranked and the
    items cut, which are not kept), read from the memory as it is now; "gone" counts the items deleted or
    forgotten since, which are left out."""
    items, gone = items_now(record.page.space, [(kind, pk, score) for kind, pk, score in record.used])
    return UsedDoc.of_items(
        query=record.page.user_input,
        items=items,
        token_budget=record.token_budget,
        tokens_used=record.memory_tokens,
        gone=gone,
    ).payload()


KINDS = ("replies", "consolidation", "imports", "experiments")
MAX_DAYS = 366


def cost(
    prices: dict[str, tuple[float, float]], model: str, prompt_tokens: int, completion_tokens: int
) -> float | None:
    """What the tokens cost at the model's prices, or None when no price is known for it (nothing is
    charged for no tokens)."""
    if not prompt_tokens and not completion_tokens:
        return 0.0
    if model not in prices:
        return None
    prompt_price, completion_price = prices[model]
    return (prompt_tokens * prompt_price + completion_tokens * completion_price) / 1_000_000


def _empty() -> dict:
    return {"calls": 0, "quoted": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0}


def _add(into: dict, calls: int, prompt: int, completion: int, money: float | None, quoted: int = 0) -> None:
    into["calls"] += calls
    into["quoted"] += quoted
    into["prompt_tokens"] += prompt
    into["completion_tokens"] += completion
    into["cost"] = None if into["cost"] is None or money is None else into["cost"] + money


def space_usage(space: MemorySpace, *, days: int, prices: dict[str, tuple[float, float]]) -> dict:
    """The last `days` days (today included, in UTC), oldest first: for each day and kind (replies,
    consolidation after chat turns, consolidation during imports, experiments' replays) the LLM calls (for
    replies: those the model wrote; `quoted`, those quoted from memory, which ran none), tokens and cost
    (None where a model has no price, in MEMORYOS_LLM_PRICE_CURRENCY); the totals; and the models met
    without a price.
    Four queries."""
    today = timezone.now().date()
    first = today - timedelta(days=days - 1)
    rows: dict[date, dict[str, dict]] = defaultdict(lambda: {kind: _empty() for kind in KINDS})
    unpriced: set[str] = set()

    def count(day: date, kind: str, model: str, calls: int, prompt: int, completion: int, quoted: int = 0) -> None:
        money = cost(prices, model, prompt, completion)
        if money is None:
            unpriced.add(model or "(unnamed)")
        _add(rows[day][kind], calls, prompt, completion, money, quoted)

    # A reply quoted from memory ran no model: counted apart from the model's (calls), with no tokens.
    was_quoted = Q(page__reply_source=Page.ReplySource.QUOTED)
    replies = (
        ReplyRecord.objects.filter(space=space, at__date__gte=first)
        .annotate(day=TruncDate("at"))
        .values("day", "model")
        .annotate(
            written=Count("pk", filter=~was_quoted),
            quoted=Count("pk", filter=was_quoted),
            prompt=Sum("prompt_tokens"),
            completion=Sum("completion_tokens"),
        )
    )
    for row in replies:
        count(row["day"], "replies", row["model"], row["written"], row["prompt"], row["completion"], row["quoted"])

    shadows = Experiment.objects.filter(source=space).values("space_id")
    runs = (
        ConsolidationRun.objects.filter(
            Q(space=space) | Q(space__in=shadows), started_at__date__gte=first, llm_calls__gt=0
        )
        .annotate(day=TruncDate("started_at"))
        .values("day", "model", "kind", "space_id")
        .annotate(calls=Sum("llm_calls"), prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"))
    )
    for row in runs:
        if row["space_id"] != space.pk:
            kind = "experiments"
        else:
            kind = "imports" if row["kind"] == ConsolidationRun.Kind.IMPORT else "consolidation"
        count(row["day"], kind, row["model"], row["calls"], row["prompt"], row["completion"])

    listed = []
    totals = {kind: _empty() for kind in KINDS}
    for number in range(days):
        day = first + timedelta(days=number)
        kinds = rows.get(day, {kind: _empty() for kind in KINDS})
        for kind in KINDS:
            figures = kinds[kind]
            _add(
                totals[kind],
                *(figures[key] for key in ("calls", "prompt_tokens", "completion_tokens", "cost", "quoted")),
            )
        listed.append({"day": day.isoformat(), **kinds})
    return {
        "days": listed,
        "totals": totals,
        "prices": {model: list(pair) for model, pair in sorted(prices.items())},
        "currency": memory_settings().llm_price_currency,
        "unpriced_models": sorted(unpriced),
    }


def record_of(page: Page) -> ReplyRecord | None:
    """What the reply stored as `page` used and cost, None for a turn stored without a reply."""
    return ReplyRecord.objects.filter(page=page).select_related("page__space").first()
