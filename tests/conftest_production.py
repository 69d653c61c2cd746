"""Pytest plugin: the production stack's processes. `production_env` is the environment of a production
process here (DEBUG off, a secret key of its own, the test database, a Redis of the test's own);
`start(role, **env)` runs `scripts/serve <role>` with it and stops every role it started at the end."""

import os
import secrets
import subprocess
import sys
from pathlib import Path

import pytest

from memory_engine.models import MemoryUser
from memory_engine.services.spaces import assistant_create, space_get, user_create
from memory_engine.services.tokens import token_create
from tests.processes import ROOT, Role, database_url, free_port, healthy, wait_until


@pytest.fixture(scope="session")
def static_root(tmp_path_factory) -> Path:
    """The static files, collected once for this test process as an image's build collects them: a web role
    started later collects again only what changed (playground/static_files.py), as in a container."""
    folder = tmp_path_factory.mktemp("static")
    subprocess.run(
        [sys.executable, "manage.py", "collectstatic", "--noinput", "-v0"],
        cwd=ROOT,
        env={**os.environ, "DEBUG": "true", "STATIC_ROOT": str(folder)},
        check=True,
        timeout=900,
    )
    return folder


@pytest.fixture
def production_env(broker, static_root, tmp_path) -> dict:
    """The environment of a production process here: DEBUG off, its own secret key, loopback only."""
    return {
        **os.environ,
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": broker.url,
        "STATIC_ROOT": str(static_root),
        "MEMORYOS_INDEX_DIR": str(tmp_path / "indexes"),
        "BEAT_SCHEDULE_FILE": str(tmp_path / "beat-schedule"),
        "WEB_WORKERS": "1",
        "MCP_BIND_HOST": "127.0.0.1",
        "HF_HUB_OFFLINE": "1",
    }


@pytest.fixture
def start(production_env, tmp_path):
    started: list[Role] = []

    def start_role(role: str, **env: str) -> Role:
        # A log a process: a test may start a role twice (two web processes, two proxies).
        process = Role(role, {**production_env, **env}, tmp_path / f"{role}-{len(started) + 1}.log")
        started.append(process)
        return process

    yield start_role
    for process in started:
        process.stop()


def serve(start, tmp_path: Path, **env: str) -> tuple[object, str, str]:
    """Migrate, then one web process with a TMPDIR of its own; the role, its URL and alice's token."""
    assert start("migrate").process.wait(300) == 0
    user_create(user_id="alice")
    assistant_create(assistant_id="helper")
    space_get(user_id="alice", assistant_id="helper")
    _, secret = token_create(memory_user=MemoryUser.objects.get(external_id="alice"))
    port = free_port()
    (tmp_path / "tmp").mkdir()
    web = start(
        "web",
        BIND=f"127.0.0.1:{port}",
        TMPDIR=str(tmp_path / "tmp"),
        MEMORYOS_IMPORT_DIR=str(tmp_path / "imports"),
        **env,
    )
    base = f"http://127.0.0.1:{port}"
    wait_until(lambda: healthy(f"{base}/healthz") or not web.running(), timeout=300, what="the web server")
    assert web.running(), web.output()[-3000:]
    return web, base, secret
