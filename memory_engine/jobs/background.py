"""Work too heavy for a web request, done by a worker: a space's export restored (into a space, or into an
experiment's shadow space: a fork from an export), and an experiment compared with its source. A 300-page
restore once held a request for 67 s and a 200-question comparison for 68 s, and three at once left no
request place for anyone else.

A door checks the request whole (as the work itself would), records a BackgroundJob and answers 202; the
job runs on the bulk queue (or here, inline) and leaves its result on the row for the door to poll. Whoever
holds a space has one such job unfinished at a time. A job is taken by one worker (queued -> running, a
single update), so a message delivered twice runs it once; one whose worker died is queued again by the
workers' sweep after MEMORYOS_IMPORT_STALL_SECONDS (a restore is one transaction: nothing of it stays).
"""

from collections.abc import Sequence
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from memory_engine.beyond.comparison import Probe, compare, probes_check
from memory_engine.beyond.restore import restore_check, space_restore
from memory_engine.errors import TooMuchBulkWork
from memory_engine.models import BackgroundJob, Experiment, MemorySpace
from memory_engine.store.changes import announce
from memory_engine.store.spaces import same_holder

UNFINISHED = (BackgroundJob.Status.QUEUED, BackgroundJob.Status.RUNNING)


def room_for_background_job(space: MemorySpace) -> None:
    """Raise TooMuchBulkWork when whoever holds `space` has a restore or comparison unfinished."""
    if BackgroundJob.objects.filter(Q(status__in=UNFINISHED) & same_holder(space)).exists():
        raise TooMuchBulkWork("a restore or comparison of yours is still running; wait for it to end")


def restore_create(
    *, space: MemorySpace, document: object, parameters: dict | None = None, holder: MemorySpace | None = None
) -> BackgroundJob:
    """Record the restore of `document` (a space's export) into the empty `space`, its parameters but for
    `parameters`, after checking it whole (beyond/restore.restore_check raises what is wrong); dispatch's
    `background_send` has it run. `holder`: the space whose holder the job counts against (an
    experiment's source, for its shadow space), if not `space`."""
    restore_check(space=space, document=document, parameters=parameters)
    room_for_background_job(holder or space)
    request = {"export": document, "parameters": parameters or {}}
    return BackgroundJob.objects.create(
        space=space, kind=BackgroundJob.Kind.RESTORE, request=request, touched_at=timezone.now()
    )


def comparison_create(*, experiment: Experiment, probes: Sequence[Probe], k: int) -> BackgroundJob:
    """Record a comparison of the experiment with its source for `probes` (checked first: what
    beyond/comparison.probes_check raises), a job of the source's space."""
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


def _restored(job: BackgroundJob) -> dict:
    return space_restore(space=job.space, document=job.request["export"], parameters=job.request["parameters"])


def _compared(job: BackgroundJob) -> dict:
    experiment = Experiment.objects.select_related("space").filter(pk=job.request["experiment"], source=job.space)
    experiment = experiment.first()
    if experiment is None:
        raise LookupError("the experiment was deleted")
    probes = [Probe(question, tuple(evidence), category) for question, evidence, category in job.request["probes"]]
    return compare(job.space, experiment.space, probes, k=job.request["k"])


WORK = {BackgroundJob.Kind.RESTORE: _restored, BackgroundJob.Kind.COMPARISON: _compared}


def background_run(job_id: int) -> None:
    """Do the job if it is queued, and leave its result (or why it failed) on the row. A job that is
    running, over or gone is left alone: a repeated delivery does nothing."""
    taken = BackgroundJob.objects.filter(pk=job_id, status=BackgroundJob.Status.QUEUED).update(
        status=BackgroundJob.Status.RUNNING, touched_at=timezone.now()
    )
    if not taken:
        return
    job = BackgroundJob.objects.select_related("space", "space__assistant").filter(pk=job_id).first()
    if job is None:  # deleted with its space since it was taken
        return
    announce(job.space_id)
    try:
        outcome = {"status": BackgroundJob.Status.SUCCEEDED, "result": WORK[job.kind](job)}
    except Exception as exc:  # recorded on the job, which its door shows
        outcome = {"status": BackgroundJob.Status.FAILED, "error": f"{type(exc).__name__}: {exc}"[:4000]}
    # Only a running job ends: one queued again meanwhile, its worker thought dead, keeps its new run.
    BackgroundJob.objects.filter(pk=job_id, status=BackgroundJob.Status.RUNNING).update(
        request={}, finished_at=timezone.now(), **outcome
    )
    announce(job.space_id)


def background_unsent(job_id: int) -> None:
    """The job's message could not be sent (the broker is down): the sweep sends it once it is back."""
    BackgroundJob.objects.filter(pk=job_id, status=BackgroundJob.Status.QUEUED).update(touched_at=None)


def background_stalled() -> list[int]:
    """Unfinished jobs to send again: never sent, or untouched for MEMORYOS_IMPORT_STALL_SECONDS (the
    message was lost, or the worker died; a running one is queued again). Each is marked touched, so it
    is sent once per period."""
    cutoff = timezone.now() - timedelta(seconds=settings.MEMORYOS["IMPORT_STALL_SECONDS"])
    stalled = BackgroundJob.objects.filter(status__in=UNFINISHED).filter(
        Q(touched_at__isnull=True) | Q(touched_at__lt=cutoff)
    )
    job_ids = list(stalled.values_list("pk", flat=True))
    stalled.filter(pk__in=job_ids).update(status=BackgroundJob.Status.QUEUED, touched_at=timezone.now())
    return job_ids
