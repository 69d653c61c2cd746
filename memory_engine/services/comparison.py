"""Comparing two memory spaces built from the same turns: an experiment's shadow space and its source.

For each side: what its tiers hold, the sessions it promoted, what its consolidation cost in LLM calls
and tokens, and its heat timeline by turn (a point's x is how many turns the space had stored when the
heat changed, so two replays that ran at different times line up). For each probe question: the items
each side ranks (read-only: no heat), which of them the other side ranks too, and, where the question's
evidence is known (the dialogue-turn ids a LoCoMo import keeps in each page's meta), recall@k per side,
scored as the LoCoMo evaluation scores the memory (bench/locomo_run.py uses the same functions), and the
curve of the evidence a side's prompt context shows against its tokens (evidence_curve).
"""

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from django.db.models import Max, Sum

from memory_engine import inputs
from memory_engine.config import memory_settings
from memory_engine.engine.retriever import Item, narrowed, retrieve, within_budget
from memory_engine.errors import InputTooLarge, MemoryInputError
from memory_engine.models import (
    PARAMETER_LABELS,
    SPACE_PARAMETERS,
    ConsolidationRun,
    HeatEvent,
    ImportJob,
    LongTermEntry,
    MemorySpace,
    MidTermSession,
    Page,
)
from memory_engine.services.export import HEAT_POINT_FIELDS, heat_point_card, space_counts

PROBE_DEPTH = 25  # how deep each side is ranked for a probe, whatever its top-k: enough for recall@25
MAX_PROBES = 200  # two retrievals each
# A comparison runs in the request: its work and its answer are bounded. 200 questions of 8,000 characters
# at k 25 took 68 s and answered 13 MB; at these bounds the answer is at most about 2 MB.
MAX_PROBE_ITEMS = 2000  # questions x k (the default LoCoMo comparison: 200 x 10)
MAX_PROBE_CHARS = 500
ITEM_TEXT_CHARS = 400  # an item's text in the answer, cut with an ellipsis (the inspector shows it whole)

# The curve: prompt contexts of these sizes (tokens), filled from one retrieval this deep (pages and
# knowledge entries: more than 4,000 tokens hold).
CURVE_BUDGETS = (250, 500, 1000, 1500, 2000, 3000, 4000)
CURVE_DEPTH = 200
UNBOUNDED = 10**9  # the token budget of the curve's one retrieval: none, so that any budget can be read off it

TurnIds = dict[int, tuple[str | None, str | None]]


@dataclass(frozen=True)
class Probe:
    question: str
    evidence: tuple[str, ...] = ()  # dialogue-turn ids that answer it; empty: unknown
    category: str = ""


def dialogue_ids(space: MemorySpace) -> TurnIds:
    """page id -> (the id of the user's dialogue turn in it, the assistant's), from the pages' meta
    ({"dia_ids": [...]}, user's first); (None, None) for a page without them. One query."""
    ids: TurnIds = {}
    for pk, meta, user_input, agent_response in Page.objects.filter(space=space).values_list(
        "pk", "meta", "user_input", "agent_response"
    ):
        left = list(meta.get("dia_ids") or []) if isinstance(meta, dict) else []
        user = left.pop(0) if user_input and left else None
        assistant = left.pop(0) if agent_response and left else None
        ids[pk] = (user, assistant)
    return ids


def item_turns(item: Item, turn_ids: TurnIds) -> list[str | None]:
    """The dialogue turns an item shows: a page's own; an entry's, the turns of the side it speaks
    for (the user's for the profile and user knowledge) in the pages it came from."""
    if item.kind in ("page", "short_term"):
        return list(turn_ids.get(item.id, (None, None)))
    side = 1 if item.kind == LongTermEntry.Kind.ASSISTANT_KNOWLEDGE else 0
    return [turn_ids[pid][side] for pid in item.provenance["source_page_ids"] if pid in turn_ids]


def distinct_turns(items: Sequence[Item], turn_ids: TurnIds) -> list[str]:
    """The dialogue turns the items show, in the items' order, each once."""
    turns: list[str] = []
    for item in items:
        for turn in item_turns(item, turn_ids):
            if turn and turn not in turns:
                turns.append(turn)
    return turns


def ranked_items(space: MemorySpace, question: str, depth: int, *, now: datetime | None = None) -> list[Item]:
    """The pages and knowledge the space ranks for `question` (asked at `now`), `depth` of each, best first,
    with no budget and no hit counted."""
    found = retrieve(
        space,
        question,
        top_pages=depth,
        top_knowledge=depth,
        token_budget=10**9,
        fill_pages=0,
        count_hits=False,
        now=now,
    )
    return sorted([*found.pages, *found.user_knowledge, *found.assistant_knowledge], key=lambda i: -i.score)


def evidence_curve(
    space: MemorySpace,
    question: str,
    evidence: Sequence[str],
    turn_ids: TurnIds,
    budgets=CURVE_BUDGETS,
    *,
    now: datetime | None = None,
    prompt_at: int | None = None,
) -> dict[int, list[int]]:
    """budget -> [the tokens the space's prompt context for `question` takes, how many of `evidence`'s
    turns it shows]: the context packed as a chat's is (short-term, profile, pages, knowledge;
    retriever.within_budget), filled with as many pages and entries as fit; at the budget `prompt_at`, the
    context the space's chat gives its model, as deep as its parameters say (top_pages, top_knowledge and
    the filler pages: retriever.narrowed). One retrieval; no hit counted."""
    deep = retrieve(
        space,
        question,
        top_pages=CURVE_DEPTH,
        top_knowledge=CURVE_DEPTH,
        token_budget=UNBOUNDED,
        fill_pages=0,
        count_hits=False,
        now=now,
    )
    wanted = set(evidence)
    curve = {}
    for budget in budgets:
        if budget == prompt_at:
            fill = memory_settings().fill_pages
            packed = narrowed(
                deep, top_pages=space.top_pages, top_knowledge=space.top_knowledge, fill_pages=fill, budget=budget
            )
        else:
            packed = within_budget(deep, budget)
        curve[budget] = [packed.tokens_used, len(wanted & set(distinct_turns(packed.items(), turn_ids)))]
    return curve


def mean_curve(curves: Sequence[tuple[dict[int, list[int]], int]]) -> list[dict]:
    """[{"budget", "tokens", "evidence"}]: the mean tokens and share of the evidence shown at each budget,
    over (curve, evidence count) pairs; [] for none. Pure."""
    if not curves:
        return []
    return [
        {
            "budget": budget,
            "tokens": round(sum(curve[budget][0] for curve, _ in curves) / len(curves), 1),
            "evidence": round(sum(curve[budget][1] / wanted for curve, wanted in curves) / len(curves), 4),
        }
        for budget in curves[0][0]
    ]


def evidence_recall(evidence: Sequence[str], ranked_turns: Sequence[str], k: int) -> float:
    """|evidence ∩ first k distinct ranked turns| / |evidence|. The caller skips questions with no evidence."""
    if not evidence:
        raise ValueError("evidence recall is undefined for a question without evidence")
    top: list[str] = []
    for turn in ranked_turns:
        if turn not in top:
            top.append(turn)
            if len(top) == k:
                break
    return len(set(evidence) & set(top)) / len(set(evidence))


def item_key(item: Item) -> str:
    """What an item is, the same in two spaces of the same turns: a page by when and what was said, an
    entry by its kind and text."""
    if item.kind in ("page", "short_term"):
        return f"page {item.provenance['timestamp']} {item.text}"
    return f"{item.kind} {item.text}"


def side_summary(space: MemorySpace) -> dict:
    """What a space holds and what building it cost."""
    runs = ConsolidationRun.objects.filter(space=space).aggregate(
        llm_calls=Sum("llm_calls", default=0),
        prompt_tokens=Sum("prompt_tokens", default=0),
        completion_tokens=Sum("completion_tokens", default=0),
        pages_moved=Sum("pages_moved", default=0),
        items_stored=Sum("items_stored", default=0),
    )
    return {
        "turns": Page.objects.filter(space=space).count(),
        "tiers": space_counts(space=space),
        "sessions_promoted": HeatEvent.objects.filter(space=space, cause=HeatEvent.Cause.PROMOTED).count(),
        "sessions_ever": MidTermSession.objects.filter(space=space).count(),
        "runs_failed": ConsolidationRun.objects.filter(space=space, status=ConsolidationRun.Status.FAILED).count(),
        **runs,
        "unfinished": unfinished_imports(space),
        "token_budget": space.context_token_budget,
    }


def unfinished_imports(space: MemorySpace) -> list[dict]:
    """The imports and replays into the space that have not finished: {"source", "status", "done", "total"},
    oldest first. A side with one is still being built, and what it holds is not yet comparable."""
    jobs = ImportJob.objects.filter(space=space, status__in=[ImportJob.Status.QUEUED, ImportJob.Status.RUNNING])
    return list(jobs.order_by("created_at", "pk").values("source", "status", "done", "total"))


def unfinished_warnings(sides: dict[str, dict]) -> list[str]:
    """A sentence per unfinished import or replay of the compared sides (their side_summary)."""
    warnings = []
    for name, summary in sides.items():
        for job in summary["unfinished"]:
            state = "has not started" if job["status"] == ImportJob.Status.QUEUED else "is not finished"
            warnings.append(
                f"The {name}'s {job['source']} {state}: {job['done']} of {job['total']} turns stored. "
                "Its figures will change; compare again when it ends."
            )
    return warnings


def heat_by_turn(space: MemorySpace, *, sessions: int = 12) -> list[dict]:
    """The heat timeline of the space's `sessions` hottest sessions (by their highest point), each point
    placed at the turn that made it (HeatEvent.turn; a point recorded before turns were kept, at the number of
    turns stored when it was), as every door gives a point (documents.HeatPointCard), in order."""
    stored = list(Page.objects.filter(space=space).order_by("created_at").values_list("created_at", flat=True))
    hottest = (
        HeatEvent.objects.filter(space=space)
        .values("session_id")
        .annotate(top=Max("heat"))
        .order_by("-top", "session_id")
        .values_list("session_id", flat=True)[:sessions]
    )
    events = (
        HeatEvent.objects.filter(space=space, session_id__in=list(hottest))
        .select_related("session")
        .only(*HEAT_POINT_FIELDS, "session__summary")
        .order_by("at", "pk")
    )
    points = [
        heat_point_card(event, turn=bisect_right(stored, event.at) if event.turn is None else event.turn).payload()
        for event in events
    ]
    return sorted(points, key=lambda point: point["turn"])  # stable: a promotion before its cooling


def _side_of_probe(items: list[Item], other_keys: set[str], probe: Probe, turn_ids: TurnIds, k: int) -> dict:
    top = items[:k]
    out = {
        "items": [
            {
                "kind": item.kind,
                "text": item.text if len(item.text) <= ITEM_TEXT_CHARS else item.text[: ITEM_TEXT_CHARS - 1] + "\u2026",
                "score": round(item.score, 4),
                "scores": {name: round(value, 4) for name, value in item.scores.items()},
                "turns": [turn for turn in item_turns(item, turn_ids) if turn],
                "shared": item_key(item) in other_keys,
            }
            for item in top
        ],
        "recall": None,
    }
    if probe.evidence:
        out["recall"] = evidence_recall(probe.evidence, distinct_turns(items, turn_ids), k)
    return out


def probes_check(probes: Sequence[Probe], k: int) -> None:
    """Raise MemoryInputError for a bad k, no probe or a bad question, InputTooLarge for more than
    MAX_PROBES, more than MAX_PROBE_ITEMS questions x k or a question over MAX_PROBE_CHARS."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= PROBE_DEPTH:
        raise MemoryInputError(f"k must be a whole number from 1 to {PROBE_DEPTH}")
    if not probes:
        raise MemoryInputError("give at least one probe question")
    if len(probes) > MAX_PROBES:
        raise InputTooLarge(f"at most {MAX_PROBES} probe questions, not {len(probes)}")
    if len(probes) * k > MAX_PROBE_ITEMS:
        raise InputTooLarge(f"probe questions times k is at most {MAX_PROBE_ITEMS}, not {len(probes)} x {k}")
    for probe in probes:
        inputs.query(probe.question)
        if len(probe.question) > MAX_PROBE_CHARS:
            raise InputTooLarge(f"a probe question is at most {MAX_PROBE_CHARS} characters, not {len(probe.question)}")


def compare(source: MemorySpace, shadow: MemorySpace, probes: Sequence[Probe], *, k: int = 10) -> dict:
    """The two spaces side by side (see the module docstring): {"k", "source", "experiment", "warnings",
    "probes", "recall", "curve"}; "warnings" says which side was still being built (an import or replay
    unfinished).
    A probe's items are each side's first k; "shared" marks an item the other side's first k hold too, and
    "overlap" counts them. "recall" is the mean recall@k over the probes with evidence
    (None for a side when no probe has any); "curve" is each side's mean_curve over those probes.
    Changes nothing. Raises MemoryInputError for a bad k, no
    probe or a bad question, InputTooLarge for more than MAX_PROBES, more than MAX_PROBE_ITEMS questions x k
    or a question over MAX_PROBE_CHARS; before any retrieval. A worker does it a probe at a time
    (probe_compared, then comparison_of)."""
    probes_check(probes, k)
    turn_ids = sides_turn_ids(source, shadow)
    results = [probe_compared(source, shadow, probe, k=k, turn_ids=turn_ids) for probe in probes]
    return comparison_of(source, shadow, results, k=k)


def sides_turn_ids(source: MemorySpace, shadow: MemorySpace) -> dict[str, TurnIds]:
    """Each side's dialogue_ids, which probe_compared reads."""
    return {"source": dialogue_ids(source), "experiment": dialogue_ids(shadow)}


def probe_compared(
    source: MemorySpace, shadow: MemorySpace, probe: Probe, *, k: int, turn_ids: dict[str, TurnIds]
) -> dict:
    """One probe of a comparison: each side's first k items, and (for a probe with evidence) each side's
    curve under "curves", which comparison_of takes out. Changes nothing."""
    sides = {"source": source, "experiment": shadow}
    ranked = {name: ranked_items(space, probe.question, PROBE_DEPTH) for name, space in sides.items()}
    keys = {name: {item_key(item) for item in items[:k]} for name, items in ranked.items()}
    result = {"question": probe.question, "category": probe.category, "evidence": list(probe.evidence)}
    result["source"] = _side_of_probe(ranked["source"], keys["experiment"], probe, turn_ids["source"], k)
    result["experiment"] = _side_of_probe(ranked["experiment"], keys["source"], probe, turn_ids["experiment"], k)
    result["overlap"] = len(keys["source"] & keys["experiment"])
    if probe.evidence:
        # the curve's budgets, and each side's own: what its chat's prompt context holds
        budgets = sorted({*CURVE_BUDGETS, source.context_token_budget, shadow.context_token_budget})
        result["curves"] = {
            name: evidence_curve(
                space, probe.question, probe.evidence, turn_ids[name], budgets, prompt_at=space.context_token_budget
            )
            for name, space in sides.items()
        }
    return result


def comparison_of(source: MemorySpace, shadow: MemorySpace, results: list[dict], *, k: int) -> dict:
    """The comparison (as compare returns it) from its probes' results (probe_compared's, in order; read
    back from JSON too, whose keys are strings)."""
    sides = {"source": source, "experiment": shadow}
    curves = [
        (
            {name: {int(b): v for b, v in curve.items()} for name, curve in result.pop("curves").items()},
            len(set(result["evidence"])),
        )
        for result in results
        if "curves" in result
    ]
    scored = [r for r in results if r["evidence"]]
    recall = {name: (sum(r[name]["recall"] for r in scored) / len(scored) if scored else None) for name in sides}
    curve = {name: mean_curve([(side_curves[name], size) for side_curves, size in curves]) for name in sides}
    summaries = {name: side_summary(space) for name, space in sides.items()}
    differences = parameter_differences(source, shadow)
    same = same_figures(summaries, results, recall, curve)
    return {
        "k": k,
        **summaries,
        "warnings": unfinished_warnings(summaries),
        "parameters": differences,
        "same_figures": same,
        "verdict": verdict(differences, same=same),
        "probes": results,
        "recall": {**recall, "questions": len(scored)},
        "curve": curve,
    }


def parameter_differences(source: MemorySpace, shadow: MemorySpace) -> list[dict]:
    """The parameters on which the two sides differ: {"parameter", "label", "source", "experiment"}."""
    return [
        {"parameter": name, "label": PARAMETER_LABELS[name], "source": mine, "experiment": theirs}
        for name in SPACE_PARAMETERS
        if (mine := getattr(source, name)) != (theirs := getattr(shadow, name))
    ]


# What two sides built the same way show alike: what they hold and how they were built.
SAME_SUMMARY = ("turns", "tiers", "sessions_promoted", "sessions_ever", "llm_calls", "pages_moved", "items_stored")


def same_figures(summaries: dict[str, dict], results: list[dict], recall: dict, curve: dict) -> bool:
    """Whether every figure of the comparison is the same on both sides: what they hold, recall, the curve,
    and each probe's items (all shared, as many on each side). Pure."""
    source, experiment = summaries["source"], summaries["experiment"]
    return (
        all(source[figure] == experiment[figure] for figure in SAME_SUMMARY)
        and recall["source"] == recall["experiment"]
        and curve["source"] == curve["experiment"]
        and all(
            len(r["source"]["items"]) == len(r["experiment"]["items"]) == r["overlap"]
            and r["source"]["recall"] == r["experiment"]["recall"]
            for r in results
        )
    )


def verdict(differences: list[dict], *, same: bool) -> str:
    """One sentence saying what the comparison isolates: which parameters differ, and whether they changed
    anything here. Pure."""
    changed = "; ".join(f"{d['label']} {d['source']} \u2192 {d['experiment']}" for d in differences)
    if not differences:
        return "The same parameters on both sides: a control" + (
            ", and every figure is the same." if same else "; the figures that differ come from how each was built."
        )
    if same:
        return (
            f"Only this differs: {changed}. Every figure is the same: on these turns and questions, it changes nothing."
        )
    return f"Only this differs: {changed}. Every difference below comes from it."
