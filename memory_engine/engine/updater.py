"""The updating module: the only code that moves memory between tiers.

    short-term --overflow--> mid-term sessions --heat >= tau--> long-term profile and knowledge
                                      \\--over capacity--> evicted (pages archived, kept in the database)

Short-term to mid-term needs no LLM: continuity, the thread summary, keywords, session matching and
session summaries are computed from embeddings and words (extractive, so nothing is invented).
Promotion makes one structured LLM call per batch of unanalysed pages; with a weak model (the bundled
one) it makes none and keeps the person's own statements (long_term.extraction_from_words): asked, a
135M model only chose among those statements, slowly (72 s for one batch on a busy machine), and lost some.

Every step is a short transaction with the space locked; LLM calls and embedding happen outside any
transaction. Each step re-checks the state it read, so running consolidation twice, or in two processes,
moves nothing twice. An LLM failure stores nothing: the pages stay unanalysed for the next run.
"""

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields
from datetime import datetime

import numpy as np
from django.utils import timezone

from memory_engine.config import memory_settings
from memory_engine.engine import long_term, mid_term
from memory_engine.engine.heat import heat_params, is_hot
from memory_engine.engine.llm_choice import llm_for
from memory_engine.engine.prompts import (
    EXTRACTION_MAX_TOKENS,
    EXTRACTION_SCHEMA_NAME,
    extraction_messages,
    extraction_schema,
)
from memory_engine.engine.short_term import overflow_pages
from memory_engine.engine.summaries import thread_summary
from memory_engine.language.keywords import extract_keywords
from memory_engine.llm import LLM, LLMError
from memory_engine.models import HeatEvent, MemorySpace, MidTermSession, Page
from memory_engine.store.embeddings import from_bytes, get_embedder, to_bytes
from memory_engine.store.writes import rows_update, space_write

logger = logging.getLogger(__name__)


@dataclass
class RunCounts:
    """What consolidation did and cost, counted the same everywhere: the updater's report, a run's record
    (ConsolidationRun has a field of each name), an ingestion's totals and the API's runs."""

    pages_moved: int = 0
    sessions_promoted: int = 0
    sessions_evicted: int = 0
    items_stored: int = 0
    llm_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @staticmethod
    def names() -> tuple[str, ...]:
        return tuple(f.name for f in fields(RunCounts))

    def add_counts(self, other: object) -> None:
        """Add `other`'s counts (a RunCounts, or a ConsolidationRun) to these."""
        for name in RunCounts.names():
            setattr(self, name, getattr(self, name) + getattr(other, name))


@dataclass
class ConsolidationReport(RunCounts):
    model: str = ""  # the model asked, when one was (what its tokens cost depends on it)
    sessions_created: int = 0
    sessions_merged: int = 0
    items_rejected: list[str] = field(default_factory=list)
    failures: list[LLMError] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        return [str(failure) for failure in self.failures]

    def add(self, other: "ConsolidationReport") -> "ConsolidationReport":
        """This report with `other`'s work added (a second pass of the same job)."""
        self.add_counts(other)
        self.model = other.model or self.model
        self.sessions_created += other.sessions_created
        self.sessions_merged += other.sessions_merged
        self.items_rejected += other.items_rejected
        self.failures += other.failures
        return self


def consolidate(
    space: MemorySpace,
    *,
    now: datetime | None = None,
    llm: LLM | None = None,
    heartbeat: Callable[[], None] | None = None,
    promote: bool = True,
    keep_short: int | None = None,
) -> ConsolidationReport:
    """Bring a space's tiers into line with its parameters: move short-term overflow to mid-term (the pages
    beyond `keep_short` when given: 0 moves them all), promote every hot session that has unanalysed pages,
    evict sessions beyond capacity.

    Safe to repeat and to run concurrently: work already done is not done again. LLM errors are
    recorded in the report's `failures` (and logged), not raised; what they would have stored is left
    for next time. `heartbeat` is called between steps, e.g. to renew a lease on the space. With
    `promote=False` the LLM step is skipped (the other moves need no LLM).
    """
    now = now or timezone.now()
    beat = heartbeat or (lambda: None)
    report = ConsolidationReport()
    move_short_term_to_mid_term(space, now=now, report=report, keep=keep_short)
    beat()
    if promote:
        promote_hot_sessions(space, now=now, llm=llm, report=report, heartbeat=beat)
    beat()
    evict_sessions(space, now=now, report=report)
    return report


# --- Short-term -> mid-term -------------------------------------------------------------------------


@dataclass
class _Segment:
    """A run of pages that continue one another; they go to one session together."""

    pages: list[Page]
    rows: list[int]  # their rows in the batch's vector matrix
    continues_session: int | None  # session of the page before, when the first page continues it
    vectors: np.ndarray | None = None


def continues_thread(gap_seconds: float, similarity: float) -> bool:
    """Does a page continue the thread of the page before it? Yes when it follows soon and stays near
    the topic. (The reference asked the LLM.) A topic coming back later is the merge rule's business."""
    cfg = memory_settings()
    return 0 <= gap_seconds <= cfg.continuity_gap_seconds and similarity >= cfg.continuity_min_similarity


def _continuity(prev: Page | None, prev_vector: np.ndarray | None, page: Page, vector: np.ndarray) -> bool:
    if prev is None or prev_vector is None:
        return False
    gap = (page.timestamp - prev.timestamp).total_seconds()
    return continues_thread(gap, float(np.dot(prev_vector, vector)))


def move_short_term_to_mid_term(
    space: MemorySpace, *, now: datetime, report: ConsolidationReport, keep: int | None = None
) -> None:
    """Move the pages beyond short-term capacity (or beyond `keep`) into mid-term sessions, oldest first:
    embedded in one batch, each run of continuing pages placed in one session."""
    pages = overflow_pages(space, keep=keep)
    if not pages:
        return
    embedder = get_embedder()
    vectors = embedder.encode([p.text for p in pages])
    prev = Page.objects.filter(space=space, seq__lt=pages[0].seq).order_by("-seq").first()
    prev_vector = from_bytes(prev.embedding, embedder.dim) if prev is not None and prev.embedding else None
    thread = space.thread_summary
    segments: list[_Segment] = []
    for i, page in enumerate(pages):
        vector = vectors[i]
        page.continues_previous = _continuity(prev, prev_vector, page, vector)
        page.keywords = extract_keywords([page.text], k=mid_term.PAGE_KEYWORDS)
        thread = thread_summary(thread if page.continues_previous else "", page.text)
        page.thread_summary = thread
        page.embedding = to_bytes(vector)
        if page.continues_previous and segments:
            segments[-1].pages.append(page)
            segments[-1].rows.append(i)
        else:
            continues = prev.session_id if page.continues_previous and prev is not None else None
            segments.append(_Segment([page], [i], continues))
        prev, prev_vector = page, vector
    for segment in segments:
        segment.vectors = vectors[segment.rows]

    with space_write(space.pk) as write:
        locked = write.space
        ids = [p.id for p in pages]
        if Page.objects.filter(id__in=ids, tier=Page.Tier.SHORT).count() != len(ids):
            return  # another consolidation moved them first
        version = write.version
        params = heat_params(locked)
        sessions = mid_term.active_sessions(locked)
        for segment in segments:
            _place_segment(locked, segment, sessions, version=version, params=params, now=now, report=report)
        MemorySpace.objects.filter(pk=space.pk).update(thread_summary=thread)
        space.thread_summary = thread
    report.pages_moved += len(pages)


_MOVED_FIELDS = ["tier", "session", "continues_previous", "thread_summary", "keywords", "embedding", "vector_version"]


def _place_segment(space, segment: _Segment, sessions, *, version, params, now, report) -> None:
    """Put a run of continuous pages into one session: the one they continue, the best match at or
    above theta, or a new one. A page is only ever in one session.

    A run is matched by how it begins: its first page's vector and keywords, which is what matching it
    a turn at a time sees (the pages after the first continue the session it joined). So the sessions a
    conversation makes do not depend on how many of its turns were consolidated at once: a chat's, an
    import's chunk of 128 or a replay's. (Matched by the run's centroid, a long run of LoCoMo talk looked
    like any other and joined it: 2 sessions for a conversation of 185 pages, where a turn at a time made 11.)"""
    embedder = get_embedder()
    first = segment.pages[0]
    by_id = {s.pk: s for s in sessions}
    target = by_id.get(segment.continues_session)
    if target is None:
        opening = extract_keywords([first.text], k=mid_term.SESSION_KEYWORDS)
        match = mid_term.best_session(sessions, segment.vectors[0], opening, embedder.dim)
        if match.session is not None and match.score >= space.merge_theta:
            target = match.session
    cause = HeatEvent.Cause.MERGED
    if target is None:
        centroid = segment.vectors.mean(axis=0)
        centroid /= np.linalg.norm(centroid) or 1.0
        target = MidTermSession.objects.create(
            space=space,
            summary="",
            keywords=extract_keywords([p.text for p in segment.pages], k=mid_term.SESSION_KEYWORDS),
            embedding=to_bytes(centroid),
            last_visit_at=now,
            vector_version=version,
        )
        sessions.append(target)
        cause = HeatEvent.Cause.CREATED
        report.sessions_created += 1
    else:
        report.sessions_merged += 1
    for page in segment.pages:
        page.tier, page.session, page.vector_version = Page.Tier.MID, target, version
    rows_update(segment.pages, _MOVED_FIELDS)
    target.l_interaction += len(segment.pages)
    MidTermSession.objects.filter(pk=target.pk).update(l_interaction=target.l_interaction)
    mid_term.session_refresh(target, version=version)
    mid_term.record_heat(target, cause, params, now, mid_term.Turn.of(segment.pages[-1]))


# --- Mid-term -> long-term ------------------------------------------------------------------------


def promote_hot_sessions(
    space: MemorySpace,
    *,
    now: datetime,
    llm: LLM | None,
    report: ConsolidationReport,
    force: bool = False,
    heartbeat: Callable[[], None] | None = None,
) -> None:
    """Promote every active session whose heat is at or above the threshold (every one, with `force`)
    and that still has unanalysed pages. A hot session with nothing to analyse is simply skipped. For a
    weak model the hot sessions are read by words together, their facts embedded in one encode (a history's
    chunk heats dozens of sessions at once)."""
    params = heat_params(space)
    candidates = (
        MidTermSession.objects.filter(
            space=space, status=MidTermSession.Status.ACTIVE, pages__analyzed=False, pages__tier=Page.Tier.MID
        )
        .distinct()
        .order_by("pk")
    )
    hot = []
    for session in candidates:
        current = mid_term.session_heat(session, params, now)
        if force or is_hot(current, space.heat_threshold):
            hot.append(session)
        elif session.heat >= space.heat_threshold:
            mid_term.session_cooled(session, current)
    if not hot:
        return
    if llm is None:
        try:
            llm = llm_for(space)
        except LLMError as exc:  # the space's endpoint cannot be used: a failure like the LLM's own
            logger.warning("space %s: %s", space.pk, exc)
            report.failures.append(exc)
            return
    for group in _read_together(hot):
        read = _read_by_words({s.pk: batches for s, batches in group}, get_embedder()) if llm.weak else {}
        for session, batches in group:
            promote_session(
                space, session, now=now, llm=llm, report=report, heartbeat=heartbeat, batches=batches, read=read
            )
            if report.failures:
                return  # the LLM is failing: leave the other sessions for the next run


READ_TOGETHER_PAGES = 512  # a weak model's promotion reads and embeds about this many pages' facts at once


def _read_together(sessions: list[MidTermSession]) -> Iterator[list[tuple[MidTermSession, list[list[Page]]]]]:
    """Each session with its unanalysed batches, in groups of about READ_TOGETHER_PAGES pages (a session's
    pages are never split): what one encode of their facts holds stays bounded, whatever a lowered threshold
    makes hot at once."""
    group, pages = [], 0
    for session in sessions:
        batches = _unanalysed_batches(session)
        group.append((session, batches))
        pages += sum(len(batch) for batch in batches)
        if pages >= READ_TOGETHER_PAGES:
            yield group
            group, pages = [], 0
    if group:
        yield group


def _unanalysed_batches(session: MidTermSession) -> list[list[Page]]:
    """The session's pages still to analyse, oldest first, a batch per LLM call."""
    pages = list(Page.objects.filter(session=session, analyzed=False, tier=Page.Tier.MID).order_by("seq"))
    size = memory_settings().promotion_pages_per_call
    return [pages[start : start + size] for start in range(0, len(pages), size)]


Read = dict[tuple[int, int], tuple[long_term.Extraction, np.ndarray]]  # (session, batch) -> extraction, vectors


def promote_session(
    space: MemorySpace,
    session: MidTermSession,
    *,
    now: datetime,
    llm: LLM,
    report: ConsolidationReport,
    heartbeat: Callable[[], None] | None = None,
    batches: list[list[Page]] | None = None,
    read: Read | None = None,
) -> bool:
    """Mine the session's unanalysed pages for profile values and knowledge, a batch per LLM call (for a
    weak model, no call: the batch's own statements, long_term.extraction_from_words). `batches` and `read`
    are the session's batches and a weak model's reading of them, when the caller has them.

    Each batch is stored, and its pages marked analysed, in one transaction; a batch another process
    handled first is skipped. On an LLM error the rest stays unanalysed and the session keeps its heat.
    When every page is analysed, N_visit and L_interaction restart from zero. Returns True when done.
    """
    batches = _unanalysed_batches(session) if batches is None else batches
    embedder = get_embedder()
    if llm.weak and read is None:
        read = _read_by_words({session.pk: batches}, embedder)
    for number, batch in enumerate(batches):
        if llm.weak:
            extraction, vectors = read[(session.pk, number)]
        else:
            numbered = [(i + 1, p.user_input, p.memory_reply) for i, p in enumerate(batch)]
            before = llm.usage()
            try:
                data, _ = llm.structured(
                    extraction_messages(numbered),
                    schema=extraction_schema(numbered),
                    schema_name=EXTRACTION_SCHEMA_NAME,
                    max_tokens=EXTRACTION_MAX_TOKENS,
                )
            except LLMError as exc:
                logger.warning("promotion of session %s stopped: %s", session.pk, exc)
                report.failures.append(exc)
                return False
            finally:
                used = llm.usage() - before
                report.llm_calls += used.calls
                report.prompt_tokens += used.prompt_tokens
                report.completion_tokens += used.completion_tokens
                report.model = llm.model
            extraction = long_term.validate_extraction(data, batch)
            vectors = embedder.encode([f.fact for f in extraction.facts])
        report.items_rejected += extraction.rejected
        with space_write(space.pk) as write:
            ids = [p.id for p in batch]
            if Page.objects.filter(id__in=ids, analyzed=False).count() != len(ids):
                continue  # another process analysed this batch first
            long_term.apply_extraction(write.space, extraction, vectors, now=now, version=write.version)
            Page.objects.filter(id__in=ids).update(analyzed=True)
            report.items_stored += len(extraction.profile) + len(extraction.facts)
        if heartbeat:
            heartbeat()
    with space_write(space.pk):
        session = MidTermSession.objects.get(pk=session.pk)
        if session.pages.filter(analyzed=False, tier=Page.Tier.MID).exists():
            return False
        params, turn = heat_params(space), mid_term.turn_of_session(session)
        # the heat that crossed the threshold, placed at the last turn that changed the session
        mid_term.record_heat(session, HeatEvent.Cause.PROMOTED, params, now, turn)
        session.n_visit = session.l_interaction = 0
        session.promoted_at = now
        session.save(update_fields=["n_visit", "l_interaction", "promoted_at"])
        mid_term.record_heat(session, HeatEvent.Cause.COOLED, params, now, turn)  # counted again from zero
    report.sessions_promoted += 1
    return True


def _read_by_words(batches: dict[int, list[list[Page]]], embedder) -> Read:
    """A weak model's extraction of each session's batches (long_term.extraction_from_words: no LLM call),
    with its facts' vectors, all the facts embedded in one encode (a history promotes many pages at once)."""
    extractions = {
        (session, number): long_term.extraction_from_words(batch)
        for session, session_batches in batches.items()
        for number, batch in enumerate(session_batches)
    }
    vectors = embedder.encode([f.fact for extraction in extractions.values() for f in extraction.facts])
    read, start = {}, 0
    for key, extraction in extractions.items():
        read[key] = (extraction, vectors[start : start + len(extraction.facts)])
        start += len(extraction.facts)
    return read


# --- Eviction --------------------------------------------------------------------------------------


def eviction_order(sessions: list[MidTermSession], policy: str, space: MemorySpace, now: datetime):
    """Sessions in the order they should be evicted: lowest heat now (the paper), or least
    frequently used, oldest visit first (the reference code's rule)."""
    if policy == MemorySpace.Eviction.LFU:
        return sorted(sessions, key=lambda s: (s.total_visits, s.last_visit_at, s.pk))
    params = heat_params(space)
    return sorted(sessions, key=lambda s: (mid_term.session_heat(s, params, now), s.last_visit_at, s.pk))


def evict_sessions(space: MemorySpace, *, now: datetime, report: ConsolidationReport) -> None:
    """Evict sessions beyond the space's mid-term capacity. Their pages are archived, not deleted:
    long-term entries keep pointing at the pages they came from."""
    if MidTermSession.objects.filter(space=space, status=MidTermSession.Status.ACTIVE).count() <= space.mtm_capacity:
        return  # within capacity: no need to lock the space (a write) to find that out
    with space_write(space.pk) as write:
        locked = write.space
        sessions = mid_term.active_sessions(locked)
        excess = len(sessions) - locked.mtm_capacity
        if excess <= 0:
            return
        version = write.version
        params = heat_params(locked)
        for session in eviction_order(sessions, locked.eviction_policy, locked, now)[:excess]:
            session.status, session.evicted_at, session.vector_version = (
                MidTermSession.Status.EVICTED,
                now,
                version,
            )
            session.save(update_fields=["status", "evicted_at", "vector_version"])
            session.pages.update(tier=Page.Tier.ARCHIVED, vector_version=version)
            newest = Page.objects.filter(space=locked).order_by("-seq").only("seq", "timestamp").first()
            turn = mid_term.Turn.of(newest) if newest else None  # the turn that made it one too many
            mid_term.record_heat(session, HeatEvent.Cause.EVICTED, params, now, turn)
            report.sessions_evicted += 1
