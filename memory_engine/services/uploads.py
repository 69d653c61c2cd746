"""Files people bring to import: checked whole before anything is stored, kept as the working copy the import
reads (services/imports.py), and deleted with their space, when they expire, or when refused.

A file is written to MEMORYOS_IMPORT_DIR as it arrives, a chunk at a time (never held whole), and recorded as
being checked (ImportUpload.status): the request that brought it answers at once, and the check runs in the
background, in a process of its own (file_check.py, started by a worker's job: `upload_check_part`), while
the page or client polls the upload. The check measures the file (formats/shape.py: a file past a bound is
refused), unpacks a ChatGPT zip's conversations.json within the same byte limit, then scans it
(memory_engine/formats): its format recognised from its content, every item checked as the import will
check it, its turns written to the working copy and its conversations listed for the person to choose from.
The file itself is then deleted; the working copy is kept. An account has at most
MEMORYOS_UPLOAD_CHECKS_AT_ONCE files being checked. Each turn and fact has an identity (its format, its
conversation's id and its messages' ids, hashed) that the space records with what it stored
(ImportedKey): the same file imported again stores nothing twice, and the same file brought twice to a space
is kept once. The site checks MEMORYOS_UPLOAD_CHECKS_RUNNING files at once; the others wait their turn.
"""

import hashlib
import json
import logging
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterable
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Sum
from django.utils import timezone

from memory_engine import file_check, formats, inputs
from memory_engine.config import memory_settings
from memory_engine.errors import InputTooLarge, MachineTooBusy, MemoryInputError, TooMuchBulkWork
from memory_engine.models import BackgroundJob, ImportJob, ImportUpload, JobStatus, MemorySpace, UploadConversation
from memory_engine.store import import_files
from memory_engine.store.holders import same_holder

logger = logging.getLogger(__name__)


def _nothing_to_check() -> None:
    return None


def kept_by_holder(space: MemorySpace) -> int:
    """Bytes of the working copies kept for whoever holds `space` (every space of theirs)."""
    return ImportUpload.objects.filter(same_holder(space)).aggregate(kept=Sum("kept_bytes"))["kept"] or 0


def upload_room_check(*, space: MemorySpace, size: int) -> None:
    """Raise InputTooLarge when a file of `size` bytes is larger than MEMORYOS_MAX_IMPORT_BYTES or would
    take whoever holds `space` past MEMORYOS_MAX_KEPT_IMPORT_BYTES: what a door decides from a request's
    length, before its body is read."""
    limit = memory_settings().max_import_bytes
    if size > limit:
        raise InputTooLarge(f"an import file is at most {limit:,} bytes")
    _quota_check(space, size)


def _quota_check(space: MemorySpace, adding: int) -> None:
    quota, kept = memory_settings().max_kept_import_bytes, kept_by_holder(space)
    if kept + adding > quota:
        raise InputTooLarge(
            f"an account keeps at most {quota:,} bytes of files brought to import, and {kept:,} are kept: "
            "import or delete one first (a file is deleted a day after it came)"
        )


class _Arriving:
    """The file as it arrives: written, hashed, counted against the limit; its first bytes tell a zip."""

    def __init__(self, limit: int) -> None:
        self.limit, self.size, self.digest = limit, 0, hashlib.sha256()
        self.zipped: bool | None = None  # told by the first bytes
        self.head = b""  # what arrived before there were enough bytes to tell

    def write(self, out, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.limit:
            raise InputTooLarge(f"an import file is at most {self.limit:,} bytes")
        self.digest.update(chunk)
        out.write(chunk)
        if self.zipped is None:
            self.head += chunk[: len(formats.ZIP_MAGIC)]
            if len(self.head) >= len(formats.ZIP_MAGIC):
                self.zipped = formats.is_zip(self.head)

    def close(self) -> None:
        if self.zipped is None:  # fewer bytes in all than a zip starts with
            self.zipped = False


def upload_receive(
    *, space: MemorySpace, chunks: Iterable[bytes], name: str, check: Callable[[], None] = _nothing_to_check
) -> tuple[ImportUpload, BackgroundJob | None]:
    """Keep the file the chunks make and record it as being checked, with the job that checks it (dispatch's
    `upload_start` has it run: services/background.py, upload_check_part). `check` is called as the file
    arrives, and what it raises ends the upload (a deadline passed, the client gone). Raises InputTooLarge
    past MEMORYOS_MAX_IMPORT_BYTES or past what the account may keep, MemoryInputError for an empty file;
    then nothing is kept. A file the space has already been brought (and not refused) is kept once: its
    upload is returned, with no job."""
    name = inputs.text(name or "upload", "the file's name", limit=200, error=MemoryInputError)
    limit = memory_settings().max_import_bytes
    files = CheckFiles(uuid.uuid4().hex)
    try:
        received = _Arriving(limit)
        with files.arriving.open("wb") as out:
            for chunk in chunks:
                received.write(out, chunk)
                check()
        received.close()
        if not received.size:
            raise MemoryInputError("the file is empty")
        sha256 = received.digest.hexdigest()
        same = ImportUpload.objects.filter(space=space, sha256=sha256, size=received.size)
        if (kept := same.exclude(status=ImportUpload.Status.REFUSED).first()) is not None:
            files.arriving.unlink()
            return kept, None
        _quota_check(space, received.size)  # what is checked is kept meanwhile
        with transaction.atomic():
            same.delete()  # refused before (the machine was busy, say): checked again
            upload = ImportUpload.objects.create(
                space=space,
                status=ImportUpload.Status.CHECKING,
                name=name,
                path=files.copy.name,
                size=received.size,
                kept_bytes=received.size,
                sha256=sha256,
                format="",
            )
            request = {"upload": upload.pk, "zipped": received.zipped}
            job = BackgroundJob.objects.create(
                space=space, kind=BackgroundJob.Kind.CHECK, request=request, touched_at=timezone.now()
            )
        return upload, job
    except BaseException:
        files.remove(keep_copy=False)
        raise


def upload_checks_room(space: MemorySpace) -> None:
    """Raise TooMuchBulkWork when whoever holds `space` has MEMORYOS_UPLOAD_CHECKS_AT_ONCE files being
    checked: what a door decides before a file's body is read."""
    most = memory_settings().upload_checks_at_once
    checking = ImportUpload.objects.filter(same_holder(space), status=ImportUpload.Status.CHECKING).count()
    if checking >= most:
        raise TooMuchBulkWork(
            f"{checking} file{'s' if checking != 1 else ''} of yours {'are' if checking != 1 else 'is'} being "
            "checked; bring another once it is done"
        )


class CheckFiles:
    """The files of one upload's check, named by its stem in MEMORYOS_IMPORT_DIR: the file as it arrived, its
    unpacked conversations.json, the working copy, the check's order and result, and its heartbeat."""

    def __init__(self, stem: str) -> None:
        folder = import_files.folder()
        self.arriving, self.unzipped, self.copy = (folder / f"{stem}.{x}" for x in ("upload", "json", "records"))
        self.order, self.result, self.alive = (folder / f"{stem}.{x}" for x in ("order", "result", "alive"))

    @classmethod
    def of(cls, upload: ImportUpload) -> "CheckFiles":
        return cls(Path(upload.path).stem)

    def all(self) -> list[Path]:
        return [self.arriving, self.unzipped, self.copy, self.order, self.result, self.alive]

    def remove(self, *, keep_copy: bool) -> None:
        for path in self.all():
            if not (keep_copy and path == self.copy):
                path.unlink(missing_ok=True)


CHECK_POLL_SECONDS = 0.1
TURN_POLL_SECONDS = 0.5
SILENT_CHECK_SECONDS = 120  # a check whose heartbeat stopped this long ago died (file_check.HEARTBEAT_SECONDS)
_checkers: dict[int, subprocess.Popen] = {}  # upload id -> the check this process started


def upload_check_part(job: BackgroundJob, part) -> dict | None:
    """A part of a file's check (services/background.py): start its process (file_check.py) if it is not
    started, then wait for what it says until `part` is over (None: the part ended first); once it has said,
    record it on the upload (ready, its conversations listed; or refused, saying why) and return
    {"upload": id, "status": ...}. Safe to repeat: a check already recorded is not recorded again."""
    upload = ImportUpload.objects.filter(pk=job.request["upload"]).first()
    if upload is None or upload.status != ImportUpload.Status.CHECKING:
        return {"upload": job.request["upload"], "status": upload.status if upload else "deleted"}
    files = CheckFiles.of(upload)
    try:
        if not files.order.exists():
            while not _turn_to_check(job):  # it waits its turn, a part at a time
                if part.over():
                    return None
                time.sleep(TURN_POLL_SECONDS)
            _checker_start(upload, files, zipped=job.request["zipped"])
        while True:
            if files.result.exists():
                outcome = json.loads(files.result.read_text())
                break
            if (ended := _checker_ended(upload.pk, files)) is not None:
                outcome = {"error": ended, "refusal": "format"}
                break
            if part.over():
                return None
            time.sleep(CHECK_POLL_SECONDS)
    except Exception as exc:  # the upload says so, rather than being checked for ever
        _check_recorded(upload, files, {"error": f"the file could not be checked ({type(exc).__name__})"})
        raise
    _checkers.pop(upload.pk, None)
    return {"upload": upload.pk, "status": _check_recorded(upload, files, outcome)}


def _turn_to_check(job: BackgroundJob) -> bool:
    """Whether the job may start its check: fewer than MEMORYOS_UPLOAD_CHECKS_RUNNING are running on the site
    (a check's job records when it started it). Two workers asking at the same moment may both start one."""
    running = BackgroundJob.objects.filter(
        kind=BackgroundJob.Kind.CHECK, status__in=[JobStatus.QUEUED, JobStatus.RUNNING], result__has_key="started"
    )
    if running.exclude(pk=job.pk).count() >= memory_settings().upload_checks_running:
        return False
    BackgroundJob.objects.filter(pk=job.pk).update(result={"started": timezone.now().isoformat()})
    return True


def _checker_start(upload: ImportUpload, files: CheckFiles, *, zipped: bool) -> None:
    order = {
        "path": str(files.arriving),
        "zipped": zipped,
        "unzipped": str(files.unzipped),
        "copy": str(files.copy),
        "result": str(files.result),
        "alive": str(files.alive),
        "limit": memory_settings().max_import_bytes,
        "limits": file_check.limits_now(),
        "cpu_seconds": memory_settings().upload_check_seconds,
        "wall_seconds": memory_settings().upload_wait_seconds,
        "deadline": time.time() + memory_settings().upload_wait_seconds,
    }
    files.order.write_text(json.dumps(order))
    _checkers[upload.pk] = subprocess.Popen(
        [sys.executable, "-m", "memory_engine.file_check", str(files.order)],
        cwd=settings.BASE_DIR,  # where the project's modules are, whatever this process's folder
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # not stopped with the worker's part: it ends by itself (file_check.py)
    )


def _checker_ended(upload_id: int, files: CheckFiles) -> str | None:
    """Why the check ended without a word, when it did: its process, if this one started it, ended; else
    its heartbeat stopped SILENT_CHECK_SECONDS ago."""
    checker = _checkers.get(upload_id)
    if checker is not None and checker.poll() is not None and not files.result.exists():
        logger.error("the check of upload %s ended with %s and said nothing", upload_id, checker.returncode)
        return f"the file could not be read (its check ended with code {checker.returncode})"
    beats = [path.stat().st_mtime for path in (files.alive, files.order) if path.exists()]
    if beats and time.time() - max(beats) > SILENT_CHECK_SECONDS and not files.result.exists():
        return "the file could not be read (its check stopped without a word)"
    return None


def _check_recorded(upload: ImportUpload, files: CheckFiles, outcome: dict) -> str:
    """Record what the check said on the upload, once (a conditional update: another part may have), and
    remove what the check no longer needs. Returns the upload's status."""
    refusal = None if "scan" in outcome else (outcome.get("refusal", "format"), outcome["error"])
    found = outcome.get("scan")
    if found is not None and not found["turns"] and not found["facts"]:
        refusal = ("format", f"the file is {formats.LABELS[found['format']]}, with nothing to import in it")
    if refusal is None:
        try:
            _quota_check(upload.space, files.copy.stat().st_size - upload.size)
        except InputTooLarge as exc:
            refusal = ("too_large", str(exc))
    logger.info(
        "a file brought to import checked in its own process: %s, peak %.0f MiB",
        "refused" if refusal else found["format"],
        outcome.get("peak_bytes", 0) / 2**20,
    )
    checking = ImportUpload.objects.filter(pk=upload.pk, status=ImportUpload.Status.CHECKING)
    with transaction.atomic():
        if refusal is not None:
            kind, error = refusal
            recorded = checking.update(status=ImportUpload.Status.REFUSED, refusal=kind, error=error, kept_bytes=0)
        else:
            recorded = checking.update(
                status=ImportUpload.Status.READY,
                kept_bytes=files.copy.stat().st_size,
                format=found["format"],
                conversation_count=len(found["conversations"]),
                facts=found["facts"],
                turns=found["turns"],
                cut=found["cut"],
            )
            if recorded:
                UploadConversation.objects.bulk_create(
                    [UploadConversation(upload=upload, place=n, **c) for n, c in enumerate(found["conversations"])],
                    batch_size=2000,
                )
    if recorded:
        files.remove(keep_copy=refusal is None)
    return ImportUpload.Status.REFUSED if refusal is not None else ImportUpload.Status.READY


REFUSALS = {"format": formats.FormatError, "too_large": InputTooLarge, "busy": MachineTooBusy}


def refusal_of(upload: ImportUpload) -> MemoryInputError | None:
    """The error a refused upload's check gave, as the exception a door answers it with (400, 413, 503)."""
    if upload.status != ImportUpload.Status.REFUSED:
        return None
    return REFUSALS.get(upload.refusal, formats.FormatError)(upload.error)


def upload_path(upload: ImportUpload) -> Path:
    """The upload's working copy."""
    return import_files.folder() / upload.path


def upload_delete(*, upload: ImportUpload) -> None:
    """Delete a file brought to import and its listing (the imports made from it keep their record; one
    still reading it fails, saying the file is gone). One being checked goes too (its check's files with it;
    what the check writes after is removed by the sweep)."""
    import_files.remove_on_commit([path.name for path in CheckFiles.of(upload).all()])
    ImportJob.objects.filter(upload=upload, status__in=[JobStatus.QUEUED, JobStatus.RUNNING]).update(
        status=JobStatus.FAILED, error="the file was deleted before it was imported", finished_at=timezone.now()
    )
    upload.delete()


def uploads_expire() -> int:
    """Delete the files brought to import (and their listings) older than MEMORYOS_IMPORT_KEEP_SECONDS
    that no unfinished import is reading: a file is kept while it is chosen from and imported, not for
    ever. The imports keep their record (source, counts). Files that nothing keeps (a web process killed
    while it read one, a restore whose space was deleted) go an hour after they were last written. Returns
    how many uploads were deleted."""
    cutoff = timezone.now() - timedelta(seconds=memory_settings().import_keep_seconds)
    reading = ImportJob.objects.filter(status__in=[JobStatus.QUEUED, JobStatus.RUNNING], upload__isnull=False)
    old = ImportUpload.objects.filter(created_at__lt=cutoff).exclude(pk__in=reading.values("upload_id"))
    expired = list(old.values_list("pk", "path"))
    import_files.remove_on_commit([path for _, path in expired])
    ImportUpload.objects.filter(pk__in=[pk for pk, _ in expired]).delete()
    restoring = BackgroundJob.objects.filter(
        kind=BackgroundJob.Kind.RESTORE, status__in=[JobStatus.QUEUED, JobStatus.RUNNING]
    )
    keep = {*ImportUpload.objects.values_list("path", flat=True)}
    checking = ImportUpload.objects.filter(status=ImportUpload.Status.CHECKING)
    keep |= {path.name for upload in checking.only("path") for path in CheckFiles.of(upload).all()}
    keep |= {import_files.restore_vectors_name(pk) for pk in restoring.values_list("pk", flat=True)}
    import_files.orphans_remove(keep)
    return len(expired)
