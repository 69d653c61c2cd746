"""The retrieval module: one call gathers what every tier holds for a query.

- short-term: every page, newest last (always in the prompt);
- mid-term: the top-m sessions by summary similarity, and the best pages, ranked by reciprocal rank
  fusion of dense similarity (MiniLM + FAISS) and BM25, with pages of the top sessions as a third list;
- long-term: the profile, and the top user and assistant knowledge (dense + BM25 fused the same way).

The assembled context is capped by a token budget; every item carries its scores and provenance.
Sessions whose pages are used, and knowledge entries used, are counted as hits: they get hotter.
"""

import math
from dataclasses import dataclass, field
from datetime import datetime

import numpy as np
from django.conf import settings
from django.db.models import F
from django.utils import timezone

from memory_engine.embeddings import get_embedder
from memory_engine.index import score_dense, search_dense, search_lexical
from memory_engine.keywords import content_tokens, jaccard
from memory_engine.long_term import profile_entries
from memory_engine.mid_term import sessions_record_hits
from memory_engine.models import LongTermEntry, MemorySpace, MidTermSession, Page
from memory_engine.short_term import short_term_pages

RRF_K = 60  # the usual reciprocal-rank-fusion constant: dampens the weight of the very top ranks
CANDIDATES = 50  # how deep each ranked list is read before fusion


def estimate_tokens(text: str) -> int:
    """About four characters a token for English; good enough to budget a prompt."""
    return max(1, math.ceil(len(text) / 4))


@dataclass
class Item:
    kind: str  # short_term | page | profile | user_knowledge | assistant_knowledge
    id: int
    text: str
    score: float
    scores: dict[str, float] = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)

    def as_dict(self) -> dict:
        return {
            "kind": self.kind,
            "id": self.id,
            "text": self.text,
            "score": round(self.score, 6),
            "scores": {k: round(v, 6) for k, v in self.scores.items()},
            "provenance": self.provenance,
            "tokens": self.tokens,
        }


@dataclass
class Retrieval:
    query: str
    short_term: list[Item] = field(default_factory=list)
    sessions: list[Item] = field(default_factory=list)
    pages: list[Item] = field(default_factory=list)
    profile: list[Item] = field(default_factory=list)
    user_knowledge: list[Item] = field(default_factory=list)
    assistant_knowledge: list[Item] = field(default_factory=list)
    token_budget: int = 0
    tokens_used: int = 0
    dropped: int = 0

    def items(self) -> list[Item]:
        return [*self.short_term, *self.pages, *self.profile, *self.user_knowledge, *self.assistant_knowledge]

    def as_dict(self) -> dict:
        sections = ("short_term", "sessions", "pages", "profile", "user_knowledge", "assistant_knowledge")
        out = {name: [item.as_dict() for item in getattr(self, name)] for name in sections}
        out.update(
            query=self.query,
            token_budget=self.token_budget,
            tokens_used=self.tokens_used,
            dropped=self.dropped,
        )
        return out


def fuse(*rankings: list[int]) -> dict[int, float]:
    """Reciprocal rank fusion of ranked id lists: sum of 1 / (RRF_K + rank)."""
    fused: dict[int, float] = {}
    for ranking in rankings:
        for rank, item_id in enumerate(ranking, start=1):
            fused[item_id] = fused.get(item_id, 0.0) + 1.0 / (RRF_K + rank)
    return fused


def _page_item(page: Page, kind: str, score: float, scores: dict) -> Item:
    return Item(
        kind=kind,
        id=page.pk,
        text=page.text,
        score=score,
        scores=scores,
        provenance={
            "page_id": page.pk,
            "seq": page.seq,
            "timestamp": page.timestamp.isoformat(),
            "session_id": page.session_id,
            "thread_summary": page.thread_summary,
        },
    )


def _search_sessions(space: MemorySpace, query_vector, query_words: set[str], top: int) -> list[Item]:
    hits = search_dense(space, "sessions", query_vector, top * 4)
    sessions = MidTermSession.objects.in_bulk([i for i, _ in hits])
    scored = []
    for session_id, cos in hits:
        session = sessions.get(session_id)
        if session is None or session.status != MidTermSession.Status.ACTIVE:
            continue
        kw = jaccard(query_words, set(session.keywords))
        scored.append(
            Item(
                kind="session",
                id=session_id,
                text=session.summary,
                score=cos + kw,
                scores={"dense": cos, "keywords": kw},
                provenance={"session_id": session_id, "keywords": session.keywords, "heat": session.heat},
            )
        )
    scored.sort(key=lambda item: -item.score)
    return scored[:top]


def _search_pages(space: MemorySpace, query: str, query_vector, sessions: list[Item], top: int) -> list[Item]:
    dense_hits = search_dense(space, "pages", query_vector, CANDIDATES)
    lexical_hits = search_lexical(space, "pages", query, CANDIDATES)
    session_ids = [s.id for s in sessions]
    session_of = dict(
        Page.objects.filter(session_id__in=session_ids, tier=Page.Tier.MID).values_list("id", "session_id")
    )
    session_rank = {sid: r for r, sid in enumerate(session_ids)}
    session_scores = score_dense(space, "pages", query_vector, list(session_of))
    # Pages of the top sessions, best session first and best page within it first.
    via_sessions = sorted(session_scores, key=lambda pid: (session_rank[session_of[pid]], -session_scores[pid]))[
        :CANDIDATES
    ]
    fused = fuse([i for i, _ in dense_hits], [i for i, _ in lexical_hits], via_sessions)
    best = sorted(fused, key=lambda pid: (-fused[pid], pid))[:top]
    pages = Page.objects.in_bulk(best)
    dense_score = dict(dense_hits) | session_scores
    lexical_score = dict(lexical_hits)
    items = []
    for pid in best:
        page = pages.get(pid)
        if page is None or page.tier != Page.Tier.MID:
            continue
        scores = {
            "fused": fused[pid],
            "dense": dense_score.get(pid, 0.0),
            "bm25": lexical_score.get(pid, 0.0),
        }
        items.append(_page_item(page, "page", fused[pid], scores))
    return items


def _search_knowledge(space: MemorySpace, name: str, query: str, query_vector, top: int) -> list[Item]:
    dense_hits = search_dense(space, name, query_vector, CANDIDATES)
    lexical_hits = search_lexical(space, name, query, CANDIDATES)
    fused = fuse([i for i, _ in dense_hits], [i for i, _ in lexical_hits])
    best = sorted(fused, key=lambda eid: (-fused[eid], eid))[:top]
    entries = LongTermEntry.objects.in_bulk(best)
    dense_score, lexical_score = dict(dense_hits), dict(lexical_hits)
    items = []
    for eid in best:
        entry = entries.get(eid)
        if entry is None or entry.status != LongTermEntry.Status.ACTIVE:
            continue
        items.append(
            _entry_item(
                entry,
                fused[eid],
                {
                    "fused": fused[eid],
                    "dense": dense_score.get(eid, 0.0),
                    "bm25": lexical_score.get(eid, 0.0),
                },
            )
        )
    return items


def _entry_item(entry: LongTermEntry, score: float, scores: dict) -> Item:
    text = f"{entry.key}: {entry.value}" if entry.kind == LongTermEntry.Kind.PROFILE else entry.value
    return Item(
        kind=entry.kind,
        id=entry.pk,
        text=text,
        score=score,
        scores=scores,
        provenance={
            "entry_id": entry.pk,
            "key": entry.key,
            "source_page_ids": sorted(entry.source_pages.values_list("id", flat=True)),
            "updated_at": entry.updated_at.isoformat(),
        },
    )


def _fit(items: list[Item], budget_left: int) -> tuple[list[Item], int, int]:
    """Keep items in order while they fit the budget; returns kept, tokens used, number dropped."""
    kept, used = [], 0
    for item in items:
        if used + item.tokens <= budget_left:
            kept.append(item)
            used += item.tokens
    return kept, used, len(items) - len(kept)


def retrieve(
    space: MemorySpace,
    query: str,
    *,
    top_sessions: int | None = None,
    top_pages: int | None = None,
    top_knowledge: int | None = None,
    token_budget: int | None = None,
    count_hits: bool = True,
    now: datetime | None = None,
) -> Retrieval:
    """Everything the memory holds for `query`, within the token budget.

    The budget is spent in this order: short-term (newest first), profile, user knowledge, assistant
    knowledge, mid-term pages; what does not fit is dropped and counted. With `count_hits`, the
    sessions of the pages used and the knowledge used get a visit (changes heat); otherwise read-only.
    """
    cfg = settings.MEMORYOS
    top_sessions = cfg["TOP_SESSIONS"] if top_sessions is None else top_sessions
    top_pages = cfg["TOP_PAGES"] if top_pages is None else top_pages
    top_knowledge = cfg["TOP_KNOWLEDGE"] if top_knowledge is None else top_knowledge
    budget = cfg["CONTEXT_TOKEN_BUDGET"] if token_budget is None else token_budget
    now = now or timezone.now()

    query_vector: np.ndarray = get_embedder().encode_one(query)
    query_words = set(content_tokens(query))
    result = Retrieval(query=query, token_budget=budget)
    result.sessions = _search_sessions(space, query_vector, query_words, top_sessions)
    pages = _search_pages(space, query, query_vector, result.sessions, top_pages)
    short = [_page_item(p, "short_term", 1.0, {}) for p in short_term_pages(space)]
    profile = [_entry_item(e, 1.0, {}) for e in profile_entries(space).prefetch_related("source_pages")]
    user_knowledge = _search_knowledge(space, "user_knowledge", query, query_vector, top_knowledge)
    assistant_knowledge = _search_knowledge(space, "assistant_knowledge", query, query_vector, top_knowledge)

    left = budget
    newest_first, used, dropped = _fit(short[::-1], left)
    result.short_term = newest_first[::-1]
    left -= used
    result.dropped += dropped
    for name, items in (
        ("profile", profile),
        ("user_knowledge", user_knowledge),
        ("assistant_knowledge", assistant_knowledge),
        ("pages", pages),
    ):
        kept, used, dropped = _fit(items, left)
        setattr(result, name, kept)
        left -= used
        result.dropped += dropped
    result.tokens_used = budget - left

    if count_hits:
        _count_hits(space, result, now)
    return result


def _count_hits(space: MemorySpace, result: Retrieval, now: datetime) -> None:
    session_ids = sorted({item.provenance["session_id"] for item in result.pages})
    sessions_record_hits(space, session_ids, now)
    entry_ids = [item.id for item in (*result.user_knowledge, *result.assistant_knowledge)]
    if entry_ids:
        LongTermEntry.objects.filter(pk__in=entry_ids).update(hits=F("hits") + 1, last_hit_at=now)
