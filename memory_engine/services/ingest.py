"""Ingestion: a whole conversation stored in order, a chunk of turns at a time, the space consolidated after
each chunk as a worker would after a busy chat (the lease, a ConsolidationRun on record), so the tiers fill
as they would in a chat: the bulk path of history. A chunk is stored in one transaction, and its pages are
embedded in one batch when they move to mid-term; a chunk of one turn is the chat's own way, turn by turn.
The one way in for imports, replays, the LoCoMo evaluation and the scale benchmark; what it did and cost is
counted in one place, `IngestCounters`."""

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import islice

from django.db import transaction

from memory_engine.config import memory_settings
from memory_engine.engine.short_term import TurnIn, pages_store
from memory_engine.engine.updater import RunCounts
from memory_engine.llm import LLM
from memory_engine.models import ConsolidationRun, MemorySpace, Page
from memory_engine.services import spoken_curation
from memory_engine.services.consolidation import ConsolidationRequest, run_consolidation


@dataclass
class IngestCounters(RunCounts):
    """What an ingestion did and what it cost: the sums of its consolidation runs, and the time of
    each chunk (storing it: for a chunk of one turn, the request path; storing and consolidating it, the whole
    add)."""

    turns: int = 0
    items_rejected: int = 0
    errors: list[str] = field(default_factory=list)
    store_ms: list[float] = field(default_factory=list)
    add_ms: list[float] = field(default_factory=list)
    seconds: float = 0.0

    def count(self, run: ConsolidationRun | None) -> None:
        """Add what a consolidation run did (None: there was nothing to do, or another job had it)."""
        if run is None:
            return
        self.add_counts(run)
        self.items_rejected += run.items_rejected
        if run.error:
            self.errors.append(run.error)


def ingest_chunk(
    space: MemorySpace,
    turns: list[TurnIn],
    counters: IngestCounters,
    *,
    llm: LLM | None = None,
    promotion: bool = True,
    retry_now: bool = False,
    with_store: Callable[[list[Page]], object] | None = None,
) -> list[Page]:
    """Store the turns in one transaction, then consolidate the space once, here and now, and count both in
    `counters` (the chunk's store and add times, once).

    The consolidation moves the chunk's overflow to mid-term in one pass: its pages embedded in one batch,
    their sessions found, refreshed and heated once each, then the hot sessions promoted in batches of
    MEMORYOS_PROMOTION_PAGES_PER_CALL pages (updater.consolidate), as after a busy chat.

    `with_store(pages)` runs in the transaction that stores them (an import records them there under unique
    keys, so a repeated job never stores a turn twice); what it raises rolls them back. `promotion=False`
    makes only the moves that need no LLM; `llm` replaces the configured one; `retry_now` does not let a
    failed promotion wait out the cooldown (an evaluation whose figures must not depend on how fast the
    machine is). A turn that asks the memory to forget something has it forgotten, of what was told before it,
    as the chat would have (spoken_curation.forget_as_asked). Raises what pages_store raises for a bad turn;
    then nothing is stored.
    """
    began = time.perf_counter()
    with transaction.atomic():
        pages = pages_store(space=space, turns=turns)
        for page in pages:  # "please forget my address" in a history is carried out, as the chat does
            spoken_curation.forget_as_asked(space, page)
        if with_store is not None:
            with_store(pages)
    stored = time.perf_counter()
    request = ConsolidationRequest(
        space.pk, kind=ConsolidationRun.Kind.IMPORT, llm=llm, promotion=promotion, retry_now=retry_now
    )
    _, run = run_consolidation(request)
    done = time.perf_counter()
    counters.turns += len(pages)
    counters.count(run)
    counters.store_ms.append((stored - began) * 1000)
    counters.add_ms.append((done - began) * 1000)
    return pages


def ingest_turn(
    space: MemorySpace,
    turn: TurnIn,
    counters: IngestCounters,
    *,
    llm: LLM | None = None,
    promotion: bool = True,
    retry_now: bool = False,
    with_store: Callable[[Page], object] | None = None,
) -> Page:
    """Store one turn, then consolidate the space, as after a chat turn (ingest_chunk of one turn)."""
    after = None if with_store is None else (lambda pages: with_store(pages[0]))
    options = {"llm": llm, "promotion": promotion, "retry_now": retry_now}
    return ingest_chunk(space, [turn], counters, with_store=after, **options)[0]


def ingest(
    space: MemorySpace,
    turns: Iterable[TurnIn],
    *,
    llm: LLM | None = None,
    promotion: bool = True,
    retry_now: bool = False,
    chunk_turns: int | None = None,
    progress: Callable[[int], object] | None = None,
) -> IngestCounters:
    """Ingest the turns in order, `chunk_turns` at a time (ingest_chunk; by default
    MEMORYOS_INGEST_CHUNK_TURNS; 1 is turn by turn, as a chat); `progress(n)` after each chunk, n the turns
    stored so far. Returns the counters."""
    size = max(1, chunk_turns or memory_settings().ingest_chunk_turns)
    counters = IngestCounters()
    started = time.perf_counter()
    order = iter(turns)
    while chunk := list(islice(order, size)):
        ingest_chunk(space, chunk, counters, llm=llm, promotion=promotion, retry_now=retry_now)
        if progress is not None:
            progress(counters.turns)
    counters.seconds = time.perf_counter() - started
    return counters
