"""get_response: a prompt from every tier, one LLM call, the exchange written back."""

import pytest

from memory_engine.errors import InvalidTurn
from memory_engine.llm import LLMInvalidAnswer, LLMUnavailable
from memory_engine.models import HeatEvent, Page
from tests.fake_llm_server import reply, slow, status
from tests.memory_helpers import CAT_TALK, COOKING_TALK, add_turns, days_ago, extraction, nothing_extracted


@pytest.fixture
def remembered(memory, alice_space, fake_llm):
    alice_space.stm_capacity = 2
    alice_space.heat_threshold = 3.5
    alice_space.save()
    fake_llm.script(
        extraction(
            profile=[("occupation", "nurse", 1)],
            user_facts=[("user's cat name", "The user has a cat named Milo", 1)],
        )
    )
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK, start=days_ago(5))
    add_turns(memory, COOKING_TALK, start=days_ago(1))
    fake_llm.requests.clear()
    return alice_space


def test_the_reply_is_built_from_every_tier_and_the_exchange_is_stored(memory, remembered, fake_llm):
    fake_llm.script(reply("Your cat is called Milo."))
    response = memory.get_response(user_id="alice", assistant_id="helper", query="What is my cat called?")
    assert response.text == "Your cat is called Milo."
    assert (response.page.user_input, response.page.agent_response) == (
        "What is my cat called?",
        "Your cat is called Milo.",
    )
    assert response.page.seq == 7
    messages = fake_llm.requests[0]["messages"]
    system = messages[0]["content"]
    assert "You are Helper" in system and "A friendly assistant." in system
    assert "occupation: nurse" in system
    assert "The user has a cat named Milo" in system
    assert "Milo" in system.split("## Relevant past conversation")[1]
    # Short-term memory as real chat turns, then the query last.
    assert messages[1] == {"role": "user", "content": COOKING_TALK[1][0]}
    assert messages[-1] == {"role": "user", "content": "What is my cat called?"}
    assert "response_format" not in fake_llm.requests[0]


def test_an_llm_failure_stores_nothing(memory, remembered, fake_llm):
    fake_llm.script(status(503), status(503))
    with pytest.raises(LLMUnavailable):
        memory.get_response(user_id="alice", assistant_id="helper", query="What is my cat called?")
    assert Page.objects.count() == 6


def test_a_slow_llm_times_out_and_stores_nothing(memory, remembered, fake_llm):
    fake_llm.script(slow(5, reply("late")), slow(5, reply("late")))
    with pytest.raises(LLMUnavailable):
        memory.get_response(user_id="alice", assistant_id="helper", query="What is my cat called?")
    assert Page.objects.count() == 6


def test_an_error_text_reply_is_not_stored_as_memory(memory, remembered, fake_llm):
    fake_llm.script(reply("Error: rate limit"), reply("Error: rate limit"))
    with pytest.raises(LLMInvalidAnswer):
        memory.get_response(user_id="alice", assistant_id="helper", query="What is my cat called?")
    assert not Page.objects.filter(agent_response__startswith="Error").exists()


def test_an_oversized_query_is_refused_before_any_work(memory, remembered, fake_llm):
    events = HeatEvent.objects.count()
    with pytest.raises(InvalidTurn, match="limit"):
        memory.get_response(user_id="alice", assistant_id="helper", query="why? " * 2000)
    assert fake_llm.requests == []
    assert HeatEvent.objects.count() == events
    assert Page.objects.count() == 6
