"""Pytest plugin: a private Redis broker (`broker`) and real Celery worker processes (`start_worker`)
that share the test database and call the scripted LLM server. Tests that use them need
`pytest.mark.django_db(transaction=True)`, so that the workers see the test's rows."""

import pytest

from tests.processes import CeleryWorker, RedisServer, database_url, use_broker


@pytest.fixture
def broker(tmp_path, settings):
    """A Redis of the test's own: the broker, and what carries announcements of changes (store/changes.py)."""
    server = RedisServer(tmp_path)
    server.start()
    use_broker(server.url)
    settings.CELERY_BROKER_URL = server.url
    yield server
    server.stop()
    use_broker(settings.CELERY_BROKER_URL)


@pytest.fixture
def start_worker(fake_llm, broker, settings, tmp_path):
    """Start worker processes; this test process asks for consolidation through the broker."""
    settings.MEMORYOS = {**settings.MEMORYOS, "CONSOLIDATION": "celery"}
    base = {
        "DATABASE_URL": database_url(),
        "CELERY_BROKER_URL": broker.url,
        "MEMORYOS_LLM_PROVIDER": "openai",
        "MEMORYOS_LLM_BASE_URL": fake_llm.base_url,
        "MEMORYOS_LLM_MODEL": "fake-model",
        "MEMORYOS_LLM_API_KEY": "test-key",
        "MEMORYOS_LLM_TIMEOUT_SECONDS": "2",
        "MEMORYOS_LLM_MAX_RETRIES": "0",
        "MEMORYOS_CONSOLIDATION_LEASE_SECONDS": "8",
        "MEMORYOS_CONSOLIDATION_MAX_RETRIES": "2",
        "MEMORYOS_CONSOLIDATION_RETRY_BASE_SECONDS": "0.3",
        "MEMORYOS_CONSOLIDATION_RETRY_CAP_SECONDS": "1",
        "MEMORYOS_SWEEP_SECONDS": "60",
    }
    workers = []

    def start(name: str = "w1", **env: str) -> CeleryWorker:
        worker = CeleryWorker(name, {**base, **env}, tmp_path).start()
        workers.append(worker)
        return worker

    yield start
    for worker in workers:
        worker.stop()
