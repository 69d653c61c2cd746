"""Where work runs: in a Celery worker once the current transaction commits (the default), or here and
now when MEMORYOS_CONSOLIDATION is "inline" (tests, demos without a broker, the benchmarks). This is the
one place that decides; every door asks for work through the functions below."""

from collections.abc import Callable

from celery import Task
from django.conf import settings
from django.db import transaction

from memory_engine.jobs.consolidation import run_consolidation
from memory_engine.jobs.imports import import_create, import_run, import_unsent
from memory_engine.jobs.tasks import consolidate_space, run_import, send
from memory_engine.models import ImportJob, MemorySpace


def inline() -> bool:
    """True when work runs in the calling process (MEMORYOS_CONSOLIDATION=inline)."""
    return settings.MEMORYOS["CONSOLIDATION"] == "inline"


def dispatch(
    *,
    here: Callable[[], object],
    task: Task,
    args: list,
    kwargs: dict | None = None,
    unqueued: Callable[[], object] | None = None,
) -> None:
    """Run `here()` now when inline; otherwise send `task` once the current transaction commits (at
    once outside one), so a worker never looks for rows that are not committed yet. `unqueued()` runs
    when the broker cannot be reached."""
    if inline():
        here()
        return

    def queue() -> None:
        if not send(task, args, kwargs or {}) and unqueued is not None:
            unqueued()

    transaction.on_commit(queue)


def request_consolidation(space: MemorySpace) -> None:
    """Consolidate the space (after a stored turn). LLM failures never reach the caller; they are on
    record in the ConsolidationRun."""
    dispatch(here=lambda: run_consolidation(space.pk), task=consolidate_space, args=[space.pk])


def request_retry(space: MemorySpace) -> None:
    """Consolidate the space again after a failed job, without waiting out the failure cooldown."""
    dispatch(
        here=lambda: run_consolidation(space.pk, retry_now=True),
        task=consolidate_space,
        args=[space.pk],
        kwargs={"retry_now": True},
    )


def import_start(*, space: MemorySpace, turns: list[dict], source: str) -> ImportJob:
    """Record the import and have it run; inline, the job is finished on return. With the broker down
    the job waits, queued, and the workers' sweep sends it once the broker is back."""
    job = import_create(space=space, turns=turns, source=source)
    dispatch(
        here=lambda: import_run(job.pk),
        task=run_import,
        args=[job.pk],
        unqueued=lambda: import_unsent(job.pk),
    )
    if inline():
        job.refresh_from_db()
    return job
