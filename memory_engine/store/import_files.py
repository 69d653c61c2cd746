"""Where the files people bring to import are kept (MEMORYOS_IMPORT_DIR, shared by the web processes and
the workers): each upload's working copy, and, while a file arrives and is checked, the file itself; and
the vectors a restore has made so far. A file
goes with its upload (deleted with its space or user, expired, refused); one that no upload names and that
has not been written to for an hour (a web process killed while it read a file) is an orphan, removed by
the workers' sweep."""

import json
import time
from pathlib import Path

from django.db import transaction

from memory_engine.config import memory_settings

ORPHAN_SECONDS = 3600  # longer than any file takes to arrive and be checked


def folder() -> Path:
    path = Path(memory_settings().import_dir)
    path.mkdir(parents=True, exist_ok=True)
    return path


def restore_vectors_name(job_id: int) -> str:
    """The file where a restore keeps the vectors it has made so far (services/background.py)."""
    return f"restore-{job_id}.vectors"


CHUNK = 1 << 20


def holds(name: str, texts: list[str]) -> bool:
    """Whether the kept file `name` holds any of `texts` (as written, or escaped in its JSON lines), read a
    chunk at a time; a missing file holds nothing."""
    needles = {form.encode() for text in texts for form in (text, json.dumps(text, ensure_ascii=False)[1:-1])}
    longest = max((len(n) for n in needles), default=0)
    try:
        with (folder() / Path(name).name).open("rb") as f:
            tail = b""
            while chunk := f.read(CHUNK):
                window = tail + chunk
                if any(needle in window for needle in needles):
                    return True
                tail = window[-longest:] if longest else b""
    except FileNotFoundError:
        return False
    return False


def remove_on_commit(names: list[str]) -> None:
    """Delete the kept files `names` once the transaction deleting their uploads commits (at once outside
    one): rolled back, they stay."""
    if not names:
        return

    def remove() -> None:
        for name in names:
            (folder() / Path(name).name).unlink(missing_ok=True)

    transaction.on_commit(remove)


def orphans_remove(kept: set[str], *, older_than: float = ORPHAN_SECONDS) -> int:
    """Delete the files in the folder that no upload keeps (`kept`: the names uploads hold) and that were
    last written more than `older_than` seconds ago. Returns how many."""
    cutoff, removed = time.time() - older_than, 0
    for path in folder().iterdir():
        if path.is_file() and path.name not in kept and path.stat().st_mtime < cutoff:
            path.unlink(missing_ok=True)
            removed += 1
    return removed
