"""Pytest plugin: the `fake_llm` fixture, a scripted OpenAI-compatible server wired into settings.

Load it from a test module or from tests/conftest.py with
`pytest_plugins = ["tests.conftest_llm"]`.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from bench.fake_llm_server import FakeLLMServer
from memory_engine.llm import forget_endpoint

FAKE_LLM_TIMEOUT_SECONDS = 2.0
FAKE_LLM_MAX_RETRIES = 1


@pytest.fixture
def fake_llm(settings) -> Iterator[FakeLLMServer]:
    """A running FakeLLMServer; `memory_engine.llm.get_llm()` returns a client pointed at it.

    Settings: provider "openai", a 2 s timeout and LLM_MAX_RETRIES=1, so a failing call gives up
    within a few seconds. Script answers with `fake_llm.script(reply(...), ...)` or set
    `fake_llm.responder`. Needs no database.
    """
    with FakeLLMServer(model="fake-model") as server:
        forget_endpoint(server.base_url)  # a client cached for an earlier server on the same port
        settings.MEMORYOS = {
            **settings.MEMORYOS,
            "LLM_PROVIDER": "openai",
            "LLM_BASE_URL": server.base_url,
            "LLM_MODEL": "fake-model",
            "LLM_API_KEY": "test-key",
            "LLM_TIMEOUT_SECONDS": FAKE_LLM_TIMEOUT_SECONDS,
            "LLM_MAX_RETRIES": FAKE_LLM_MAX_RETRIES,
        }
        yield server
