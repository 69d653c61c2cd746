"""Files people bring to import: kept on disk, checked whole before anything is stored, then read again, as
a stream, by the import job that stores the conversations they chose (jobs/imports.py).

A file is written to MEMORYOS_IMPORT_DIR as it arrives, a chunk at a time (never held whole in the web
process), and scanned (memory_engine/formats): its format recognised from its content, every item checked,
its conversations listed with titles, dates and sizes for the person to choose from. A refused file is
deleted at once. Each turn and fact read from a file has a key (its format, its conversation's id and its
messages' ids, hashed) that the space records with what it stored (ImportedKey): the same file imported
again stores nothing twice.
"""

import hashlib
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import asdict
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from memory_engine import formats
from memory_engine.errors import InputTooLarge, MemoryInputError
from memory_engine.jobs.ingest import TurnIn
from memory_engine.models import ImportJob, ImportUpload, JobStatus, MemorySpace


def _folder() -> Path:
    folder = Path(settings.MEMORYOS["IMPORT_DIR"])
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _listing(found: formats.Scan) -> dict:
    def when(value):
        return value.isoformat() if value else None

    conversations = [{**asdict(c), "created": when(c.created), "last": when(c.last)} for c in found.conversations]
    return {"conversations": conversations, "facts": found.facts, "turns": found.turns, "cut": found.cut}


def upload_save(*, space: MemorySpace, chunks: Iterable[bytes], name: str) -> ImportUpload:
    """Keep the file the chunks make, check it whole and list what it holds. Raises InputTooLarge past
    MEMORYOS_MAX_IMPORT_BYTES and formats.FormatError (a MemoryInputError) for a file that is not one of
    the formats; then nothing is kept."""
    limit = settings.MEMORYOS["MAX_IMPORT_BYTES"]
    path = _folder() / f"{uuid.uuid4().hex}.upload"
    digest, size = hashlib.sha256(), 0
    try:
        with path.open("wb") as out:
            for chunk in chunks:
                size += len(chunk)
                if size > limit:
                    raise InputTooLarge(f"an import file is at most {limit:,} bytes")
                digest.update(chunk)
                out.write(chunk)
        if not size:
            raise MemoryInputError("the file is empty")
        found = formats.scan(path)  # LoCoMo samples are refused there: they are imported by sample id
        if not found.turns and not found.facts:
            raise MemoryInputError(f"the file is {found.label}, with nothing to import in it")
        return ImportUpload.objects.create(
            space=space,
            name=(name or "upload")[:200],
            path=path.name,
            size=size,
            sha256=digest.hexdigest(),
            format=found.format,
            listing=_listing(found),
        )
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def upload_path(upload: ImportUpload) -> Path:
    return _folder() / upload.path


def item_key(upload: ImportUpload, *parts: str) -> str:
    """What says a turn or fact of this source is stored: its format and ids, hashed (not the upload's
    own id, so another upload of the same file finds it)."""
    return hashlib.sha256("\x1f".join((upload.format, *parts)).encode()).hexdigest()


def upload_items(job: ImportJob) -> Iterator[tuple[str, TurnIn | formats.Fact]]:
    """The job's turns and facts, read from its upload's file in order, each with its key. Raises
    formats.FormatError if the file changed since it was checked."""
    upload = job.upload
    chosen = set(job.chosen) if job.chosen is not None else None
    for record in formats.records(upload_path(upload)):
        if isinstance(record, formats.Fact):
            yield item_key(upload, "fact", record.key), record
            continue
        if chosen is not None and record.key not in chosen:
            continue
        source = {"format": upload.format, "conversation": record.key[:200], "title": record.title[:200]}
        for turn in formats.turns_of(record.messages):
            meta = {"imported": {**source, "cut": True} if turn.cut else source}
            yield (
                item_key(upload, record.key, *turn.keys),
                TurnIn(turn.user_input, turn.agent_response, turn.time, meta),
            )


def uploads_expire() -> int:
    """Delete the files brought to import (and their listings) older than MEMORYOS_IMPORT_KEEP_SECONDS
    that no unfinished import is reading: a file is kept while it is chosen from and imported, not for
    ever. The imports keep their record (source, counts). Returns how many were deleted."""
    cutoff = timezone.now() - timedelta(seconds=settings.MEMORYOS["IMPORT_KEEP_SECONDS"])
    reading = ImportJob.objects.filter(status__in=[JobStatus.QUEUED, JobStatus.RUNNING], upload__isnull=False)
    old = ImportUpload.objects.filter(created_at__lt=cutoff).exclude(pk__in=reading.values("upload_id"))
    expired = list(old)
    for upload in expired:
        upload_path(upload).unlink(missing_ok=True)
    ImportUpload.objects.filter(pk__in=[u.pk for u in expired]).delete()
    return len(expired)
