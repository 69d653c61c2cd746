"""Ingestion: a whole conversation stored turn by turn as if it were being said, the space consolidated
after each turn as a worker would after a chat turn (the lease, a ConsolidationRun on record), so the
tiers fill as they would in a chat. The one way in for imports, the LoCoMo evaluation and the scale
benchmark; what it did and cost is counted in one place, `IngestCounters`."""

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime

from django.db import transaction

from memory_engine.engine.short_term import page_store
from memory_engine.engine.updater import RunCounts
from memory_engine.llm import LLM
from memory_engine.models import ConsolidationRun, MemorySpace, Page
from memory_engine.services.consolidation import ConsolidationRequest, run_consolidation


@dataclass(frozen=True)
class TurnIn:
    """One turn to ingest: the user's words, the reply, when it was said, meta data kept with it, and
    whether the reply was withheld (an experiment replays such a turn as it was stored)."""

    user_input: str
    agent_response: str
    timestamp: datetime | None = None
    meta: dict | None = None
    reply_withheld: bool = False
    reply_source: str = Page.ReplySource.GIVEN


@dataclass
class IngestCounters(RunCounts):
    """What an ingestion did and what it cost: the sums of its consolidation runs, and the time of
    each turn (storing it, the request path; storing and consolidating it, the whole add)."""

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
    """Store one turn, then consolidate the space here and now, and count both in `counters`.

    `with_store(page)` runs in the transaction that stores the turn (an import records the turn there
    under a unique key, so a repeated job never stores a turn twice); what it raises rolls the page
    back. `promotion=False` makes only the moves that need no LLM; `llm` replaces the configured one;
    `retry_now` does not let a failed promotion wait out the cooldown (an evaluation whose figures must
    not depend on how fast the machine is). Raises what page_store raises for a bad turn; then nothing
    is stored.
    """
    began = time.perf_counter()
    with transaction.atomic():
        page = page_store(
            space=space,
            user_input=turn.user_input,
            agent_response=turn.agent_response,
            timestamp=turn.timestamp,
            meta=turn.meta,
            reply_withheld=turn.reply_withheld,
            reply_source=turn.reply_source,
        )
        if with_store is not None:
            with_store(page)
    stored = time.perf_counter()
    request = ConsolidationRequest(
        space.pk, kind=ConsolidationRun.Kind.IMPORT, llm=llm, promotion=promotion, retry_now=retry_now
    )
    _, run = run_consolidation(request)
    done = time.perf_counter()
    counters.turns += 1
    counters.count(run)
    counters.store_ms.append((stored - began) * 1000)
    counters.add_ms.append((done - began) * 1000)
    return page


def ingest(
    space: MemorySpace,
    turns: Iterable[TurnIn],
    *,
    llm: LLM | None = None,
    promotion: bool = True,
    retry_now: bool = False,
    progress: Callable[[int], object] | None = None,
) -> IngestCounters:
    """Ingest the turns in order (ingest_turn); `progress(n)` after the n-th. Returns the counters."""
    counters = IngestCounters()
    started = time.perf_counter()
    for number, turn in enumerate(turns, start=1):
        ingest_turn(space, turn, counters, llm=llm, promotion=promotion, retry_now=retry_now)
        if progress is not None:
            progress(number)
    counters.seconds = time.perf_counter() - started
    return counters
