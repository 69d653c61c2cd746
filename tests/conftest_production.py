"""Pytest plugin: the production stack's processes. `production_env` is the environment of a production
process here (DEBUG off, a secret key of its own, the test database, a Redis of the test's own);
`start(role, **env)` runs `scripts/serve <role>` with it and stops every role it started at the end."""

import os
import secrets

import pytest

from tests.processes import Role, database_url


@pytest.fixture
def production_env(broker, tmp_path) -> dict:
    """The environment of a production process here: DEBUG off, its own secret key, loopback only."""
    return {
        **os.environ,
        "DEBUG": "false",
        "SECRET_KEY": secrets.token_urlsafe(50),
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": broker.url,
        "STATIC_ROOT": str(tmp_path / "static"),
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
