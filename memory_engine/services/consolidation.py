"""Consolidation: the updater run off the request path, once per space at a time, on record; its runs read.

- A chat turn stores its page and asks for consolidation after its transaction commits
  (`services.dispatch.request_consolidation`); the request never waits for it.
- A worker claims the space with a lease (a conditional UPDATE: "another worker got there first"),
  renews it between steps, and releases it when done. Two workers never consolidate one space at once;
  different spaces run in parallel.
- What is pending is read from the database (`has_pending_work`, `spaces_with_pending_work`), not
  from queue messages, so a duplicated message does nothing and a lost one is found by the sweep.
- Every job that finds work leaves a ConsolidationRun: kind, status, attempts, LLM calls and tokens,
  duration, error (`runs` lists them).
"""

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone

from memory_engine import inputs
from memory_engine.config import memory_settings
from memory_engine.engine import updater
from memory_engine.engine.short_term import short_term_pages
from memory_engine.llm import LLM
from memory_engine.models import ConsolidationRun, MemorySpace, MidTermSession, Page
from memory_engine.store.changes import announce

logger = logging.getLogger(__name__)

# What a run counts and records (its LLM calls, tokens, pages moved, ...): the fields of updater.RunCounts.
RUN_COUNTS: tuple[str, ...] = updater.RunCounts.names()


class LeaseLost(RuntimeError):
    """The space's lease expired and another worker took it over; stop writing."""


# --- What is pending --------------------------------------------------------------------------------


def _pending_spaces(space_id: int | None = None, *, promotion: bool = True) -> set[int]:
    """The rules of what is due, for every space or just one, in one query: short-term overflow,
    sessions over capacity, and (with `promotion`) hot sessions with unanalysed pages."""

    def counted(rows) -> Coalesce:
        return Coalesce(Subquery(rows.values("space").annotate(n=Count("id")).values("n")), 0)

    active = MidTermSession.objects.filter(space=OuterRef("pk"), status=MidTermSession.Status.ACTIVE)
    due = Q(short_pages__gt=F("stm_capacity")) | Q(active_sessions__gt=F("mtm_capacity"))
    spaces = MemorySpace.objects.annotate(
        short_pages=counted(Page.objects.filter(space=OuterRef("pk"), tier=Page.Tier.SHORT)),
        active_sessions=counted(active),
    )
    if promotion:
        # The stored heat is the heat at its last change; recency only lowers it since, so this is a
        # superset of what is due. The updater checks each session's heat exactly.
        hot = active.filter(heat__gte=OuterRef("heat_threshold"), pages__tier=Page.Tier.MID, pages__analyzed=False)
        spaces = spaces.annotate(hot=Exists(hot))
        due |= Q(hot=True)
    if space_id is not None:
        spaces = spaces.filter(pk=space_id)
    return set(spaces.filter(due).values_list("pk", flat=True))


def spaces_with_pending_work() -> list[int]:
    """Ids of the spaces whose tiers are out of line with their parameters. Read-only."""
    return sorted(_pending_spaces())


def has_pending_work(space: MemorySpace, *, promotion: bool = True) -> bool:
    """Is any tier move due? With `promotion=False`, only the moves that need no LLM count."""
    return space.pk in _pending_spaces(space.pk, promotion=promotion)


# --- The lease --------------------------------------------------------------------------------------


def lease_seconds() -> float:
    return memory_settings().consolidation_lease_seconds


def claim_space(space_id: int, owner: str) -> bool:
    """Take the space's consolidation lease if nobody holds a live one. True when taken."""
    now = timezone.now()
    free = (
        Q(consolidation_lease_until__isnull=True) | Q(consolidation_lease_until__lt=now) | Q(consolidation_owner=owner)
    )
    taken = MemorySpace.objects.filter(free, pk=space_id).update(
        consolidation_owner=owner, consolidation_lease_until=now + timedelta(seconds=lease_seconds())
    )
    return taken == 1


def renew_lease(space_id: int, owner: str) -> None:
    """Extend our lease; raises LeaseLost if it expired and someone else holds it now."""
    renewed = MemorySpace.objects.filter(pk=space_id, consolidation_owner=owner).update(
        consolidation_lease_until=timezone.now() + timedelta(seconds=lease_seconds())
    )
    if renewed != 1:
        raise LeaseLost(f"space {space_id}: the consolidation lease passed to another worker")


def lease_heartbeat(space_id: int, owner: str) -> Callable[[], None]:
    """What a job calls between its steps: renew the lease just taken, at most every tenth of its length.
    A lease renewed less long ago than that can neither have expired nor passed to another worker, so
    renewing it then would only write (a commit, flushed to disk) and change nothing."""
    renewed = time.monotonic()

    def beat() -> None:
        nonlocal renewed
        if time.monotonic() - renewed >= lease_seconds() / 10:
            renew_lease(space_id, owner)
            renewed = time.monotonic()

    return beat


def release_space(space_id: int, owner: str) -> None:
    MemorySpace.objects.filter(pk=space_id, consolidation_owner=owner).update(
        consolidation_owner="", consolidation_lease_until=None
    )


# --- Running a job ----------------------------------------------------------------------------------


class Outcome:
    NOTHING_TO_DO = "nothing to do"
    BUSY = "another worker holds the space"
    DONE = "done"
    RETRY = "retry"
    FAILED = "failed"


@dataclass(frozen=True)
class ConsolidationRequest:
    """One consolidation job of a space: the Celery task's id and attempt (`final_attempt`: no retry
    follows), its kind (ANALYSIS: promote every session now, an admin's action), `retry_now` (promotion
    does not wait out MEMORYOS_CONSOLIDATION_FAILURE_COOLDOWN_SECONDS after a failed job), `promotion`
    (False: only the moves that need no LLM), `llm` (instead of the space's) and `settle` (the whole
    short-term memory moves to mid-term: history_settle)."""

    space_id: int
    task_id: str = ""
    attempt: int = 1
    final_attempt: bool = True
    kind: str = ConsolidationRun.Kind.CONSOLIDATE
    retry_now: bool = False
    promotion: bool = True
    llm: LLM | None = None
    settle: bool = False


def run_consolidation(request: ConsolidationRequest) -> tuple[str, ConsolidationRun | None]:
    """Consolidate one space if it has work and no other worker has it; record the run.

    Returns (outcome, run). Safe to repeat: with nothing pending, or the space gone, or held by another
    worker, it does nothing and records nothing. A transient LLM failure gives RETRY (the run stays
    "retrying") unless this is the final attempt; a permanent one, or the final attempt, gives FAILED.
    Pages an LLM failure kept from moving stay where they are, for the next run. After a failed job,
    promotion waits out the cooldown unless the request says `retry_now`.
    """
    space_id, task_id, llm = request.space_id, request.task_id, request.llm
    space = MemorySpace.objects.filter(pk=space_id).first()
    if space is None:
        logger.info("consolidation: space %s is gone", space_id)
        return Outcome.NOTHING_TO_DO, None
    forced = request.kind == ConsolidationRun.Kind.ANALYSIS
    # After a failed job, promotion (the LLM step) waits out the cooldown; the other moves go on.
    promote = forced or (request.promotion and (request.retry_now or space.pk not in recently_failed(space.pk)))

    def pending() -> bool:
        settling = request.settle and short_term_pages(space).exists()
        return settling or has_pending_work(space, promotion=promote)

    if not forced and not pending():
        _stand_down(space, task_id)
        return Outcome.NOTHING_TO_DO, None
    if not forced and _retry_on_its_way(space, task_id):
        return Outcome.BUSY, None
    owner = f"{task_id or 'local'}:{uuid.uuid4().hex[:8]}"
    if not claim_space(space_id, owner):
        _stand_down(space, task_id)  # the holder does what is pending
        return Outcome.BUSY, None
    run = None
    try:
        if not forced and not pending():  # done by the previous holder
            _stand_down(space, task_id)
            return Outcome.NOTHING_TO_DO, None
        run = _open_run(space, task_id=task_id, attempt=request.attempt, kind=request.kind)
        started = time.monotonic()
        heartbeat = lease_heartbeat(space_id, owner)
        if forced:
            report = updater.ConsolidationReport()
            updater.promote_hot_sessions(
                space, now=timezone.now(), llm=llm, report=report, force=True, heartbeat=heartbeat
            )
        else:
            keep_short = 0 if request.settle else None
            report = updater.consolidate(space, llm=llm, heartbeat=heartbeat, promote=promote, keep_short=keep_short)
            # Turns stored while we worked: take them too rather than leave them to the sweep.
            for _ in range(MAX_EXTRA_PASSES):
                if report.failures or not has_pending_work(space, promotion=promote):
                    break
                report.add(updater.consolidate(space, llm=llm, heartbeat=heartbeat, promote=promote))
        outcome = _close_run(run, report, started, final_attempt=request.final_attempt)
        return outcome, run
    except LeaseLost as exc:
        if run is not None:
            _fail(run, str(exc), status=ConsolidationRun.Status.FAILED)
        return Outcome.FAILED, run
    except Exception as exc:
        if run is not None:
            _fail(run, f"{type(exc).__name__}: {exc}", status=ConsolidationRun.Status.FAILED)
        raise
    finally:
        release_space(space_id, owner)


MAX_EXTRA_PASSES = 5


def history_settle(space: MemorySpace, *, retry_now: bool = False, llm: LLM | None = None) -> None:
    """After a history is imported: the space's whole short-term memory moves to the mid-term sessions it
    belongs to, and the hot ones are promoted, as run_consolidation does. Short-term memory is the
    conversation going on; an imported history is over, and what it taught shows at once (the sessions,
    the entries).

    When another worker holds the space (a promotion waiting on its LLM), the moves are made here all the
    same: they need no LLM, and the updater's steps re-check what they read, so they are safe beside it;
    the promotions they make due are left to its next pass, or the workers' sweep."""
    request = ConsolidationRequest(
        space.pk, kind=ConsolidationRun.Kind.IMPORT, retry_now=retry_now, llm=llm, settle=True
    )
    outcome, _ = run_consolidation(request)
    if outcome == Outcome.BUSY:
        updater.consolidate(space, promote=False, keep_short=0)


def _retry_due_since() -> datetime:
    """A job that stopped waiting to retry before this moment is overdue: its retry message was lost."""
    cfg = memory_settings()
    return timezone.now() - timedelta(seconds=cfg.consolidation_retry_cap_seconds + lease_seconds())


def _retry_on_its_way(space: MemorySpace, task_id: str) -> bool:
    """Is another job of this space waiting to retry? Then it owns the pending work, and a duplicate
    does not hit a failing LLM again meanwhile. A retry overdue (its message lost) owns nothing."""
    waiting = ConsolidationRun.objects.filter(
        space=space, status=ConsolidationRun.Status.RETRYING, finished_at__gte=_retry_due_since()
    )
    return waiting.exclude(task_id=task_id).exists() if task_id else waiting.exists()


def _stand_down(space: MemorySpace, task_id: str) -> None:
    """This job's retry finds its work done (by an admin's forced analysis, or a duplicate that got in
    first) or being done by the worker holding the space: close its run rather than leave it waiting to
    retry for ever (the chat page would show "consolidating" for ever)."""
    if task_id:
        ConsolidationRun.objects.filter(space=space, task_id=task_id, status=ConsolidationRun.Status.RETRYING).update(
            status=ConsolidationRun.Status.SUPERSEDED, finished_at=timezone.now()
        )
        announce(space.pk)


def close_lost_retries() -> int:
    """Mark failed every job still waiting for a retry that is overdue (its message was lost, say with
    the broker's data). A job with pending work does this too when it opens its run; the sweep does it
    for spaces with nothing left to do. Returns how many runs were closed."""
    return ConsolidationRun.objects.filter(
        status=ConsolidationRun.Status.RETRYING, finished_at__lt=_retry_due_since()
    ).update(status=ConsolidationRun.Status.FAILED, error=LOST_RETRY, finished_at=timezone.now())


LOST_RETRY = "its retry never came (message lost)"


def recently_failed(space_id: int | None = None) -> set[int]:
    """Spaces (all, or just this one) whose latest job that called the LLM failed within the cooldown:
    their promotion waits, so a broken LLM endpoint is not called again and again. A job that made
    only the moves that need no LLM (the next chat turn's) says nothing about the LLM."""
    since = timezone.now() - timedelta(seconds=memory_settings().consolidation_failure_cooldown_seconds)
    runs = ConsolidationRun.objects.filter(
        Q(status=ConsolidationRun.Status.FAILED) | Q(llm_calls__gt=0), started_at__gte=since
    )
    if space_id is not None:
        runs = runs.filter(space_id=space_id)
    latest = {}
    for run_space, status in runs.order_by("started_at", "pk").values_list("space_id", "status"):
        latest[run_space] = status
    return {space_id for space_id, status in latest.items() if status == ConsolidationRun.Status.FAILED}


def _open_run(space: MemorySpace, *, task_id: str, attempt: int, kind: str) -> ConsolidationRun:
    # We hold the lease, so a run of this space still marked running belongs to a worker that died,
    # and one waiting to retry past its time had its retry message lost.
    announce(space.pk)  # a run starts
    others = ConsolidationRun.objects.filter(space=space).exclude(task_id=task_id or "-")
    now = timezone.now()
    others.filter(status=ConsolidationRun.Status.RUNNING).update(
        status=ConsolidationRun.Status.FAILED, error="the worker was lost mid-run", finished_at=now
    )
    if not _retry_on_its_way(space, task_id):
        others.filter(status=ConsolidationRun.Status.RETRYING).update(
            status=ConsolidationRun.Status.FAILED, error=LOST_RETRY, finished_at=now
        )
    if task_id:
        run = ConsolidationRun.objects.filter(task_id=task_id, space=space).first()
        if run is not None:  # a retry of the same job
            run.status, run.attempts, run.error, run.finished_at = ConsolidationRun.Status.RUNNING, attempt, "", None
            run.save(update_fields=["status", "attempts", "error", "finished_at"])
            return run
    return ConsolidationRun.objects.create(
        space=space, kind=kind, task_id=task_id, attempts=attempt, started_at=timezone.now()
    )


def _close_run(run: ConsolidationRun, report: updater.ConsolidationReport, started: float, *, final_attempt: bool):
    for name in RUN_COUNTS:  # what a run records of its report
        setattr(run, name, getattr(run, name) + getattr(report, name))
    run.items_rejected += len(report.items_rejected)
    run.model = report.model or run.model
    run.duration_ms += int((time.monotonic() - started) * 1000)
    run.finished_at = timezone.now()
    outcome = Outcome.DONE
    run.status = ConsolidationRun.Status.SUCCEEDED
    if report.failures:
        transient = all(getattr(f, "transient", False) for f in report.failures)
        outcome = Outcome.RETRY if transient and not final_attempt else Outcome.FAILED
        run.status = ConsolidationRun.Status.RETRYING if outcome == Outcome.RETRY else ConsolidationRun.Status.FAILED
        run.error = "; ".join(report.errors)[:4000]
    run.save()
    announce(run.space_id)
    return outcome


def _fail(run: ConsolidationRun, error: str, *, status: str) -> None:
    ConsolidationRun.objects.filter(pk=run.pk).update(status=status, error=error[:4000], finished_at=timezone.now())
    announce(run.space_id)


def retry_backoff(attempt: int) -> float:
    """Seconds before retry number `attempt` (1, 2, ...): doubling from the base, capped."""
    cfg = memory_settings()
    return min(cfg.consolidation_retry_cap_seconds, cfg.consolidation_retry_base_seconds * 2 ** (attempt - 1))


def runs(space: MemorySpace, *, status: object = None) -> QuerySet:
    """The space's consolidation runs (of `status`, when given), newest first."""
    wanted = inputs.one_of(status, "status", ConsolidationRun.Status.values)
    found = ConsolidationRun.objects.filter(space=space)
    return (found if wanted is None else found.filter(status=wanted)).order_by("-started_at", "-pk")
