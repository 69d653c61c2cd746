"""What a space costs over time: its replies (models.ReplyRecord), its consolidation (ConsolidationRun: after
chat turns, and during imports) and its experiments' replays (the consolidation of their shadow spaces),
day by day, in LLM calls and tokens, and in money where the operator gave the model's prices
(MEMORYOS_LLM_PRICES: per million prompt and completion tokens)."""

from collections import defaultdict
from datetime import date, timedelta

from django.db.models import Count, Q, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from memory_engine.models import ConsolidationRun, Experiment, MemorySpace, ReplyRecord

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
    return {"calls": 0, "prompt_tokens": 0, "completion_tokens": 0, "cost": 0.0}


def _add(into: dict, calls: int, prompt: int, completion: int, money: float | None) -> None:
    into["calls"] += calls
    into["prompt_tokens"] += prompt
    into["completion_tokens"] += completion
    into["cost"] = None if into["cost"] is None or money is None else into["cost"] + money


def space_usage(space: MemorySpace, *, days: int, prices: dict[str, tuple[float, float]]) -> dict:
    """The last `days` days (today included, in UTC), oldest first: for each day and kind (replies,
    consolidation after chat turns, consolidation during imports, experiments' replays) the LLM calls,
    tokens and cost (None where a model has no price); the totals; and the models met without a price.
    Four queries."""
    today = timezone.now().date()
    first = today - timedelta(days=days - 1)
    rows: dict[date, dict[str, dict]] = defaultdict(lambda: {kind: _empty() for kind in KINDS})
    unpriced: set[str] = set()

    def count(day: date, kind: str, model: str, calls: int, prompt: int, completion: int) -> None:
        money = cost(prices, model, prompt, completion)
        if money is None:
            unpriced.add(model or "(unnamed)")
        _add(rows[day][kind], calls, prompt, completion, money)

    replies = (
        ReplyRecord.objects.filter(space=space, at__date__gte=first)
        .annotate(day=TruncDate("at"))
        .values("day", "model")
        .annotate(n=Count("pk"), prompt=Sum("prompt_tokens"), completion=Sum("completion_tokens"))
    )
    for row in replies:
        count(row["day"], "replies", row["model"], row["n"], row["prompt"], row["completion"])

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
            _add(totals[kind], *(kinds[kind][key] for key in ("calls", "prompt_tokens", "completion_tokens", "cost")))
        listed.append({"day": day.isoformat(), **kinds})
    return {
        "days": listed,
        "totals": totals,
        "prices": {model: list(pair) for model, pair in sorted(prices.items())},
        "unpriced_models": sorted(unpriced),
    }
