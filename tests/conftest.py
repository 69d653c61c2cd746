"""Shared fixtures. Named people: alice and bob each talk to the `helper` assistant; charlie has
no memory space of his own. Nobody may see anyone else's memory."""

from collections import Counter
from pathlib import Path

import pytest
from django.core.cache import cache

from memory_engine.interfaces.memoryos import MemoryOS
from memory_engine.store import index
from tests.memory_helpers import nothing_extracted
from tests.processes import ROOT, database_url

pytest_plugins = ["tests.conftest_llm", "tests.conftest_worker", "tests.conftest_browser", "tests.conftest_production"]


# Where a test that asked for no LLM sends its LLM calls: a port nothing listens on, so a call fails at
# once (LLMUnavailable) instead of loading the offline model. Tests that use an LLM ask for `fake_llm`
# (tests/conftest_llm.py) or choose the offline model.
NO_LLM = {
    "LLM_PROVIDER": "openai",
    "LLM_BASE_URL": "http://127.0.0.1:9/v1",
    "LLM_MODEL": "no-llm-in-this-test",
    "LLM_API_KEY": "none",
    "LLM_MAX_RETRIES": 0,
}


# A test that starts processes of the production stack (a Celery worker and its broker, the production
# roles) or drives a browser runs once, on PostgreSQL, the production database: `scripts/test` leaves
# the tests marked `once` out of its SQLite run. So does every test of tests/system, some of which start
# the processes themselves (`scripts/play`, `scripts/services`). What can fail by database (the engine, the
# API, the write path, the feeds' connections) runs on both.
ONCE_FIXTURES = {"browser", "start_worker", "broker", "start"}
SYSTEM = Path(__file__).parent / "system"
# A test that uses no database cannot fail by database: it runs once too, in the SQLite run (tests/unit
# holds the modules made only of such tests).
DATABASE_FIXTURES = {
    "db",
    "transactional_db",
    "django_db_reset_sequences",
    "django_db_serialized_rollback",
    "live_server",
}


def pytest_collection_modifyitems(config, items):
    # pytest-xdist schedules by node id: of tests sharing one, it would run one and say nothing.
    seen = Counter(item.nodeid for item in items)
    if twice := sorted(nodeid for nodeid, count in seen.items() if count > 1):
        raise pytest.UsageError(f"tests share a node id, so a parallel run would drop them: {twice[:3]}")
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        if ONCE_FIXTURES & fixtures or SYSTEM in item.path.parents:
            item.add_marker(pytest.mark.once)
        if item.get_closest_marker("once") is not None or item.get_closest_marker("both_databases") is not None:
            continue  # on PostgreSQL (and, for both_databases, on SQLite too), whatever fixtures it asks for
        if not DATABASE_FIXTURES & fixtures and item.get_closest_marker("django_db") is None:
            item.add_marker(pytest.mark.no_database)


@pytest.fixture(autouse=True)
def _isolated_indexes(settings, tmp_path):
    """Each test gets its own sidecar folder and starts with no index cached in the process, no counts
    in the cache (rate limits, sign-in failures), and no LLM unless it asks for one. Consolidation runs
    inline unless a test starts a Celery worker (tests/system/test_celery_worker.py)."""
    settings.MEMORYOS = {
        **settings.MEMORYOS,
        **NO_LLM,
        "INDEX_DIR": tmp_path / "indexes",
        "CONSOLIDATION": "inline",
    }
    index.forget_all()
    cache.clear()
    yield
    index.forget_all()


@pytest.fixture
def memory(db):
    """The library API, with alice, bob and charlie, and the `helper` assistant."""
    engine = MemoryOS()
    for user in ("alice", "bob", "charlie"):
        engine.create_user(user)
    engine.create_assistant("helper", name="Helper", persona="A friendly assistant.")
    return engine


@pytest.fixture
def alice_space(memory):
    return memory.space(user_id="alice", assistant_id="helper")


@pytest.fixture
def hot_space(alice_space):
    """alice's space with one short-term page: a session of three pages (heat 3 + recency ~1) passes
    its promotion threshold of 3.5."""
    alice_space.stm_capacity = 1
    alice_space.heat_threshold = 3.5
    alice_space.save()
    return alice_space


@pytest.fixture
def bob_space(memory):
    return memory.space(user_id="bob", assistant_id="helper")


@pytest.fixture
def server_env(fake_llm, tmp_path):
    """The environment of an MCP server process (manage.py mcp_server) on the test database, with the
    scripted LLM and inline consolidation."""
    fake_llm.responder = nothing_extracted
    return {
        "DEBUG": "true",  # a development server (the MCP SDK starts stdio servers with a bare environment)
        "DATABASE_URL": database_url(),
        "MEMORYOS_LLM_PROVIDER": "openai",
        "MEMORYOS_LLM_BASE_URL": fake_llm.base_url,
        "MEMORYOS_LLM_MODEL": "fake-model",
        "MEMORYOS_LLM_API_KEY": "test-key",
        "MEMORYOS_LLM_MAX_RETRIES": "0",
        "MEMORYOS_CONSOLIDATION": "inline",
        "MEMORYOS_INDEX_DIR": str(tmp_path / "mcp-indexes"),
        "PYTHONPATH": str(ROOT),
    }
