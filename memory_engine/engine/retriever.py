"""The retrieval module: one call gathers what every tier holds for a query.

- short-term: every page, newest last (always in the prompt);
- mid-term: the top-m sessions by summary similarity plus keyword overlap (the paper's session search,
  shown with the context and used for heat), and the best pages. A page's score is its match with the
  query (BM25 scaled to the best page, weighed against the MiniLM cosine: match_scores) plus a share of
  the match of the pages just before and after it (chain_scores); the first pages also gain the match of the
  person's words alone (_said_scores), which a long reply would otherwise dilute. The pages' BM25 also
  matches the dates a query names against the days a page was said and speaks of (dated_query,
  language/temporal.py);
- long-term: the profile, and the top user and assistant knowledge, by the same match.

The assembled context is capped by a token budget; every item carries its scores and provenance. What the
budget leaves after the knowledge is filled with the pages ranked next (FILL_PAGES of them): on LoCoMo a
context of 1,500 tokens showed 0.818 of the evidence with the top 10 pages alone, in 1,293 tokens, and
0.837 filled, in about 1,480 (docs/benchmarks.md).
Sessions whose pages are used, and knowledge entries used, are counted as hits: they get hotter.

How the page ranking was chosen, measured on LoCoMo (docs/benchmarks.md): ranking pages only within the
top sessions, and reciprocal rank fusion, each ranked below plain BM25; the weighted match and the
neighbours' share each added recall.
"""

import math
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from django.db import transaction
from django.utils import timezone

from memory_engine import inputs
from memory_engine.config import memory_settings
from memory_engine.documents import RetrievalDoc
from memory_engine.engine.excerpt import excerpt
from memory_engine.engine.long_term import entry_text
from memory_engine.engine.mid_term import sessions_record_hits
from memory_engine.engine.reranker import get_reranker
from memory_engine.engine.timing import stage
from memory_engine.language.keywords import content_tokens, jaccard
from memory_engine.language.names import without_names
from memory_engine.language.temporal import named_tokens
from memory_engine.models import LongTermEntry, MemorySpace, MidTermSession, Page, page_text
from memory_engine.store import retrieval_sql
from memory_engine.store.embeddings import encoded_beside
from memory_engine.store.index import (
    page_document,
    page_neighbourhood,
    page_vectors,
    pinned_versions,
    read_version,
    score_dense,
    score_lexical_texts,
    search_dense,
    search_lexical,
)
from memory_engine.store.retrieval_sql import EntryRow, PageRow
from memory_engine.store.writes import hold_space

CANDIDATES = 100  # how deep the dense and the lexical search each read before scoring
SAID_PAGES = 50  # the first pages of a ranking whose user side is matched alone (_said_scores)
RERANK_PAGES = 20  # the best pages the reranker reads, when it reranks pages (reranked_pages)


def topic_query(query: str, names: list[str]) -> str:
    """The query without the names of the two people talking ("What did Caroline paint?" -> "What did
    paint?"), or the query itself when nothing else is left. Pure.

    In a conversation between two people their names say nothing about the topic: they appear wherever
    one greets the other, so a name in the query would favour greetings over the talk that answers it.
    """
    stripped = without_names(query, names)
    return stripped if content_tokens(stripped) else query


def dated_query(query: str) -> str:
    """The query with the date tokens of the dates it names, for the pages' lexical search, whose
    documents carry the days each page was said and speaks of (language/temporal.py). Pure."""
    tokens = named_tokens(query)
    return f"{query} {' '.join(tokens)}" if tokens else query


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
    # A page's: what it shows of the person's words and of the reply (`text` is made of them), an excerpt
    # when the page was longer than the space's page limit (engine/excerpt.py).
    parts: tuple[str, str] | None = None

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


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
    cut: list[Item] = field(default_factory=list)  # the items the budget left out, in the order it tried them
    # The pages ranked after `pages`, best first: what the budget leaves after the knowledge is filled with
    # them (within_budget). Not part of the context until then; those that do not fit are not `cut`.
    filler: list[Item] = field(default_factory=list)
    filled: int = 0  # how many of `pages`, at their end, are filler: shown because there was room

    @property
    def dropped(self) -> int:
        return len(self.cut)

    @property
    def matched_pages(self) -> list[Item]:
        """The pages the query matched: `pages` without the filler at their end (there for the room)."""
        return self.pages[: len(self.pages) - self.filled]

    def items(self) -> list[Item]:
        return [*self.short_term, *self.pages, *self.profile, *self.user_knowledge, *self.assistant_knowledge]

    def as_dict(self) -> dict:
        """The retrieval as every door gives it (documents.RetrievalDoc)."""
        return RetrievalDoc.of(self).payload()


def match_scores(
    dense: dict[int, float], lexical: dict[int, float], best_lexical: float, lexical_weight: float
) -> dict[int, float]:
    """Each id's match with the query: lexical_weight * bm25 / best_lexical + (1 - lexical_weight) * cosine.
    Pure. BM25 sees rare exact words (names, places), the cosine sees paraphrase; scaling BM25 by the
    best page's makes the two comparable whatever the query.

    A weighted sum of scores rather than reciprocal rank fusion: RRF gives the 10th dense hit as much
    weight as the 10th BM25 hit however weak either is, and on LoCoMo it ranked worse than BM25 alone.
    """
    scale = best_lexical or 1.0
    return {
        i: lexical_weight * lexical.get(i, 0.0) / scale + (1 - lexical_weight) * dense.get(i, 0.0)
        for i in dense.keys() | lexical.keys()
    }


def chain_scores(match: dict[int, float], seq_of: dict[int, int], chain_weight: float) -> dict[int, float]:
    """Each page's match plus chain_weight times the match of the pages just before and after it. Pure.

    A page amid talk about the query is likelier to hold the answer than one that merely shares a word.
    """
    by_seq = {seq_of[i]: score for i, score in match.items()}
    return {
        i: score + chain_weight * (by_seq.get(seq_of[i] - 1, 0.0) + by_seq.get(seq_of[i] + 1, 0.0))
        for i, score in match.items()
    }


def _page_item(page: PageRow, kind: str, score: float, scores: dict) -> Item:
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
            "tier": page.tier,
        },
        parts=(page.user_input, page.memory_reply),
    )


def shown_by_excerpt(item: Item, query: str, limit_chars: int) -> Item:
    """The page item as a prompt shows it within `limit_chars` (engine/excerpt.py): its text made of the
    person's words and the reply's sentences that match `query`, its provenance saying how much was left
    out. Unchanged when it fits or has no parts (not a page), or when `limit_chars` is 0. Changes `item`."""
    if not limit_chars or item.parts is None or len(item.text) <= limit_chars:
        return item
    whole = item.tokens
    said, replied = excerpt(query, item.parts[0], item.parts[1], limit_chars)
    item.parts = (said, replied)
    item.text = page_text(said, replied)
    item.provenance["excerpt_of_tokens"] = whole
    return item


def in_progress(pages: list[PageRow], now: datetime, gap: timedelta) -> list[PageRow]:
    """The conversation in progress: the last of `pages` (oldest first) back to the first pause longer than
    `gap` between two of them, if the last was said within `gap` of `now`; none otherwise (a new
    conversation). Pure."""
    if not pages or now - pages[-1].timestamp > gap:
        return []
    start = len(pages) - 1
    while start > 0 and pages[start].timestamp - pages[start - 1].timestamp <= gap:
        start -= 1
    return pages[start:]


def _search_sessions(space: MemorySpace, query_vector, query_words: set[str], top: int) -> list[Item]:
    with stage("dense"):
        hits = search_dense(space, "sessions", query_vector, top * 4)
    with stage("rows"):
        sessions = retrieval_sql.session_rows(space.pk, [i for i, _ in hits])
    with stage("scoring"):
        return _rank_sessions(hits, sessions, query_words, top)


def _rank_sessions(hits: list[tuple[int, float]], sessions: dict, query_words: set[str], top: int) -> list[Item]:
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


def _scored(space: MemorySpace, name: str, query: str, query_vector, ids: set[int], dense: dict, lexical: dict):
    """Complete the dense and lexical scores of `ids` that the top-CANDIDATES searches did not reach."""
    missing_dense = [i for i in ids if i not in dense]
    if missing_dense:
        with stage("dense"):
            dense = dense | score_dense(space, name, query_vector, missing_dense)
    missing_lexical = {i for i in ids if i not in lexical}
    if missing_lexical:
        with stage("lexical"):
            found = search_lexical(space, name, query, len(missing_lexical), allowed=missing_lexical)
        lexical = lexical | dict(found)
    return dense, lexical


def _search_pages(
    space: MemorySpace,
    query: str,
    query_vector,
    lexical_hits: list[tuple[int, float]],
    top: int,
    earlier: list[PageRow],
) -> list[Item]:
    """The best pages: their match with the query (match_scores) lifted by their neighbours'. The mid-term
    pages are searched in the indexes; `earlier` (short-term pages said before the conversation in
    progress, outside the indexes) are scored alongside, with the pages index's BM25 statistics and their
    own vectors (store/index.py: page_vectors)."""
    with stage("dense"):
        dense_hits = search_dense(space, "pages", query_vector, CANDIDATES)
    candidates = {i for i, _ in dense_hits} | {i for i, _ in lexical_hits}
    if not candidates and not earlier:
        return []
    with stage("scoring"):
        pool = page_neighbourhood(space, candidates)  # id -> seq of the candidates and their neighbours
    dense, lexical = _scored(space, "pages", query, query_vector, set(pool), dict(dense_hits), dict(lexical_hits))
    best_lexical = lexical_hits[0][1] if lexical_hits else 0.0
    if earlier:
        with stage("embed"):
            vectors = page_vectors(earlier)
        with stage("lexical"):
            own = score_lexical_texts(space, "pages", query, {page.pk: page_document(page) for page in earlier})
        dense = dense | {page.pk: float(vectors[page.pk] @ query_vector) for page in earlier}
        lexical = lexical | {pid: score for pid, score in own.items() if score > 0}
        best_lexical = max(best_lexical, *own.values())
        pool = pool | {page.pk: page.seq for page in earlier}
    with stage("scoring"):
        match = match_scores(
            {i: dense[i] for i in pool if i in dense},
            {i: lexical[i] for i in pool if i in lexical},
            best_lexical,
            space.lexical_weight,
        )
        chained = chain_scores({i: match.get(i, 0.0) for i in pool}, pool, space.chain_weight)
        ranked = sorted(chained, key=lambda pid: (-chained[pid], pid))
    weight = memory_settings().said_weight
    head = ranked[:SAID_PAGES] if weight else []
    short = {page.pk: page for page in earlier}
    pages = _page_rows(space, head or ranked[:top], short)
    said, final = _said_scores(space, query, [pages[pid] for pid in head if pid in pages], chained, weight)
    best = [*sorted(head, key=lambda pid: (-final[pid], pid)), *ranked[len(head) :]][:top]
    pages |= _page_rows(space, [pid for pid in best if pid not in pages], short)
    items = []
    for pid in best:
        page = pages.get(pid)
        if page is None or (page.tier != Page.Tier.MID and pid not in short):
            continue
        scores = {
            "match": match.get(pid, 0.0),
            "chain": chained[pid] - match.get(pid, 0.0),
            "said": said.get(pid, 0.0),
            "dense": dense.get(pid, 0.0),
            "bm25": lexical.get(pid, 0.0),
        }
        items.append(_page_item(page, "page", final.get(pid, chained[pid]), scores))
    return items


def _page_rows(space: MemorySpace, ids: list[int], short: dict[int, PageRow]) -> dict[int, PageRow]:
    """id -> the page, for `ids`: those of `short` (already read) as they are, the rest in one query."""
    rows = {pid: short[pid] for pid in ids if pid in short}
    wanted = [pid for pid in ids if pid not in short]
    if wanted:
        with stage("rows"):
            rows |= retrieval_sql.page_rows(space.pk, wanted)
    return rows


def _said_scores(
    space: MemorySpace, query: str, head: list[PageRow], chained: dict[int, float], weight: float
) -> tuple[dict[int, float], dict[int, float]]:
    """The person's words matched alone, for the first pages of the ranking (`head`) whose reply is longer
    than a page may be shown (MEMORYOS_PAGE_TOKENS): each such page's "said" score (the BM25 of its user
    side with the pages index's statistics, scaled to the best of them) and every page's final score,
    `chained` + `weight` (MEMORYOS_SAID_WEIGHT) * said.

    Why: a page's document holds the assistant's reply too, and a long reply (LongMemEval's are 300 to 600
    tokens) dilutes the match of a fact the person mentioned in passing; BM25 over single turns ranked such
    turns higher. A short reply dilutes nothing, and there the person's words counted twice ranked LoCoMo's
    evidence lower, said by either friend (docs/benchmarks.md)."""
    if not weight or not head:
        return {}, dict(chained)
    limit = memory_settings().page_tokens
    words = {page.pk: page.user_input for page in head if estimate_tokens(page.agent_response) > limit}
    with stage("lexical"):
        raw = score_lexical_texts(space, "pages", query, words)
    scale = max(raw.values(), default=0.0) or 1.0
    said = {page.pk: raw.get(page.pk, 0.0) / scale for page in head}
    return said, {pid: chained[pid] + weight * said.get(pid, 0.0) for pid in chained}


def reranked_pages(query: str, pages: list[Item], reranker, weight: float) -> list[Item]:
    """The pages ranked again with the reranker (engine/reranker.py): each of the best RERANK_PAGES gains
    weight * (p - 0.5), p its likelihood of answering `query` (kept in its scores as "reranker"), and they are
    sorted again; the rest follow as they were. Pure apart from the reranker."""
    head, tail = pages[:RERANK_PAGES], pages[RERANK_PAGES:]
    for item, likelihood in zip(head, reranker.scores(query, [item.text for item in head]), strict=True):
        item.scores["reranker"] = round(float(likelihood), 4)
        item.score += weight * (float(likelihood) - 0.5)
    return sorted(head, key=lambda item: (-item.score, item.id)) + tail


def _rank_knowledge(
    space: MemorySpace, name: str, query: str, query_vector, lexical_hits: list[tuple[int, float]], top: int
) -> list[tuple[int, dict]]:
    """The ids of the best `top` entries of a knowledge index by match (`lexical_hits`: its BM25 search for
    `query`), each with its scores."""
    with stage("dense"):
        dense_hits = search_dense(space, name, query_vector, CANDIDATES)
    ids = {i for i, _ in dense_hits} | {i for i, _ in lexical_hits}
    dense, lexical = _scored(space, name, query, query_vector, ids, dict(dense_hits), dict(lexical_hits))
    best_lexical = lexical_hits[0][1] if lexical_hits else 0.0
    with stage("scoring"):
        match = match_scores(dense, lexical, best_lexical, space.lexical_weight)
        best = sorted(match, key=lambda eid: (-match[eid], eid))[:top]
    return [(eid, {"match": match[eid], "dense": dense.get(eid, 0.0), "bm25": lexical.get(eid, 0.0)}) for eid in best]


def _long_term_items(space: MemorySpace, *rankings: list[tuple[int, dict]]) -> list[list[Item]]:
    """The active profile (by attribute), then the entries of each ranking as items in its order; all
    read in one query (with the turns each came from)."""
    wanted = [eid for ranking in rankings for eid, _ in ranking]
    rows = retrieval_sql.entry_rows(space.pk, wanted, with_profile=True)
    by_id = {entry.pk: entry for entry in rows}
    out = [[_entry_item(e, 1.0, {}) for e in sorted(rows, key=lambda e: (e.key, e.pk)) if _is_profile(e, space)]]
    for ranking in rankings:
        items = []
        for eid, scores in ranking:
            entry = by_id.get(eid)
            if entry is not None and entry.status == LongTermEntry.Status.ACTIVE:
                items.append(_entry_item(entry, scores["match"], scores))
        out.append(items)
    return out


def _is_profile(entry: EntryRow, space: MemorySpace) -> bool:
    return (
        entry.space_id == space.pk
        and entry.kind == LongTermEntry.Kind.PROFILE
        and entry.status == LongTermEntry.Status.ACTIVE
    )


def _entry_item(entry: EntryRow, score: float, scores: dict) -> Item:
    return Item(
        kind=entry.kind,
        id=entry.pk,
        text=entry_text(entry.kind, entry.key, entry.value),
        score=score,
        scores=scores,
        provenance={
            "entry_id": entry.pk,
            "key": entry.key,
            "source_page_ids": sorted(page_id for page_id, _ in entry.sources),
            "source_pages": [{"page_id": page_id, "seq": seq} for page_id, seq in entry.sources],
            "updated_at": entry.updated_at.isoformat(),
        },
    )


def items_now(space: MemorySpace, refs: list[tuple[str, int, float]]) -> tuple[list[Item], int]:
    """The items `refs` name ((kind, id, score), as a reply recorded what it used), as the memory holds
    them now, in their order; and how many are gone (a page deleted, an entry forgotten or superseded since),
    which are left out. Two queries."""
    page_ids = [pk for kind, pk, _ in refs if kind in ("page", "short_term")]
    entry_ids = [pk for kind, pk, _ in refs if kind not in ("page", "short_term")]
    pages = retrieval_sql.page_rows(space.pk, page_ids)
    entries = {
        entry.pk: entry
        for entry in retrieval_sql.entry_rows(space.pk, entry_ids, with_profile=False)
        if entry.status == LongTermEntry.Status.ACTIVE
    }
    items = []
    for kind, pk, score in refs:
        if kind in ("page", "short_term") and pk in pages:
            items.append(_page_item(pages[pk], kind, score, {}))
        elif pk in entries:
            items.append(_entry_item(entries[pk], score, {}))
    return items, len(refs) - len(items)


def _fit(items: list[Item], budget_left: int) -> tuple[list[Item], int, list[Item]]:
    """Keep items in order while they fit the budget; returns kept, tokens used, the items left out."""
    kept, used, cut = [], 0, []
    for item in items:
        if used + item.tokens <= budget_left:
            kept.append(item)
            used += item.tokens
        else:
            cut.append(item)
    return kept, used, cut


def within_budget(
    found: Retrieval, budget: int, *, recent_share: float | None = None, profile_share: float | None = None
) -> Retrieval:
    """What of `found` a prompt of `budget` tokens shows, as a new Retrieval. Pure but for the settings'
    defaults of the shares (MEMORYOS_RECENT_SHARE, MEMORYOS_PROFILE_SHARE).

    The budget is spent in this order: the conversation in progress (`short_term`, newest first) within
    `recent_share` of the budget, the profile within `profile_share`, the pages by rank, user knowledge,
    assistant knowledge; an item that does not fit is left out (in `cut`) and a later, shorter one may still
    fit, and what a share does not use is left to the rest. What is left is filled with `found.filler`'s
    pages, in their order, after the pages: they never take the place of knowledge. `retrieve` assembles its
    context with it, and the evaluation's curves read one deep retrieval at several budgets with it."""
    cfg = memory_settings()
    recent_share = cfg.recent_share if recent_share is None else recent_share
    profile_share = cfg.profile_share if profile_share is None else profile_share
    result = Retrieval(query=found.query, sessions=found.sessions, token_budget=budget)
    left = budget
    newest_first, used = [], 0
    for place, item in enumerate(found.short_term[::-1]):  # the newest turns that fit, none skipped
        if used + item.tokens > int(budget * recent_share):
            result.cut += found.short_term[::-1][place:]
            break
        newest_first.append(item)
        used += item.tokens
    result.short_term = newest_first[::-1]
    left -= used
    for name in ("profile", "pages", "user_knowledge", "assistant_knowledge"):
        room = min(left, int(budget * profile_share)) if name == "profile" else left
        kept, used, cut = _fit(getattr(found, name), room)
        setattr(result, name, kept)
        left -= used
        result.cut += cut
    filled, used, _ = _fit(found.filler, left)
    result.pages, result.filled = [*result.pages, *filled], len(filled)
    left -= used
    result.tokens_used = budget - left
    for name in ("short_term", "profile", "user_knowledge", "assistant_knowledge"):
        setattr(result, name, [_because(item, name) for item in getattr(result, name)])
    matched = len(result.pages) - result.filled
    result.pages = [_because(item, "pages" if place < matched else "filler") for place, item in enumerate(result.pages)]
    result.cut = [_because(item, "") for item in result.cut]
    return result


WHY = {
    "short_term": "the conversation in progress",
    "profile": "the profile",
    "pages": "matches the question",
    "user_knowledge": "matches the question",
    "assistant_knowledge": "matches the question",
    "filler": "ranked next, shown for the room left",
    "": "left out: no room in the budget",
}


def _because(item: Item, section: str) -> Item:
    """A copy of the item saying why it is in the context (or left out), in its provenance's "why"."""
    return replace(item, provenance={**item.provenance, "why": WHY[section]})


def narrowed(deep: Retrieval, *, top_pages: int, top_knowledge: int, fill_pages: int, budget: int) -> Retrieval:
    """What `retrieve` finds at these depths and this budget, read off a deeper retrieval of the same query
    (`deep`: made with at least top_pages + fill_pages pages and top_knowledge entries of each knowledge,
    no filler, and a budget it all fits): each ranking is sorted before it is cut, so a shallower one is
    its start. One retrieval thus gives a reply its prompt and the answering path its deeper look (engine/
    recall.py: `retrievals`). Pure."""
    if deep.cut or deep.filled:
        raise ValueError("only a retrieval that nothing was cut from or filled can be narrowed")
    ranked = Retrieval(
        query=deep.query,
        short_term=deep.short_term,
        sessions=deep.sessions,
        profile=deep.profile,
        pages=deep.pages[:top_pages],
        filler=deep.pages[top_pages : top_pages + fill_pages],
        user_knowledge=deep.user_knowledge[:top_knowledge],
        assistant_knowledge=deep.assistant_knowledge[:top_knowledge],
    )
    return within_budget(ranked, budget)


def retrieve(
    space: MemorySpace,
    query: str,
    *,
    top_sessions: int | None = None,
    top_pages: int | None = None,
    top_knowledge: int | None = None,
    token_budget: int | None = None,
    fill_pages: int | None = None,
    count_hits: bool = True,
    now: datetime | None = None,
) -> Retrieval:
    """Everything the memory holds for `query`, within the token budget.

    The budget is spent as `within_budget` says: short-term (newest first), profile, mid-term pages,
    user knowledge, assistant knowledge; what does not fit is dropped and counted, and what is left is filled
    with the `fill_pages` pages ranked next (settings FILL_PAGES; 0: none), which are shown but do not count
    as hits: they are there because there was room, and heat stays what the ranked pages make it. Pages come
    before knowledge because they are what was said and knowledge is what an LLM made of it: on LoCoMo, at 1,500 tokens,
    knowledge first left out pages that held the evidence (docs/benchmarks.md). With `count_hits`, the
    sessions of the pages used and the knowledge used get a visit (changes heat); otherwise read-only.
    The depths, the budget and the weights are the space's parameters unless given here.
    Raises MemoryInputError for a query `inputs.query` refuses.
    """
    query = inputs.query(query)
    cfg = memory_settings()
    top_sessions = cfg.top_sessions if top_sessions is None else top_sessions
    top_pages = space.top_pages if top_pages is None else top_pages
    top_knowledge = space.top_knowledge if top_knowledge is None else top_knowledge
    budget = space.context_token_budget if token_budget is None else token_budget
    fill_pages = cfg.fill_pages if fill_pages is None else fill_pages
    now = now or timezone.now()
    names = [space.user.display_name, space.assistant.name] if cfg.retrieval_ignore_names else []
    topic = topic_query(query, names)
    page_query = dated_query(topic) if cfg.retrieval_dates else topic
    result = Retrieval(query=query, token_budget=budget)
    query_vector = encoded_beside(topic)  # on the other core, while this thread reads and searches the words
    with pinned_versions():  # every index searched as of one read of the space's version
        with stage("rows"):
            short_term = retrieval_sql.short_term_rows(space.pk)
        recent = in_progress(short_term, now, timedelta(minutes=cfg.conversation_gap_minutes))
        earlier = short_term[: len(short_term) - len(recent)]
        with stage("versions"):
            read_version(space)
        with stage("lexical"):
            lexical = {
                name: search_lexical(space, name, page_query if name == "pages" else topic, CANDIDATES)
                for name in ("pages", "user_knowledge", "assistant_knowledge")
            }
        with stage("embed"):
            vector = query_vector()
        result.sessions = _search_sessions(space, vector, set(content_tokens(topic)), top_sessions)
        ranked_pages = _search_pages(space, page_query, vector, lexical["pages"], top_pages + fill_pages, earlier)
        if space.reranker_weight and (reranker := get_reranker()) is not None:
            with stage("reranker"):
                ranked_pages = reranked_pages(query, ranked_pages, reranker, space.reranker_weight)
        user_ranking = _rank_knowledge(space, "user_knowledge", topic, vector, lexical["user_knowledge"], top_knowledge)
        assistant_ranking = _rank_knowledge(
            space, "assistant_knowledge", topic, vector, lexical["assistant_knowledge"], top_knowledge
        )
    with stage("rows"):
        profile, user_knowledge, assistant_knowledge = _long_term_items(space, user_ranking, assistant_ranking)
    limit = cfg.page_tokens * 4  # estimate_tokens' four characters a token
    short = [shown_by_excerpt(_page_item(p, "short_term", 1.0, {}), query, limit) for p in recent]
    ranked_pages = [shown_by_excerpt(item, query, limit) for item in ranked_pages]

    result.short_term, result.profile = short, profile
    result.pages, result.filler = ranked_pages[:top_pages], ranked_pages[top_pages:]
    result.user_knowledge, result.assistant_knowledge = user_knowledge, assistant_knowledge
    result = within_budget(result, budget)

    if count_hits:
        with stage("hits"):
            record_hits(space, result, now)
    return result


def record_hits(space: MemorySpace, result: Retrieval, now: datetime | None = None) -> None:
    """Count a retrieval's hits (retrieve's `count_hits`), for a caller that retrieved without them and
    used the result after all (a chat reply, once complete).

    One transaction for every hit of a retrieval, after any write to the space in progress
    (writes.hold_space: so the two never deadlock). On PostgreSQL it commits without waiting for the
    write-ahead log to reach the disk: a hit only warms a session, so a crash may lose the last few
    (the database stays consistent), and a retrieval, which is on the request path, does not wait for
    an fsync."""
    # A filler is no hit; a short-term page has no session yet.
    session_ids = sorted({p.provenance["session_id"] for p in result.matched_pages if p.provenance["session_id"]})
    entry_ids = [item.id for item in (*result.user_knowledge, *result.assistant_knowledge)]
    if not session_ids and not entry_ids:
        return
    now = now or timezone.now()
    with transaction.atomic():
        hold_space(space.pk, quick_commit=True)
        sessions_record_hits(space, session_ids, now)
        retrieval_sql.entries_hit(space.pk, entry_ids, now)
