"""Files people bring to import: checked whole before anything is stored, kept as the working copy the import
reads (services/imports.py), and deleted with their space, when they expire, or when refused.

A file is written to MEMORYOS_IMPORT_DIR as it arrives, a chunk at a time (never held whole), measured as it
comes (formats/shape.py: a file past a bound is refused at that chunk), a ChatGPT zip's conversations.json
unpacked within the same byte limit, then scanned (memory_engine/formats): its format recognised from its
content, every item checked as the import will check it, its turns written to the working copy and its
conversations listed for the person to choose from. The file itself is then deleted; the working copy is
kept. Each turn and fact has an identity (its format, its conversation's id and its messages' ids, hashed)
that the space records with what it stored (ImportedKey): the same file imported again stores nothing
twice, and the same file brought twice to a space is kept once.
"""

import hashlib
import json
import logging
import signal
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
from memory_engine.errors import InputTooLarge, MemoryInputError
from memory_engine.models import BackgroundJob, ImportJob, ImportUpload, JobStatus, MemorySpace, UploadConversation
from memory_engine.store import import_files
from memory_engine.store.spaces import same_holder

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


def upload_save(
    *, space: MemorySpace, chunks: Iterable[bytes], name: str, check: Callable[[], None] = _nothing_to_check
) -> ImportUpload:
    """Keep the file the chunks make, check it whole and list what it holds. The file is checked in a
    process of its own (file_check.py), which `check` may stop: it is called as the file arrives and
    while it is checked, and what it raises ends the upload (a deadline passed, the client gone). Raises
    InputTooLarge past MEMORYOS_MAX_IMPORT_BYTES (or, unpacked, past it too) or past what the account may
    keep, and formats.FormatError (a MemoryInputError) for a file that is not one of the formats or passes
    one of their bounds; then nothing is kept. A file the space has already been brought is kept once: its
    upload is returned."""
    name = inputs.text(name or "upload", "the file's name", limit=200, error=InputTooLarge)
    limit = memory_settings().max_import_bytes
    folder, stem = import_files.folder(), uuid.uuid4().hex
    arriving, copy = folder / f"{stem}.upload", folder / f"{stem}.records"
    try:
        received = _Arriving(limit)
        with arriving.open("wb") as out:
            for chunk in chunks:
                received.write(out, chunk)
                check()
        if not received.size:
            raise MemoryInputError("the file is empty")
        sha256 = received.digest.hexdigest()
        same = ImportUpload.objects.filter(space=space, sha256=sha256, size=received.size).first()
        if same is not None:
            arriving.unlink()
            return same
        found = _checked_apart(arriving, copy, zipped=received.zipped, limit=limit, check=check)
        arriving.unlink()
        if not found["turns"] and not found["facts"]:
            raise MemoryInputError(f"the file is {formats.LABELS[found['format']]}, with nothing to import in it")
        kept = copy.stat().st_size
        _quota_check(space, kept)
        with transaction.atomic():
            upload = ImportUpload.objects.create(
                space=space,
                name=name,
                path=copy.name,
                size=received.size,
                kept_bytes=kept,
                sha256=sha256,
                format=found["format"],
                conversation_count=len(found["conversations"]),
                facts=found["facts"],
                turns=found["turns"],
                cut=found["cut"],
            )
            UploadConversation.objects.bulk_create(
                [UploadConversation(upload=upload, place=place, **c) for place, c in enumerate(found["conversations"])],
                batch_size=2000,
            )
        return upload
    except BaseException:
        for path in (arriving, copy, folder / f"{stem}.json", folder / f"{stem}.order", folder / f"{stem}.result"):
            path.unlink(missing_ok=True)
        raise


CHECK_POLL_SECONDS = 0.1


def _checked_apart(arriving: Path, copy: Path, *, zipped: bool, limit: int, check: Callable[[], None]) -> dict:
    """Check the file in a process of its own (file_check.py) and return what it holds (the Scan, as
    JSON); `check` is called while it runs, and what it raises kills the process first. Raises
    InputTooLarge when the check used its processor time (MEMORYOS_UPLOAD_CHECK_SECONDS), FormatError as the
    check says, and when the process ends without saying (a crash)."""
    order_path, result_path = arriving.with_suffix(".order"), arriving.with_suffix(".result")
    order = {
        "path": str(arriving),
        "zipped": zipped,
        "unzipped": str(arriving.with_suffix(".json")),
        "copy": str(copy),
        "result": str(result_path),
        "limit": limit,
        "limits": file_check.limits_now(),
        "cpu_seconds": memory_settings().upload_check_seconds,
    }
    order_path.write_text(json.dumps(order))
    checker = subprocess.Popen(
        [sys.executable, "-m", "memory_engine.file_check", str(order_path)],
        cwd=settings.BASE_DIR,  # where the project's modules are, whatever the web process's folder
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        while checker.poll() is None:
            check()
            time.sleep(CHECK_POLL_SECONDS)
    finally:
        if checker.poll() is None:
            checker.kill()
            checker.wait()
    stderr = checker.stderr.read().decode(errors="replace") if checker.stderr else ""
    if checker.stderr:
        checker.stderr.close()
    outcome = json.loads(result_path.read_text()) if result_path.exists() else None
    order_path.unlink(missing_ok=True)
    result_path.unlink(missing_ok=True)
    if outcome is None and checker.returncode == -signal.SIGXCPU:  # its processor time ran out (file_check.py)
        seconds = order["cpu_seconds"]
        raise InputTooLarge(f"checking the file took more than {seconds:.0f} s of processor time: send a smaller file")
    if outcome is None:
        logger.error("the check of an uploaded file ended with %s: %s", checker.returncode, stderr[-2000:])
        raise formats.FormatError(f"the file could not be read (its check ended with code {checker.returncode})")
    logger.info(
        "a file brought to import checked in its own process: %s, peak %.0f MiB",
        "refused" if "error" in outcome else outcome["scan"]["format"],
        outcome.get("peak_bytes", 0) / 2**20,
    )
    if "error" in outcome:
        raise formats.FormatError(outcome["error"])
    return outcome["scan"]


def upload_path(upload: ImportUpload) -> Path:
    """The upload's working copy."""
    return import_files.folder() / upload.path


def upload_delete(*, upload: ImportUpload) -> None:
    """Delete a file brought to import and its listing (the imports made from it keep their record; one
    still reading it fails, saying the file is gone)."""
    import_files.remove_on_commit([upload.path])
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
    keep |= {import_files.restore_vectors_name(pk) for pk in restoring.values_list("pk", flat=True)}
    import_files.orphans_remove(keep)
    return len(expired)
