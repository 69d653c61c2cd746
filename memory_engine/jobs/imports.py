"""Importing a conversation into a memory space: a JSON transcript, or a LoCoMo sample, ingested turn by
turn (jobs.ingest), so the tiers fill as they would in a chat; an ImportJob row records the progress.
A worker does it (or the calling process, when MEMORYOS_CONSOLIDATION is "inline")."""

from datetime import datetime
from functools import cache

from django.db.models import F
from django.utils import timezone

from memory_engine import inputs
from memory_engine.errors import MemoryInputError
from memory_engine.jobs.ingest import IngestCounters, TurnIn, ingest_turn
from memory_engine.jobs.locomo import DEV_FILE, iter_pages, load_samples
from memory_engine.models import ImportJob, MemorySpace

MAX_TURNS = 5000


def transcript_turns(transcript: object) -> list[dict]:
    """The turns of a transcript, checked: a list of {"user_input", "agent_response", "timestamp"?}
    (ISO 8601). Raises MemoryInputError saying what is wrong, before anything is stored."""
    if not isinstance(transcript, list) or not transcript:
        raise MemoryInputError("a transcript is a non-empty list of turns")
    if len(transcript) > MAX_TURNS:
        raise MemoryInputError(f"a transcript holds at most {MAX_TURNS} turns, not {len(transcript)}")
    turns = []
    for number, turn in enumerate(transcript, start=1):
        if not isinstance(turn, dict):
            raise MemoryInputError(f"turn {number} is not an object")
        try:
            user_input, agent_response = inputs.turn_texts(turn.get("user_input", ""), turn.get("agent_response", ""))
            when = inputs.timestamp(turn.get("timestamp"))
        except MemoryInputError as exc:
            raise type(exc)(f"turn {number}: {exc}") from None
        timestamp = when.isoformat() if when else None
        turns.append({"user_input": user_input, "agent_response": agent_response, "timestamp": timestamp})
    return turns


@cache
def locomo_sample_ids() -> tuple[str, ...]:
    """The samples of the bundled LoCoMo dev split (none when the data is not there)."""
    try:
        return tuple(s["sample_id"] for s in load_samples(DEV_FILE))
    except (OSError, ValueError):
        return ()


def locomo_turns(sample_id: str) -> list[dict]:
    """The turns of a LoCoMo sample of the bundled dev split, as the evaluation maps them."""
    sample = next((s for s in load_samples(DEV_FILE) if s["sample_id"] == sample_id), None)
    if sample is None:
        raise MemoryInputError(f"no LoCoMo sample {sample_id!r} in the dev split")
    return [
        {"user_input": p.user_input, "agent_response": p.agent_response, "timestamp": p.timestamp.isoformat()}
        for p in iter_pages(sample)
    ]


def import_create(*, space: MemorySpace, turns: list[dict], source: str) -> ImportJob:
    """Record an import of `turns` (already checked) into the space; `jobs.dispatch.import_start` has it
    run."""
    return ImportJob.objects.create(space=space, source=source[:200], turns=turns, total=len(turns))


def import_run(job_id: int) -> None:
    """Store the job's remaining turns one by one, consolidating after each and counting progress.
    Safe to repeat: a finished job does nothing, an interrupted one goes on from where it stopped."""
    job = ImportJob.objects.select_related("space").filter(pk=job_id).first()
    if job is None or job.status in (ImportJob.Status.SUCCEEDED, ImportJob.Status.FAILED):
        return
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.RUNNING)
    counters = IngestCounters()
    count_one = lambda: ImportJob.objects.filter(pk=job.pk).update(done=F("done") + 1)  # noqa: E731
    try:
        for turn in job.turns[job.done :]:
            when = datetime.fromisoformat(turn["timestamp"]) if turn.get("timestamp") else None
            ingest_turn(
                job.space,
                TurnIn(turn["user_input"], turn["agent_response"], when),
                counters,
                with_store=count_one,  # the turn and the count together: a retry never stores it twice
            )
    except Exception as exc:  # recorded on the job, which the page shows
        import_fail(job.pk, f"{type(exc).__name__}: {exc}")
        raise
    ImportJob.objects.filter(pk=job.pk).update(status=ImportJob.Status.SUCCEEDED, finished_at=timezone.now())


def import_fail(job_id: int, error: str) -> None:
    """Record that the import failed, and why (shown on the page and by the API)."""
    ImportJob.objects.filter(pk=job_id).update(
        status=ImportJob.Status.FAILED, error=error[:4000], finished_at=timezone.now()
    )
