"""Real processes for integration tests: a private Redis broker and Celery worker processes."""

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path

import httpx2
from django.db import connection

from bench.processes import ROOT, RedisServer, Role, free_port, healthy, redis_server_binary, wait_until  # noqa: F401 (shared)
from playground.celery import app as celery_app


def wait_for(
    predicate: Callable[[], object],
    *,
    progress: Callable[[], object],
    what: str,
    stall: float = 180.0,
    limit: float = 900.0,
    interval: float = 0.2,
):
    """Poll until `predicate()` is truthy and return its value. Fail when `progress()` (a snapshot of
    the work, e.g. runs and tiers) has not changed for `stall` seconds, or after `limit` in all: a slow,
    busy machine gets the time it needs while the work moves, and a stuck worker still fails."""
    began = last_change = time.monotonic()
    seen = progress()
    while True:
        value = predicate()
        if value:
            return value
        now = time.monotonic()
        current = progress()
        if current != seen:
            seen, last_change = current, now
        if now - last_change > stall:
            raise AssertionError(f"no progress for {stall:.0f}s waiting for {what}; the work stood at {seen!r}")
        if now - began > limit:
            raise AssertionError(f"timed out after {limit:.0f}s waiting for {what}; the work stood at {seen!r}")
        time.sleep(interval)


def use_broker(url: str) -> None:
    """Point this process's Celery app at `url` (the app was configured at import)."""
    celery_app.conf.broker_url = url
    celery_app._pool = None  # drop connections to the previous broker
    celery_app.amqp._producer_pool = None


def database_url() -> str:
    """The test database as a DATABASE_URL, for worker processes to share it."""
    db = connection.settings_dict
    if db["ENGINE"].endswith("sqlite3"):
        return f"sqlite:///{Path(db['NAME']).resolve()}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


class CeleryWorker:
    """`celery -A playground worker` in its own process, with its own index folder (its own disk)."""

    def __init__(self, name: str, env: dict[str, str], workdir: Path) -> None:
        self.name = name
        self.env = env
        self.workdir = workdir
        self.log = workdir / f"{name}.log"
        self.process: subprocess.Popen | None = None

    def start(self, *, beat: bool = True) -> "CeleryWorker":
        index_dir = self.workdir / f"{self.name}-indexes"
        env = {**os.environ, **self.env, "MEMORYOS_INDEX_DIR": str(index_dir), "HF_HUB_OFFLINE": "1"}
        command = [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "playground",
            "worker",
            "--pool=solo",
            "--loglevel=INFO",
            "-n",
            f"{self.name}@%h",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
        if beat:
            command += ["-B", "-s", str(self.workdir / f"{self.name}-beat-schedule")]
        self.handle = open(self.log, "ab")  # noqa: SIM115 (closed in stop/kill)
        self.process = subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=self.handle, stderr=subprocess.STDOUT, start_new_session=True
        )
        # Ready means taking tasks with the embedding model loaded (tasks.load_embedding_model_on_start):
        # on a busy machine loading it can take a minute or more.
        wait_until(
            lambda: b"taking tasks" in self.log.read_bytes() or self.process.poll() is not None,
            timeout=600,
            what=f"worker {self.name} to start and load its model",
        )
        assert self.process.poll() is None, self.log.read_text()[-3000:]
        return self

    def kill(self) -> None:
        """SIGKILL the worker and everything it started: no clean-up, as if the machine died."""
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)
        self.handle.close()

    def stop(self) -> None:
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(10)
            self.handle.close()


def port_open(port: int) -> bool:
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def client_at(address: str, base: str) -> httpx2.Client:
    """A client connecting from `address` (a loopback address of its own: another machine, to the server;
    Linux routes all of 127/8 to the loopback)."""
    transport = httpx2.HTTPTransport(local_address=address)
    return httpx2.Client(base_url=base, transport=transport, timeout=120, trust_env=False)


@contextmanager
def mcp_http_server(env: dict, log_path: Path, assistant: str = "helper"):
    """`manage.py mcp_server --transport http` in its own process with `env` added to this one's;
    yields its /mcp URL once it listens, and stops it after."""
    port = free_port()
    command = [sys.executable, "manage.py", "mcp_server", "--transport", "http", "--port", str(port)]
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [*command, "--assistant", assistant],
            cwd=ROOT,
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_until(lambda: port_open(port), timeout=300, what="the MCP HTTP server")
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            process.terminate()
            process.wait(timeout=10)
