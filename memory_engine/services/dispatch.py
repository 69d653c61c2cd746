"""Where work runs: in a Celery worker once the current transaction commits (the default), or here and
now when MEMORYOS_CONSOLIDATION is "inline" (tests, demos without a broker, the benchmarks). This is the
one place that decides; every door asks for work through the functions below.

A stored turn's consolidation is coalesced: the first turn of a space sends a job that starts
MEMORYOS_CONSOLIDATION_DELAY_SECONDS later, and the turns the space gets until then send nothing, since
that job reads what is pending when it starts and so takes them too. A busy space's turns then move in
one job (one batch of embeddings, one transaction) rather than a job each. The marker that says "a job
is on its way" lives in Django's cache for the delay and is set before the job is sent, so a turn that
finds it was committed before that job starts. With a per-process cache (no CACHE_URL) each process
coalesces its own turns; a marker lost, or a job lost with the broker, leaves the work to the periodic
sweep.

Tasks are sent by name (jobs/tasks.py defines them, a door over these services, as the views are); the
task objects are looked up in the Celery app, so a setting such as CELERY_TASK_ALWAYS_EAGER applies.
"""

import contextlib
import logging
import time
from collections.abc import Callable, Iterable

from celery import current_app
from django.core.cache import cache
from django.db import transaction

from memory_engine.config import memory_settings
from memory_engine.models import BackgroundJob, Experiment, ImportJob, ImportUpload, MemorySpace
from memory_engine.services.background import (
    background_run,
    background_stalled,
    background_unsent,
    comparison_create,
    erase_create,
    restore_create,
)
from memory_engine.services.comparison import Probe
from memory_engine.services.consolidation import (
    ConsolidationRequest,
    close_lost_retries,
    recently_failed,
    run_consolidation,
    spaces_with_pending_work,
)
from memory_engine.services.imports import (
    import_create,
    import_run,
    import_unsent,
    imports_stalled,
    room_for_bulk_work,
    upload_import_create,
)
from memory_engine.services.uploads import refusal_of, upload_receive, uploads_expire
from memory_engine.store import index

logger = logging.getLogger(__name__)

# The tasks' names (jobs/tasks.py).
CONSOLIDATE = "memory_engine.consolidate_space"
SWEEP = "memory_engine.sweep_pending"
RUN_IMPORT = "memory_engine.run_import"
RUN_BACKGROUND_JOB = "memory_engine.run_background_job"


def send(task: str, args: list, kwargs: dict | None = None, *, countdown: float = 0) -> bool:
    """Queue the task named `task`, to start `countdown` seconds from now. False (logged) when the broker
    cannot be reached: what was stored stays stored, and the workers' periodic sweep finds pending
    consolidation once the broker is back."""
    found = current_app.tasks[task]  # a name no task has is a mistake to fail on, not a broker down
    try:
        found.apply_async(args=args, kwargs=kwargs or {}, retry=False, countdown=countdown or None)
        return True
    except Exception as exc:  # kombu raises several connection error types
        logger.warning("%s%s not queued (%s)", task, tuple(args), exc)
        return False


def enqueue(space_id: int, *, retry_now: bool = False) -> bool:
    """Send a consolidation task for the space now. With `retry_now`, promotion does not wait out the
    cooldown after a failed job."""
    return send(CONSOLIDATE, [space_id], {"retry_now": True} if retry_now else {})


def inline() -> bool:
    """True when work runs in the calling process (MEMORYOS_CONSOLIDATION=inline)."""
    return memory_settings().consolidation == "inline"


def dispatch(
    *,
    here: Callable[[], object],
    task: str,
    args: list,
    kwargs: dict | None = None,
    unqueued: Callable[[], object] | None = None,
    countdown: float = 0,
    queue_if: Callable[[], bool] | None = None,
) -> None:
    """Run `here()` now when inline; otherwise send `task` once the current transaction commits (at
    once outside one), so a worker never looks for rows that are not committed yet; it starts
    `countdown` seconds later. After the commit, `queue_if()` may say the task is not needed;
    `unqueued()` runs when the broker cannot be reached."""
    if inline():
        here()
        return

    def queue() -> None:
        if queue_if is not None and not queue_if():
            return
        if not send(task, args, kwargs or {}, countdown=countdown) and unqueued is not None:
            unqueued()

    transaction.on_commit(queue)


def consolidation_delay() -> int:
    return max(0, memory_settings().consolidation_delay_seconds)


def _job_on_its_way_key(space_id: int) -> str:
    return f"memoryos:consolidation-on-its-way:{space_id}"


def _forget(key: str) -> None:
    with contextlib.suppress(Exception):  # should the cache be down too, the marker expires within the delay
        cache.delete(key)


def request_consolidation(space: MemorySpace) -> None:
    """Consolidate the space (after a stored turn): a job starts after the delay unless one sent for an
    earlier turn has yet to start (see the module's note). LLM failures never reach the caller; they
    are on record in the ConsolidationRun."""
    delay = consolidation_delay()
    key = _job_on_its_way_key(space.pk)

    def first_in_its_window() -> bool:
        # The marker is set before the job is sent, and lasts `delay` seconds (whole ones, as Redis
        # keeps them): it is gone by the time the job starts.
        if delay == 0:
            return True
        try:
            return cache.add(key, 1, timeout=delay)
        except Exception as exc:  # the cache's server is down: send a job for this turn, as without a delay
            logger.warning("consolidation of space %s: the cache cannot be reached (%s)", space.pk, exc)
            return True

    dispatch(
        here=lambda: run_consolidation(ConsolidationRequest(space.pk)),
        task=CONSOLIDATE,
        args=[space.pk],
        countdown=delay,
        queue_if=first_in_its_window,
        unqueued=lambda: _forget(key),  # the next turn tries again
    )


def request_retry(space: MemorySpace) -> None:
    """Consolidate the space again after a failed job, without waiting out the failure cooldown."""
    dispatch(
        here=lambda: run_consolidation(ConsolidationRequest(space.pk, retry_now=True)),
        task=CONSOLIDATE,
        args=[space.pk],
        kwargs={"retry_now": True},
    )


def import_start(*, space: MemorySpace, turns: list[dict], source: str) -> ImportJob:
    """Record the import and have it run; inline, the job is finished on return. With the broker down
    the job waits, queued, and the workers' sweep sends it once the broker is back. Raises TooMuchBulkWork
    when whoever holds the space has as many imports and replays unfinished as they may."""
    room_for_bulk_work(space)
    job = import_create(space=space, turns=turns, source=source)
    import_send(job)
    return job


def _job_send(job: ImportJob | BackgroundJob, *, run: Callable[[int], object], task: str, unsent) -> None:
    """Have a recorded job run: `task` sent to a worker once the transaction commits, or `run` here,
    inline (then `job` is refreshed, over); `unsent` marks it for the sweep when the broker is down."""
    dispatch(here=lambda: run(job.pk), task=task, args=[job.pk], unqueued=lambda: unsent(job.pk))
    if inline():
        job.refresh_from_db()


def upload_start(
    *, space: MemorySpace, chunks: Iterable[bytes], name: str, check: Callable[[], None] = lambda: None, wait=False
) -> ImportUpload:
    """Keep the file the chunks make and have it checked in the background (services/uploads.py): returns the
    upload, being checked, or the same file brought before. Inline, or with `wait` (the Python class), it
    returns once the check is over, and a file the check refuses raises its refusal, nothing kept. Raises
    what upload_receive raises."""
    upload, job = upload_receive(space=space, chunks=chunks, name=name, check=check)
    if job is None:
        return upload
    background_send(job)
    if not (inline() or wait):
        return upload
    deadline = time.monotonic() + memory_settings().upload_wait_seconds + UPLOAD_WAIT_MARGIN_SECONDS
    upload.refresh_from_db()
    while upload.status == ImportUpload.Status.CHECKING and time.monotonic() < deadline:
        time.sleep(UPLOAD_POLL_SECONDS)
        upload.refresh_from_db()
    if (refused := refusal_of(upload)) is not None:
        upload.delete()
        raise refused
    return upload


UPLOAD_POLL_SECONDS = 0.25
UPLOAD_WAIT_MARGIN_SECONDS = 60  # a check bounds itself by MEMORYOS_UPLOAD_WAIT_SECONDS; a worker takes it first


def upload_import_start(*, upload: ImportUpload, chosen: list[str] | None) -> ImportJob:
    """Record the import of the conversations `chosen` from a file brought to import (all when None), and
    have it run, as import_start does. Raises what services.imports.upload_import_create raises."""
    job = upload_import_create(upload=upload, chosen=chosen)
    import_send(job)
    return job


def import_send(job: ImportJob) -> None:
    """Have a recorded import run (services/imports.py)."""
    _job_send(job, run=import_run, task=RUN_IMPORT, unsent=import_unsent)


def background_send(job: BackgroundJob) -> None:
    """Have a recorded restore or comparison run (services/background.py)."""
    _job_send(job, run=background_run, task=RUN_BACKGROUND_JOB, unsent=background_unsent)


def restore_start(*, space: MemorySpace, document: object) -> BackgroundJob:
    """Check a space's export whole and have a worker restore it into the empty `space` (inline: restored
    on return). Raises what services/restore.restore_check raises, and TooMuchBulkWork when whoever holds the
    space has a restore or comparison unfinished; then nothing is stored."""
    job = restore_create(space=space, document=document)
    background_send(job)
    return job


def comparison_start(*, experiment: Experiment, probes: list[Probe], k: int) -> BackgroundJob:
    """Have a worker compare the experiment with its source (inline: compared on return). Raises what
    services/comparison.probes_check raises, and TooMuchBulkWork as restore_start does."""
    job = comparison_create(experiment=experiment, probes=probes, k=k)
    background_send(job)
    return job


def turn_erase_start(*, page, sentence: str | None = None, index: int | None = None) -> BackgroundJob:
    """Have a worker erase the turn's every word, or one whole sentence of it (as written, or by its index),
    wherever they are (inline: erased on return). Raises InvalidParameter, recording nothing, for a sentence
    that is not a whole sentence of the turn."""
    job = erase_create(page=page, sentence=sentence, index=index)
    background_send(job)
    return job


def sweep() -> int:
    """Queue consolidation for every space whose tiers are due for it, whatever happened to earlier
    messages (lost, broker down, worker killed), except spaces whose last job failed within the
    cooldown (a broken LLM endpoint is not hammered); close jobs whose retry never came; send again the
    imports, restores and comparisons never sent or left by a dead worker; remove the index folders of
    deleted spaces from this machine's disk, and the files brought to import that have had their time.
    Returns how many spaces were queued."""
    index.prune_deleted_spaces()
    uploads_expire()
    close_lost_retries()
    for job_id in imports_stalled():
        send(RUN_IMPORT, [job_id])
    for job_id in background_stalled():
        send(RUN_BACKGROUND_JOB, [job_id])
    space_ids = sorted(set(spaces_with_pending_work()) - recently_failed())
    for space_id in space_ids:
        enqueue(space_id)
    if space_ids:
        logger.info("sweep: queued consolidation of %d space(s)", len(space_ids))
    return len(space_ids)
