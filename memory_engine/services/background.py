"""Work too heavy for a web request, done by a worker: a space's export restored (into a space, or into an
experiment's shadow space: a fork from an export), and an experiment compared with its source. A 300-page
restore once held a request for 67 s and a 200-question comparison for 68 s, and three at once left no
request place for anyone else.

A door checks the request whole (as the work itself would), records a BackgroundJob and answers 202; the
job runs on the bulk queue (or here, inline) and leaves its result on the row for the door to poll. Whoever
holds a space has one restore or comparison unfinished at a time (and MEMORYOS_UPLOAD_CHECKS_AT_ONCE
checks). A job is taken by one worker (queued -> running, a single update), so a message delivered twice
runs it once; one whose worker died is queued again by the workers' sweep after
MEMORYOS_IMPORT_STALL_SECONDS.

On a worker, a job runs a part of MEMORYOS_IMPORT_CHUNK_SECONDS at a time, then goes back to the queue
behind whatever came meanwhile (another account's consolidation): an 8 MB restore once held the only worker
for 407 s. A restore embeds its texts a part at a time (the vectors made so far kept in a file beside the
files brought to import), then stores its rows in one transaction (nothing of it stays if that fails); a
comparison compares a few probes a part, its results so far kept on the row.
"""

import time
from collections.abc import Sequence
from datetime import timedelta
from pathlib import Path

import numpy as np
from django.db.models import Q
from django.utils import timezone

from memory_engine.config import memory_settings
from memory_engine.documents import BackgroundJobCard, JobProgressDoc
from memory_engine.engine.erasure import erase_statement, erase_turn, turn_texts
from memory_engine.errors import TooMuchBulkWork
from memory_engine.models import BackgroundJob, Experiment, MemorySpace, Page
from memory_engine.services.comparison import Probe, comparison_of, probe_compared, probes_check, sides_turn_ids
from memory_engine.services.restore import restore_check, restore_texts, space_restore
from memory_engine.services.uploads import upload_check_part
from memory_engine.store import import_files
from memory_engine.store.changes import announce
from memory_engine.store.embeddings import get_embedder
from memory_engine.store.holders import same_holder

UNFINISHED = (BackgroundJob.Status.QUEUED, BackgroundJob.Status.RUNNING)


def room_for_background_job(space: MemorySpace) -> None:
    """Raise TooMuchBulkWork when whoever holds `space` has a restore or comparison unfinished."""
    if BackgroundJob.objects.filter(Q(status__in=UNFINISHED) & same_holder(space)).exists():
        raise TooMuchBulkWork("a restore or comparison of yours is still running; wait for it to end")


def restore_create(
    *, space: MemorySpace, document: object, parameters: dict | None = None, holder: MemorySpace | None = None
) -> BackgroundJob:
    """Record the restore of `document` (a space's export, kept as checked) into the empty `space`, its
    parameters but for `parameters`, after checking it whole (services/restore.restore_check raises what is
    wrong); dispatch's `background_send` has it run. `holder`: the space whose holder the job counts against (an
    experiment's source, for its shadow space), if not `space`."""
    checked = restore_check(space=space, document=document, parameters=parameters)
    room_for_background_job(holder or space)
    # What was checked is kept, not the document as sent: a key the export ignores is not stored (a NUL in
    # one is a value PostgreSQL's JSON cannot hold), and a user's export keeps only the space restored.
    request = {"export": checked.model_dump(mode="json"), "parameters": parameters or {}}
    return BackgroundJob.objects.create(
        space=space, kind=BackgroundJob.Kind.RESTORE, request=request, touched_at=timezone.now()
    )


def comparison_create(*, experiment: Experiment, probes: Sequence[Probe], k: int) -> BackgroundJob:
    """Record a comparison of the experiment with its source for `probes` (checked first: what
    services/comparison.probes_check raises), a job of the source's space."""
    probes_check(probes, k)
    room_for_background_job(experiment.source)
    request = {
        "experiment": experiment.pk,
        "probes": [[p.question, list(p.evidence), p.category] for p in probes],
        "k": k,
    }
    return BackgroundJob.objects.create(
        space=experiment.source, kind=BackgroundJob.Kind.COMPARISON, request=request, touched_at=timezone.now()
    )


def erase_create(*, page: Page, sentence: str | None = None, index: int | None = None) -> BackgroundJob:
    """Record the erasure of the turn's every word, or of one whole sentence of it (as written, or by its
    index), after checking the sentence is one (engine/erasure.turn_texts raises InvalidParameter)."""
    texts = turn_texts(page, sentence, index)
    whole = sentence is None and index is None
    request = {"page": page.pk, "sentence": None if whole else texts[0]}
    return BackgroundJob.objects.create(
        space=page.space, kind=BackgroundJob.Kind.ERASE, request=request, touched_at=timezone.now()
    )


EMBED_BATCH = 64  # texts embedded between looks at the clock


class _Part:
    """The clock of one part of a job: `seconds` from now (None: no end), past which it stops after the
    step it is in; its first step always runs, so every part goes forward."""

    def __init__(self, seconds: float | None) -> None:
        self.ends = time.monotonic() + seconds if seconds is not None else None
        self.steps = 0

    def over(self) -> bool:
        self.steps += 1
        return self.steps > 1 and self.ends is not None and time.monotonic() > self.ends


def restore_vectors_path(job_id: int) -> Path:
    """Where a restore keeps the vectors it has made (float32 rows, appended a batch at a time)."""
    return import_files.folder() / import_files.restore_vectors_name(job_id)


def _vectors_made(path: Path, dim: int) -> np.ndarray:
    """The whole rows in the file (a row cut short by a worker that died is dropped)."""
    if not path.exists():
        return np.zeros((0, dim), dtype=np.float32)
    data = path.read_bytes()
    rows = len(data) // (dim * 4)
    return np.frombuffer(data[: rows * dim * 4], dtype=np.float32).reshape(rows, dim)


def _restored(job: BackgroundJob, part: _Part) -> dict | None:
    """Embed the restore's texts from where the last part stopped; once all are, store the rows. Returns
    the counts, or None when the part ended first."""
    checked = restore_check(space=job.space, document=job.request["export"], parameters=job.request["parameters"])
    texts = restore_texts(checked)
    embedder, path = get_embedder(), restore_vectors_path(job.pk)
    made = _vectors_made(path, embedder.dim)
    with path.open("r+b" if path.exists() else "wb") as out:
        out.truncate(len(made) * embedder.dim * 4)
        out.seek(0, 2)
        count = len(made)
        while count < len(texts):
            if part.over():
                BackgroundJob.objects.filter(pk=job.pk).update(result={"done": count, "of": len(texts)})
                return None
            batch = embedder.encode(texts[count : count + EMBED_BATCH]).astype(np.float32)
            out.write(batch.tobytes())
            out.flush()
            count += len(batch)
    vectors = _vectors_made(path, embedder.dim)
    result = space_restore(
        space=job.space, document=job.request["export"], parameters=job.request["parameters"], vectors=vectors
    )
    path.unlink(missing_ok=True)
    return result


def _compared(job: BackgroundJob, part: _Part) -> dict | None:
    """Compare the probes from where the last part stopped (their results so far on the row); once all
    are, the comparison. None when the part ended first."""
    experiment = Experiment.objects.select_related("space").filter(pk=job.request["experiment"], source=job.space)
    experiment = experiment.first()
    if experiment is None:
        raise LookupError("the experiment was deleted")
    probes = [Probe(question, tuple(evidence), category) for question, evidence, category in job.request["probes"]]
    results = list((job.result or {}).get("partial", []))
    turn_ids = sides_turn_ids(job.space, experiment.space)
    while len(results) < len(probes):
        if part.over():
            progress = {"done": len(results), "of": len(probes), "partial": results}
            BackgroundJob.objects.filter(pk=job.pk).update(result=progress)
            return None
        probe = probes[len(results)]
        results.append(probe_compared(job.space, experiment.space, probe, k=job.request["k"], turn_ids=turn_ids))
    return comparison_of(job.space, experiment.space, results, k=job.request["k"])


def _erased(job: BackgroundJob, part: _Part) -> dict:
    """The turn's words erased, in one transaction (a part cannot split it): every word, or the sentence."""
    page = Page.objects.select_related("space").filter(pk=job.request["page"], space=job.space).first()
    if page is None:
        raise LookupError("the turn was deleted")
    sentence = job.request["sentence"]
    return {"turns_changed": erase_turn(page) if sentence is None else erase_statement(page, sentence)}


WORK = {
    BackgroundJob.Kind.RESTORE: _restored,
    BackgroundJob.Kind.COMPARISON: _compared,
    BackgroundJob.Kind.CHECK: upload_check_part,
    BackgroundJob.Kind.ERASE: _erased,
}


def background_run(job_id: int, *, seconds: float | None = None) -> bool:
    """Do the job if it is queued, and leave its result (or why it failed) on the row; with `seconds`, a
    part of it that long (then it is queued again, its progress kept: the caller sends it again). Returns
    whether it is over (or not this delivery's to run: running, over or gone), so that a repeated delivery
    does nothing."""
    taken = BackgroundJob.objects.filter(pk=job_id, status=BackgroundJob.Status.QUEUED).update(
        status=BackgroundJob.Status.RUNNING, touched_at=timezone.now()
    )
    if not taken:
        return True
    job = BackgroundJob.objects.select_related("space", "space__assistant").filter(pk=job_id).first()
    if job is None:  # deleted with its space since it was taken
        return True
    announce(job.space_id)
    try:
        result = WORK[job.kind](job, _Part(seconds))
        outcome = None if result is None else {"status": BackgroundJob.Status.SUCCEEDED, "result": result}
    except Exception as exc:  # recorded on the job, which its door shows
        outcome = {"status": BackgroundJob.Status.FAILED, "error": f"{type(exc).__name__}: {exc}"[:4000]}
    if outcome is None:  # a part done: back in the queue, behind what came meanwhile
        BackgroundJob.objects.filter(pk=job_id, status=BackgroundJob.Status.RUNNING).update(
            status=BackgroundJob.Status.QUEUED, touched_at=timezone.now()
        )
        announce(job.space_id)
        return False
    # Only a running job ends: one queued again meanwhile, its worker thought dead, keeps its new run.
    BackgroundJob.objects.filter(pk=job_id, status=BackgroundJob.Status.RUNNING).update(
        request={}, finished_at=timezone.now(), **outcome
    )
    if job.kind == BackgroundJob.Kind.RESTORE:
        restore_vectors_path(job_id).unlink(missing_ok=True)
    announce(job.space_id)
    return True


def background_job_card(job: BackgroundJob) -> dict:
    """A background job as every door gives it (documents.BackgroundJobCard): its result once it has succeeded,
    and meanwhile how far it is."""
    succeeded = job.status == BackgroundJob.Status.SUCCEEDED
    counting = not succeeded and isinstance(job.result, dict) and "of" in job.result
    return BackgroundJobCard(
        id=job.pk,
        kind=job.kind,
        status=job.status,
        progress=JobProgressDoc(done=job.result["done"], of=job.result["of"]) if counting else None,
        result=job.result if succeeded else None,
        error=job.error,
        created_at=job.created_at,
        finished_at=job.finished_at,
    ).payload()


def background_unsent(job_id: int) -> None:
    """The job's message could not be sent (the broker is down): the sweep sends it once it is back."""
    BackgroundJob.objects.filter(pk=job_id, status=BackgroundJob.Status.QUEUED).update(touched_at=None)


def background_stalled() -> list[int]:
    """Unfinished jobs to send again: never sent, or untouched for MEMORYOS_IMPORT_STALL_SECONDS (the
    message was lost, or the worker died; a running one is queued again). Each is marked touched, so it
    is sent once per period."""
    cutoff = timezone.now() - timedelta(seconds=memory_settings().import_stall_seconds)
    stalled = BackgroundJob.objects.filter(status__in=UNFINISHED).filter(
        Q(touched_at__isnull=True) | Q(touched_at__lt=cutoff)
    )
    job_ids = list(stalled.values_list("pk", flat=True))
    stalled.filter(pk__in=job_ids).update(status=BackgroundJob.Status.QUEUED, touched_at=timezone.now())
    return job_ids
