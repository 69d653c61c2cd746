"""Celery tasks: thin, named, taking ids. The work is in consolidation.py (and the engine's updater)
and imports.py; dispatch.py decides whether a task is queued or run in process."""

import logging
import os
import time

from celery import Task, shared_task
from celery.signals import worker_init, worker_ready
from django.conf import settings

from memory_engine.jobs.background import background_run, background_stalled
from memory_engine.jobs.consolidation import (
    ConsolidationRequest,
    Outcome,
    close_lost_retries,
    recently_failed,
    retry_backoff,
    run_consolidation,
    spaces_with_pending_work,
)
from memory_engine.jobs.imports import import_run, imports_stalled
from memory_engine.jobs.uploads import uploads_expire
from memory_engine.store import index
from memory_engine.store.embeddings import get_embedder

logger = logging.getLogger(__name__)


@shared_task(name="memory_engine.consolidate_space", bind=True)
def consolidate_space(self, space_id: int, retry_now: bool = False) -> str:
    """Consolidate a space if it has work and no other worker holds it. Idempotent: a repeated or
    duplicated delivery finds nothing pending (or the space busy) and does nothing. Transient LLM
    failures retry with doubling backoff up to MEMORYOS_CONSOLIDATION_MAX_RETRIES."""
    max_retries = settings.MEMORYOS["CONSOLIDATION_MAX_RETRIES"]
    attempt = self.request.retries + 1
    outcome, _ = run_consolidation(
        ConsolidationRequest(
            space_id,
            task_id=self.request.id or "",
            attempt=attempt,
            final_attempt=self.request.retries >= max_retries,
            retry_now=retry_now,
        )
    )
    if outcome == Outcome.RETRY:
        raise self.retry(countdown=retry_backoff(attempt), max_retries=max_retries)
    return outcome


@shared_task(name="memory_engine.sweep_pending")
def sweep_pending() -> int:
    """Queue consolidation for every space whose tiers are due for it, whatever happened to earlier
    messages (lost, broker down, worker killed), except spaces whose last job failed within the
    cooldown (a broken LLM endpoint is not hammered); jobs whose retry never came are closed; imports,
    restores and comparisons never sent or left by a dead worker are sent again; index folders of
    deleted spaces are removed from this worker's disk, and files brought to import that have had their
    time. Returns how many spaces were queued."""
    index.prune_deleted_spaces()
    uploads_expire()
    close_lost_retries()
    for job_id in imports_stalled():
        send(run_import, [job_id], {})
    for job_id in background_stalled():
        send(run_background_job, [job_id], {})
    space_ids = sorted(set(spaces_with_pending_work()) - recently_failed())
    for space_id in space_ids:
        enqueue(space_id)
    if space_ids:
        logger.info("sweep: queued consolidation of %d space(s)", len(space_ids))
    return len(space_ids)


def send(task: Task, args: list, kwargs: dict, *, countdown: float = 0) -> bool:
    """Queue the task, to start `countdown` seconds from now. False (logged) when the broker cannot be
    reached: what was stored stays stored, and the workers' periodic sweep finds pending consolidation
    once the broker is back."""
    try:
        task.apply_async(args=args, kwargs=kwargs, retry=False, countdown=countdown or None)
        return True
    except Exception as exc:  # kombu raises several connection error types
        logger.warning("%s%s not queued (%s)", task.name, tuple(args), exc)
        return False


def enqueue(space_id: int, *, retry_now: bool = False) -> bool:
    """Send a consolidation task for the space now. With `retry_now`, promotion does not wait out the
    cooldown after a failed job."""
    return send(consolidate_space, [space_id], {"retry_now": True} if retry_now else {})


@worker_init.connect
def lower_priority_on_start(**kwargs) -> None:
    """A worker yields the CPU to the web process (MEMORYOS_WORKER_NICE): a person waits on a reply, nobody
    on a consolidation. Set before the pool starts, so its processes and every thread they make inherit
    it (on Linux a niceness is a thread's)."""
    if settings.MEMORYOS_WORKER_NICE > 0:
        niceness = os.nice(settings.MEMORYOS_WORKER_NICE)
        logger.info("worker niceness %d", niceness)


@worker_ready.connect
def load_embedding_model_on_start(**kwargs) -> None:
    """Load the embedding model before the first task rather than inside it: loading takes 6 s, more on
    a busy machine, and a job renews its lease on a space only between steps, so a first job that loaded
    the model could outlive a short lease and have its space taken over (seen in the worker tests)."""
    began = time.monotonic()
    get_embedder()
    logger.info("embedding model loaded in %.1f s; taking tasks", time.monotonic() - began)


@worker_ready.connect
def sweep_on_start(**kwargs) -> None:
    """A worker that starts (again) first looks for work left behind."""
    sweep_pending.delay()


@shared_task(name="memory_engine.run_import")
def run_import(job_id: int) -> None:
    """Import a conversation (imports.import_run) on the bulk queue, a chunk of
    MEMORYOS_IMPORT_CHUNK_SECONDS at a time: after each the task sends itself again, behind whatever was
    queued meanwhile (a chat turn's consolidation). A repeated delivery goes on from where it stopped."""
    if not import_run(job_id, seconds=settings.MEMORYOS["IMPORT_CHUNK_SECONDS"]):
        send(run_import, [job_id], {})  # if the broker is down, the sweep sends it once it is back


@shared_task(name="memory_engine.run_background_job")
def run_background_job(job_id: int) -> None:
    """Restore an export or compare an experiment (background.background_run) on the bulk queue, a part of
    MEMORYOS_IMPORT_CHUNK_SECONDS at a time: after each the task sends itself again, behind whatever was
    queued meanwhile. A repeated delivery does nothing."""
    if not background_run(job_id, seconds=settings.MEMORYOS["IMPORT_CHUNK_SECONDS"]):
        send(run_background_job, [job_id], {})
