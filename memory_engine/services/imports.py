"""Importing a conversation into a memory space: a JSON transcript, a LoCoMo sample, or the conversations
chosen from a file brought from elsewhere (services/uploads.py), ingested turn by turn (services.ingest), so the
tiers fill as they would in a chat, with the times the turns were said; a file's facts become knowledge
entries. An ImportJob row records the progress. A worker does it (or the calling process, when
MEMORYOS_CONSOLIDATION is "inline")."""

import json
import time
from collections.abc import Iterator
from contextlib import suppress
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import lru_cache
from pathlib import Path

from django.db import IntegrityError, transaction
from django.db.models import F, Q, QuerySet, Value
from django.db.models.functions import Coalesce, Greatest
from django.utils import timezone

from memory_engine import formats, inputs
from memory_engine.config import memory_settings
from memory_engine.documents import ImportJobCard, TaughtDoc
from memory_engine.errors import JobEnded, MemoryInputError, TooMuchBulkWork
from memory_engine.formats.locomo import iter_pages, load_samples
from memory_engine.models import (
    ConsolidationRun,
    EntryVersion,
    Experiment,
    ImportedKey,
    ImportedTurn,
    ImportJob,
    ImportUpload,
    LongTermEntry,
    MemorySpace,
    MidTermSession,
    Page,
    UploadConversation,
)
from memory_engine.services.consolidation import history_settle
from memory_engine.services.curation import knowledge_entry_add
from memory_engine.services.ingest import IngestCounters, TurnIn, ingest_chunk, ingest_turn
from memory_engine.services.uploads import upload_path
from memory_engine.store.changes import announce
from memory_engine.store.holders import same_holder

MAX_TURNS = 5000
UNFINISHED = (ImportJob.Status.QUEUED, ImportJob.Status.RUNNING)

FORMAT_LABELS: dict[str, str] = dict(formats.LABELS)  # each format's name, as people know it


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


def _locomo_samples() -> list[dict]:
    """The samples of the LoCoMo file (MEMORYOS_LOCOMO_FILE), read again when it has changed, or appeared
    (a fresh clone has none beside it: the pages listed nothing until the server was restarted); none when
    it is not there or not LoCoMo."""
    path = Path(memory_settings().locomo_file)
    try:
        stamp = path.stat()
    except OSError:
        return []
    return _read_locomo(str(path), stamp.st_mtime_ns, stamp.st_size)


@lru_cache(maxsize=2)
def _read_locomo(path: str, mtime_ns: int, size: int) -> list[dict]:
    try:
        return load_samples(path)
    except (OSError, ValueError):
        return []


def locomo_sample_ids() -> tuple[str, ...]:
    """The samples of the LoCoMo file (none when the data is not there)."""
    return tuple(sample["sample_id"] for sample in _locomo_samples())


def locomo_sample(sample_id: str) -> dict:
    """A sample of the LoCoMo file; MemoryInputError when it has none of that id."""
    sample = next((s for s in _locomo_samples() if s["sample_id"] == sample_id), None)
    if sample is None:
        raise MemoryInputError(f"no LoCoMo sample {sample_id!r} in {Path(memory_settings().locomo_file).name}")
    return sample


def locomo_turns(sample_id: str) -> list[dict]:
    """The turns of a LoCoMo sample of the LoCoMo file, as the evaluation maps them, each with the ids of the
    dialogue turns it holds in its meta ({"dia_ids": [...]}): what the questions' evidence names, so an
    experiment can score recall (services/comparison.py)."""
    sample = locomo_sample(sample_id)
    return [
        {
            "user_input": p.user_input,
            "agent_response": p.agent_response,
            "timestamp": p.timestamp.isoformat(),
            "meta": {"dia_ids": p.dia_ids},
        }
        for p in iter_pages(sample)
    ]


def unfinished_for(space: MemorySpace):
    """The unfinished imports and replays of whoever holds `space` (store/holders.same_holder)."""
    unfinished = Q(status__in=[ImportJob.Status.QUEUED, ImportJob.Status.RUNNING])
    return ImportJob.objects.filter(unfinished & same_holder(space))


def room_for_bulk_work(space: MemorySpace) -> None:
    """Raise TooMuchBulkWork when whoever holds `space` has MEMORYOS_MAX_UNFINISHED_IMPORTS imports and
    replays unfinished: a 28-byte request queues hundreds of turns, and three of them once kept every other
    account's consolidation waiting for minutes."""
    limit = memory_settings().max_unfinished_imports
    if unfinished_for(space).count() >= limit:
        raise TooMuchBulkWork(
            f"at most {limit} imports and experiments' replays may be unfinished at once; wait for one to end"
        )


def import_activity(job: ImportJob) -> str:
    """What the job is doing, in a sentence for its page: waiting behind an earlier job of the same holder
    (or for a worker), storing its next chunk of turns, or consolidating after one (a promotion asks the LLM, and may
    take minutes); empty once it has ended."""
    if job.status == ImportJob.Status.QUEUED:
        ahead = (
            unfinished_for(job.space)
            .filter(Q(created_at__lt=job.created_at) | Q(created_at=job.created_at, pk__lt=job.pk))
            .order_by("created_at", "pk")
            .defer("turns")
            .first()
        )
        if ahead is not None:
            return f"waiting behind {ahead.source} ({ahead.done} / {ahead.total} turns)"
        return "waiting for a worker"
    if job.status != ImportJob.Status.RUNNING:
        return ""
    running = (
        ConsolidationRun.objects.filter(space_id=job.space_id, status=ConsolidationRun.Status.RUNNING)
        .order_by("-started_at")
        .first()
    )
    if running is not None:
        return (
            f"consolidating after turn {job.done}, since {running.started_at:%H:%M:%S} UTC "
            "(a session promoted is read by the LLM; a slow model takes minutes)"
        )
    first, last = min(job.done + 1, job.total), min(job.done + memory_settings().ingest_chunk_turns, job.total)
    return f"storing turns {first}-{last} of {job.total}" if last > first else f"storing turn {first} of {job.total}"


def import_create(*, space: MemorySpace, turns: list[dict], source: str) -> ImportJob:
    """Record an import of `turns` (already checked) into the space; `services.dispatch.import_start` has it
    run."""
    return ImportJob.objects.create(
        space=space, source=source[:200], turns=turns, total=len(turns), touched_at=timezone.now()
    )


def upload_import_create(*, upload: ImportUpload, chosen: list[str] | None) -> ImportJob:
    """Record the import of the upload's `chosen` conversations (all when None; facts are all taken);
    services.dispatch.import_send has it run. Raises MemoryInputError for a key the file does not hold, or a
    choice with nothing in it or a file not (or not yet) checked, and TooMuchBulkWork as import_start does."""
    if upload.status == ImportUpload.Status.CHECKING:
        raise MemoryInputError("the file is still being checked: import it once it is ready")
    if upload.status == ImportUpload.Status.REFUSED:
        raise MemoryInputError(f"the file was refused: {upload.error}")
    turns = dict(UploadConversation.objects.filter(upload=upload).values_list("key", "turns"))
    if chosen is not None:
        unknown = [key for key in chosen if key not in turns]
        if unknown:
            raise MemoryInputError(f"the file holds no conversation {unknown[0][:60]!r}")
        chosen = list(dict.fromkeys(chosen))
    total = upload.facts + (upload.turns if chosen is None else sum(turns[key] for key in chosen))
    if not total:
        raise MemoryInputError("the conversations chosen hold no turn to import")
    room_for_bulk_work(upload.space)
    return ImportJob.objects.create(
        space=upload.space,
        source=f"{upload.name} ({formats.LABELS[upload.format]})"[:200],
        turns=[],
        upload=upload,
        chosen=chosen,
        total=total,
        touched_at=timezone.now(),
    )


@dataclass(frozen=True)
class Item:
    """A turn or fact of an import, in order: its place in the job (from 0), what names it in the space (a
    file's ids hashed, formats.identity, or turn_keys for turns given) and, in a file's working copy, where the
    next one starts."""

    number: int
    key: str
    content: TurnIn | formats.Record
    next_offset: int = 0
    settle: bool = False  # a replay's turn after which its source's history settled (services/lab.py)


class TurnStoredBefore(Exception):
    """This turn of the job is already stored (by another worker, or an earlier delivery)."""


class ImportedBefore(Exception):
    """This turn or fact is already in the space (an earlier import of the same file or turns)."""


def _mark_stored(job: ImportJob, item: Item, page: Page | None) -> None:
    """Record `item` of the job as stored, in the transaction storing it; if it was already (the unique
    keys say so), raise TurnStoredBefore (this job stored it) or ImportedBefore (another import of the
    same source did), which roll it back."""
    try:
        with transaction.atomic():
            ImportedTurn.objects.create(job=job, number=item.number, page=page)
    except IntegrityError:
        raise TurnStoredBefore from None
    try:
        with transaction.atomic():
            ImportedKey.objects.create(space_id=job.space_id, key=item.key)
    except IntegrityError:
        raise ImportedBefore from None
    _done(job, [item], skipped=0)


def _done(job: ImportJob, items: list[Item], *, skipped: int) -> None:
    """The job's progress: `items` more done (`skipped` of them skipped), the next to read after the last."""
    ImportJob.objects.filter(pk=job.pk).update(
        done=F("done") + len(items),
        skipped=F("skipped") + skipped,
        offset=Greatest(F("offset"), items[-1].next_offset),
        touched_at=timezone.now(),
    )


def _mark_skipped(job: ImportJob, item: Item) -> None:
    """`item` was stored by an earlier import of the same source: counted done and skipped, once."""
    try:
        with transaction.atomic():
            ImportedTurn.objects.create(job=job, number=item.number, page=None)
    except IntegrityError:
        return
    _done(job, [item], skipped=1)


def turn_keys(turns: list[dict]) -> list[str]:
    """What names each of the turns given to an import (a transcript, a LoCoMo sample, a replay) in the space:
    a hash of it and of every turn before it. The same turns brought again, after a Stop or twice, store only
    what is missing, as do more turns that begin with them (a longer transcript of the same conversation);
    the same words at another place in another history are another turn. Pure."""
    keys, chain = [], ""
    for turn in turns:
        said = json.dumps([turn["user_input"], turn["agent_response"], turn.get("timestamp")], ensure_ascii=False)
        chain = formats.identity(GIVEN_TURNS, chain, said)
        keys.append(chain)
    return keys


GIVEN_TURNS = "turns"  # the format named in the keys of turns given to an import, not brought in a file


def _items(job: ImportJob) -> Iterator[Item]:
    """The job's turns and facts not yet done, from where it stopped: its own turns, or its upload's."""
    if job.upload_id is None:
        keys = turn_keys(job.turns)
        for number in range(job.done, job.total):
            turn = job.turns[number]
            when = datetime.fromisoformat(turn["timestamp"]) if turn.get("timestamp") else None
            withheld = bool(turn.get("reply_withheld"))
            source = turn.get("reply_source", Page.ReplySource.GIVEN)
            content = TurnIn(turn["user_input"], turn["agent_response"], when, turn.get("meta"), withheld, source)
            yield Item(number, keys[number], content, settle=bool(turn.get("settle")))
        return
    yield from _upload_items(job)


def _upload_items(job: ImportJob) -> Iterator[Item]:
    """The chosen turns and facts of the job's upload, read from its working copy from job.offset: each
    chunk of the job starts where the last one stopped, reading nothing twice."""
    upload = job.upload
    path = upload_path(upload)
    if not path.exists():
        raise MemoryInputError("the file brought to import is gone (deleted, or kept past its day); bring it again")
    if job.chosen is None or upload.format == formats.MEMORIES:
        spans = [(0, path.stat().st_size)]
    else:
        wanted = set(job.chosen)
        listed = UploadConversation.objects.filter(upload=upload).values_list("key", "start", "end")
        spans = sorted((start, end) for key, start, end in listed if key in wanted)
    conversations: dict[int, UploadConversation] = {}  # read as their turns come

    def conversation_at(place: int) -> UploadConversation:
        if place not in conversations:
            conversations[place] = UploadConversation.objects.only("key", "title").get(upload=upload, place=place)
        return conversations[place]

    number = job.done
    with path.open("rb") as copy:
        for start, end in spans:
            if end <= job.offset:
                continue
            copy.seek(max(start, job.offset))
            while copy.tell() < end:
                record = formats.record_read(copy.readline())
                following = copy.tell()
                if record.kind == "fact":
                    yield Item(number, formats.identity(upload.format, "fact", record.keys[0]), record, following)
                else:
                    conversation = conversation_at(record.conversation)
                    source = {"format": upload.format, "conversation": conversation.key, "title": conversation.title}
                    meta = {"imported": {**source, "cut": True} if record.cut else source}
                    turn = TurnIn(record.text, record.reply, record.time, meta)
                    yield Item(number, formats.identity(upload.format, conversation.key, *record.keys), turn, following)
                number += 1


def upload_turns(upload: ImportUpload) -> Iterator[TurnIn]:
    """Every turn of the upload's conversations, in the file's order, as an import reads them."""
    reading = ImportJob(space=upload.space, upload=upload, chosen=None, total=upload.turns, turns=[])
    for item in _upload_items(reading):
        if isinstance(item.content, TurnIn):
            yield item.content


def _store_fact(job: ImportJob, item: Item) -> None:
    """A fact of another memory system as a knowledge entry of the person, its history saying where it came
    from; merged into a near-duplicate like any fact added by hand."""
    fact = item.content
    try:
        with transaction.atomic():
            _mark_stored(job, item, None)
            knowledge_entry_add(
                space=job.space,
                kind=LongTermEntry.Kind.USER_KNOWLEDGE,
                topic="",
                fact=fact.text,
                actor=f"{job.source}, memory {fact.keys[0]}"[:200],
                cause=EntryVersion.Cause.IMPORTED,
                at=fact.time,
            )
    except ImportedBefore:
        _mark_skipped(job, item)


def _store_turns(job: ImportJob, items: list[Item], counters: IngestCounters) -> None:
    """Store a run of the job's turns as one chunk (ingest_chunk): the turns an earlier import of the same
    source stored are counted skipped, the others stored, each recorded under its unique keys and the job's
    progress moved on, all in the chunk's transaction. When the keys say another worker stored some of them
    meanwhile (the same job delivered twice), the chunk rolls back and goes turn by turn (_store_turn)."""
    known = set(
        ImportedKey.objects.filter(space_id=job.space_id, key__in=[i.key for i in items]).values_list("key", flat=True)
    )
    fresh, skipped = [], []
    for item in items:
        if item.key in known:
            skipped.append(item)
        else:
            fresh.append(item)
            known.add(item.key)

    def record(pages: list[Page]) -> None:
        stored = [ImportedTurn(job=job, number=i.number, page=p) for i, p in zip(fresh, pages, strict=True)]
        ImportedTurn.objects.bulk_create(stored + [ImportedTurn(job=job, number=i.number) for i in skipped])
        ImportedKey.objects.bulk_create([ImportedKey(space_id=job.space_id, key=i.key) for i in fresh])
        _done(job, items, skipped=len(skipped))

    try:
        ingest_chunk(job.space, [i.content for i in fresh], counters, retry_now=True, with_store=record)
    except IntegrityError:
        for item in items:
            _store_turn(job, item, counters)


def _store_turn(job: ImportJob, item: Item, counters: IngestCounters) -> None:
    """Store one turn of the job (ingest_turn), unless this job or an earlier import of its source did."""
    try:
        ingest_turn(
            job.space, item.content, counters, retry_now=True, with_store=lambda page: _mark_stored(job, item, page)
        )
    except TurnStoredBefore:
        return
    except ImportedBefore:
        _mark_skipped(job, item)


def _runs(items: Iterator[Item], size: int) -> Iterator[list[Item]]:
    """The items in runs of at most `size` turns, a fact a run of its own, a turn to settle after the last of
    its run."""
    run: list[Item] = []
    for item in items:
        if isinstance(item.content, formats.Record):
            if run:
                yield run
                run = []
            yield [item]
            continue
        run.append(item)
        if len(run) == size or item.settle:
            yield run
            run = []
    if run:
        yield run


def _settles(job: ImportJob) -> bool:
    """Does the job end by moving the space's short-term memory to mid-term? An import of a history does; an
    experiment's replay does not, as it makes its source's memory again, short-term memory included: it
    settles where its source's histories did (its turns marked `settle`)."""
    return not Experiment.objects.filter(replay=job).exists()


def import_run(job_id: int, *, seconds: float | None = None) -> bool:
    """Store the job's remaining turns a chunk at a time (MEMORYOS_INGEST_CHUNK_TURNS), consolidating after
    each and counting progress; with `seconds`, stop after the chunk that passes that long (a part: the task
    sends itself again, so that other work queued meanwhile gets its turn). Returns whether the job is over
    (finished, failed, or gone). Safe to repeat and to run twice at once: a finished job does nothing, an
    interrupted one goes on from where it stopped, and each turn is stored once (ImportedTurn's unique key).
    At the end of an import (not of a replay: _settles), the space's short-term memory moves to mid-term
    (services.consolidation.history_settle): the history is over, and what it taught shows at once.

    A failed promotion is tried again at the next chunk rather than after the failure cooldown (as the
    LoCoMo evaluation does): an import stores in seconds what was said over days, and a cooldown counted
    in seconds would leave most of it unpromoted, by how fast the machine ran. What a space remembers
    after an import, and what an experiment's replay compares, then depends on its turns and parameters
    (and on the LLM's answers), not on the clock. The price: with the LLM endpoint down, each chunk's
    promotion waits for its timeout."""
    job = ImportJob.objects.select_related("space", "upload").filter(pk=job_id).first()
    if job is not None and job.status == ImportJob.Status.CANCELLED:
        _cancelled_end(job)  # stopped between two parts
    if job is None or job.status not in UNFINISHED:
        return True
    now = timezone.now()
    taken = ImportJob.objects.filter(pk=job.pk, status__in=UNFINISHED).update(
        status=ImportJob.Status.RUNNING, touched_at=now, started_at=Coalesce(F("started_at"), Value(now))
    )
    if not taken:
        return True  # cancelled meanwhile
    announce(job.space_id)
    counters = IngestCounters()
    ends = time.monotonic() + seconds if seconds is not None else None
    try:
        for place, run in enumerate(_runs(_items(job), memory_settings().ingest_chunk_turns)):
            # Each part stores at least one chunk, so a job always goes forward, however slow the machine.
            if place and ends is not None and time.monotonic() > ends:
                return False
            if _cancelled(job):
                _cancelled_end(job)
                return True
            if isinstance(run[0].content, formats.Record):
                with suppress(TurnStoredBefore):
                    _store_fact(job, run[0])
            else:
                _store_turns(job, run, counters)
                if run[-1].settle:  # a replay, where its source's history settled
                    history_settle(job.space, retry_now=True)
        _settle_once(job)
    except Exception as exc:  # recorded on the job, which the page shows
        import_fail(job.pk, f"{type(exc).__name__}: {exc}")
        raise
    ImportJob.objects.filter(pk=job.pk, status=ImportJob.Status.RUNNING).update(
        status=ImportJob.Status.SUCCEEDED, finished_at=timezone.now()
    )
    announce(job.space_id)
    return True


def _cancelled(job: ImportJob) -> bool:
    return ImportJob.objects.filter(pk=job.pk, status=ImportJob.Status.CANCELLED).exists()


def _settle_once(job: ImportJob) -> bool:
    """Move the space's short-term memory to mid-term after the job's history (history_settle), once for
    the job, whatever runs it again (a part found cancelled, a message delivered twice: by then the person
    may be chatting, and their conversation is short-term memory). Not for a replay (_settles). Returns
    whether this call settled it."""
    if not _settles(job):
        return False
    claimed = ImportJob.objects.filter(pk=job.pk, settled_at__isnull=True).update(settled_at=timezone.now())
    if claimed:
        history_settle(job.space, retry_now=True)
    return bool(claimed)


def _cancelled_end(job: ImportJob) -> None:
    """A stopped import's history settles as a finished one's does, the chunk it was storing when it was stopped
    included."""
    job.refresh_from_db()
    if job.done and _settle_once(job):  # one stopped before it stored anything leaves the memory as it was
        announce(job.space_id)


def import_cancel(*, job: ImportJob) -> ImportJob:
    """Stop an unfinished import: a worker running it stops before its next chunk (a chunk is stored whole
    or not at all), and one that has not started never does. What it stored stays, as history the space
    consolidates as any other. Raises JobEnded when the import has ended already."""
    stopped = ImportJob.objects.filter(pk=job.pk, status__in=UNFINISHED).update(
        status=ImportJob.Status.CANCELLED, finished_at=timezone.now()
    )
    if not stopped:
        job.refresh_from_db()
        raise JobEnded(f"the import has ended already ({job.status})")
    job.refresh_from_db()
    announce(job.space_id)
    return job


def import_time_left(job: ImportJob) -> float | None:
    """The seconds a running import may still take, at the rate it has gone since a worker first took it
    (waits behind other work included); None before it has stored anything, or once it has ended."""
    if job.status != ImportJob.Status.RUNNING or not job.done or job.started_at is None:
        return None
    spent = (timezone.now() - job.started_at).total_seconds()
    return max(0.0, spent / job.done * (job.total - job.done))


def import_taught(job: ImportJob) -> dict | None:
    """What an ended import has left in the memory, as the memory stands now (so it follows the promotions
    made after it, an entry deleted, a turn forgotten): the mid-term sessions its turns are in and the active
    profile and knowledge entries drawn from them. None while it runs."""
    if job.status in UNFINISHED:
        return None
    pages = ImportedTurn.objects.filter(job=job, page__isnull=False).values("page")
    sessions = MidTermSession.objects.filter(pages__in=pages).distinct().count()
    active = LongTermEntry.objects.filter(source_pages__in=pages, status=LongTermEntry.Status.ACTIVE)
    return {"sessions": sessions, "entries": active.distinct().count()}


def import_job_card(job: ImportJob) -> dict:
    """An import as every door gives it (documents.ImportJobCard: REST's imports and the lab's replay)."""
    left = import_time_left(job)
    taught = import_taught(job)
    return ImportJobCard(
        id=job.pk,
        source=job.source,
        total=job.total,
        done=job.done,
        skipped=job.skipped,
        status=job.status,
        activity=import_activity(job),
        seconds_left=None if left is None else round(left, 1),
        taught=None if taught is None else TaughtDoc(**taught),
        error=job.error,
        created_at=job.created_at,
        started_at=job.started_at,
        finished_at=job.finished_at,
    ).payload()


def import_fail(job_id: int, error: str) -> None:
    """Record that the import failed, and why (shown on the page and by the API)."""
    ImportJob.objects.filter(pk=job_id, status__in=UNFINISHED).update(
        status=ImportJob.Status.FAILED, error=error[:4000], finished_at=timezone.now()
    )
    for space_id in ImportJob.objects.filter(pk=job_id).values_list("space_id", flat=True):
        announce(space_id)


def import_unsent(job_id: int) -> None:
    """The job's message could not be sent (the broker is down): the sweep sends it once it is back."""
    ImportJob.objects.filter(pk=job_id, status=ImportJob.Status.QUEUED).update(touched_at=None)


def imports_stalled() -> list[int]:
    """Unfinished imports to send again: never sent, or untouched for MEMORYOS_IMPORT_STALL_SECONDS (the
    worker died, or the message was lost). Each is marked touched, so it is sent once per period; a
    copy that meets a job still running stores nothing twice."""
    cutoff = timezone.now() - timedelta(seconds=memory_settings().import_stall_seconds)
    unfinished = ImportJob.objects.filter(status__in=[ImportJob.Status.QUEUED, ImportJob.Status.RUNNING])
    stalled = unfinished.filter(Q(touched_at__isnull=True) | Q(touched_at__lt=cutoff))
    job_ids = list(stalled.values_list("pk", flat=True))
    ImportJob.objects.filter(pk__in=job_ids).update(touched_at=timezone.now())
    return job_ids


def jobs(space: MemorySpace) -> QuerySet:
    """The space's imports, newest first (the turns they carry left unread)."""
    return ImportJob.objects.filter(space=space).defer("turns").order_by("-created_at", "-pk")
