"""Warming up loads what the first reply needs, so that the first chat after a start does not wait for
the models to load."""

import pytest

from memory_engine.llm import get_llm, offline
from memory_engine.store.embeddings import get_embedder
from memory_engine.warm_up import warm_up, warm_up_in_background


@pytest.mark.offline_llm
def test_warming_up_loads_the_offline_model_that_the_first_reply_then_uses(settings, monkeypatch):
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PROVIDER": "offline", "LLM_BASE_URL": ""}
    monkeypatch.setattr(offline, "_servers", {})  # as in a process that has not loaded the model yet
    thread = warm_up_in_background()
    thread.join(timeout=300)
    assert not thread.is_alive()
    [loaded] = offline._servers.values()
    answer = get_llm().chat([{"role": "user", "content": "Say hello."}], max_tokens=8)
    assert answer.text
    assert list(offline._servers.values()) == [loaded]  # the reply used the warmed-up model: no second load


def test_warming_up_with_an_endpoint_loads_the_embedder_and_sends_nothing(fake_llm):
    calls = len(fake_llm.requests)
    warm_up()
    assert len(fake_llm.requests) == calls
    assert get_embedder().encode_one("hello").shape == (384,)
