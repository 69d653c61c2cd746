"""An evaluation that survives an interruption: each conversation's results are written as soon as it is
done, to <out>/samples/<sample_id>.json, with the key of everything that made them (the conversation's
own data, the run's arguments, the memory's settings, the code). A later run that finds a file with the
same key takes its results as they are, so a run stopped in its last conversation loses only that one;
any difference in the key (another setting, a changed file, new code) computes the conversation again.
"""

import hashlib
import json
import os
import subprocess
from dataclasses import asdict
from pathlib import Path
from typing import Any

from django.conf import settings

from bench.locomo_run import QuestionResult, SampleResult
from memory_engine.services.ingest import IngestCounters

# Settings that cannot change a result (where files go, how long to wait) or must not be written down.
_NOT_IN_KEY = ("INDEX_DIR", "LLM_API_KEY", "LLM_TIMEOUT_SECONDS", "LLM_MAX_RETRIES", "INDEX_CACHE_MB")


def code_version() -> str:
    """The commit, with a digest of uncommitted changes to tracked files when there are any; "unknown"
    outside a git checkout."""
    root = Path(__file__).resolve().parent.parent
    try:
        head = _git(root, "rev-parse", "HEAD").strip()
        changes = _git(root, "diff", "HEAD")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return f"{head}+{hashlib.sha256(changes.encode()).hexdigest()[:12]}" if changes else head


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout


def run_key(sample: dict[str, Any], arguments: dict[str, Any], code: str) -> dict[str, Any]:
    """What a conversation's results depend on. `arguments`: the run's options that change results."""
    data = json.dumps(sample, sort_keys=True, ensure_ascii=False).encode()
    memory = {k: v for k, v in settings.MEMORYOS.items() if k not in _NOT_IN_KEY}
    return {
        "sample_sha256": hashlib.sha256(data).hexdigest(),
        "arguments": arguments,
        "memory_settings": json.loads(json.dumps(memory, default=str)),
        "code": code,
    }


def _path(folder: Path, sample_id: str) -> Path:
    return folder / "samples" / f"{sample_id}.json"


def save(folder: Path, result: SampleResult, key: dict[str, Any], seconds: float) -> Path:
    """Write one conversation's results beside its key; a reader never sees half a file."""
    path = _path(folder, result.sample_id)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"key": key, "seconds": seconds, "result": asdict(result)}
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(payload, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(partial, path)
    return path


def load(folder: Path, sample_id: str, key: dict[str, Any]) -> tuple[SampleResult, float] | None:
    """The kept results of `sample_id` and the seconds they took, when they were made with `key`."""
    try:
        payload = json.loads(_path(folder, sample_id).read_text(encoding="utf-8"))
        if payload.get("key") != key:
            return None
        return sample_from_dict(payload["result"]), float(payload.get("seconds", 0.0))
    except (OSError, ValueError, KeyError, TypeError):
        return None  # missing, unreadable or of an older format: computed again


def sample_from_dict(data: dict[str, Any]) -> SampleResult:
    """The inverse of `asdict` on a SampleResult (JSON keeps only string keys: k is an int again)."""
    questions = [
        QuestionResult(
            **{
                **q,
                "turn_tokens": {m: {int(k): v for k, v in ks.items()} for m, ks in q["turn_tokens"].items()},
                "curve": {m: {int(b): v for b, v in bs.items()} for m, bs in q.get("curve", {}).items()},
            }
        )
        for q in data["questions"]
    ]
    return SampleResult(**{**data, "ingest": IngestCounters(**data["ingest"]), "questions": questions})
