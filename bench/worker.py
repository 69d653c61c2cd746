"""A Celery worker started by a benchmark command, on the configured broker, with its log in var/."""

import subprocess
import sys
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import CommandError


def start_worker(log_name: str = "bench-worker.log", *, timeout: float = 120) -> subprocess.Popen:
    """Start `celery worker --pool=solo` in its own session (so that killpg ends it and its children) and
    return once it says it is ready; CommandError when it does not start within `timeout` seconds."""
    log = Path(settings.BASE_DIR) / "var" / log_name
    log.parent.mkdir(parents=True, exist_ok=True)  # a fresh checkout has no var/ yet
    handle = open(log, "wb")  # noqa: SIM115 (the worker process owns it)
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "playground", "worker", "--pool=solo", "--loglevel=INFO"],
        cwd=settings.BASE_DIR,
        stdout=handle,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout
    while b" ready." not in log.read_bytes():
        if worker.poll() is not None or time.monotonic() > deadline:
            raise CommandError(f"the Celery worker did not start; see {log}")
        time.sleep(0.5)
    return worker
