"""Celery tasks: thin, named, taking ids, a door over the services as the views are. The work is in
services/consolidation.py (and the engine's updater), services/imports.py and services/background.py;
services/dispatch.py decides whether a task is queued or run in process, and sends these by name."""

import logging
import os
import time

from celery import shared_task
from celery.signals import worker_init, worker_ready

from memory_engine.config import memory_settings
from memory_engine.services import dispatch, operations
from memory_engine.services.background import background_run
from memory_engine.services.consolidation import ConsolidationRequest, Outcome, retry_backoff, run_consolidation
from memory_engine.services.imports import import_run

logger = logging.getLogger(__name__)


@shared_task(name=dispatch.CONSOLIDATE, bind=True)
def consolidate_space(self, space_id: int, retry_now: bool = False) -> str:
    """Consolidate a space if it has work and no other worker holds it. Idempotent: a repeated or
    duplicated delivery finds nothing pending (or the space busy) and does nothing. Transient LLM
    failures retry with doubling backoff up to MEMORYOS_CONSOLIDATION_MAX_RETRIES."""
    max_retries = memory_settings().consolidation_max_retries
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


@shared_task(name=dispatch.SWEEP)
def sweep_pending() -> int:
    """Look for work left behind and send it (services.dispatch.sweep); returns how many spaces were
    queued for consolidation."""
    return dispatch.sweep()


@worker_init.connect
def lower_priority_on_start(**kwargs) -> None:
    """A worker yields the CPU to the web process (MEMORYOS_WORKER_NICE): a person waits on a reply, nobody
    on a consolidation. Set before the pool starts, so its processes and every thread they make inherit
    it (on Linux a niceness is a thread's)."""
    if memory_settings().worker_nice > 0:
        niceness = os.nice(memory_settings().worker_nice)
        logger.info("worker niceness %d", niceness)


@worker_ready.connect
def load_embedding_model_on_start(**kwargs) -> None:
    """Load the embedding model before the first task rather than inside it: loading takes 6 s, more on
    a busy machine, and a job renews its lease on a space only between steps, so a first job that loaded
    the model could outlive a short lease and have its space taken over."""
    began = time.monotonic()
    operations.embedding_model_load()
    logger.info("embedding model loaded in %.1f s; taking tasks", time.monotonic() - began)


@worker_ready.connect
def sweep_on_start(**kwargs) -> None:
    """A worker that starts (again) first looks for work left behind."""
    sweep_pending.delay()


@shared_task(name=dispatch.RUN_IMPORT)
def run_import(job_id: int) -> None:
    """Import a conversation (services.imports.import_run) on the bulk queue, a chunk of
    MEMORYOS_IMPORT_CHUNK_SECONDS at a time: after each the task sends itself again, behind whatever was
    queued meanwhile (a chat turn's consolidation). A repeated delivery goes on from where it stopped."""
    if not import_run(job_id, seconds=memory_settings().import_chunk_seconds):
        dispatch.send(dispatch.RUN_IMPORT, [job_id])  # if the broker is down, the sweep sends it once it is back


@shared_task(name=dispatch.RUN_BACKGROUND_JOB)
def run_background_job(job_id: int) -> None:
    """Restore an export or compare an experiment (services.background.background_run) on the bulk queue, a
    part of MEMORYOS_IMPORT_CHUNK_SECONDS at a time: after each the task sends itself again, behind whatever
    was queued meanwhile. A repeated delivery does nothing."""
    if not background_run(job_id, seconds=memory_settings().import_chunk_seconds):
        dispatch.send(dispatch.RUN_BACKGROUND_JOB, [job_id])
