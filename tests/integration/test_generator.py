"""get_response: a prompt from every tier, one LLM call, the exchange written back."""

import json
from datetime import timedelta

import pytest
from django.utils import timezone

from bench.fake_llm_server import reply, slow, status
from memory_engine.engine.generator import FALLBACK_REPLY
from memory_engine.errors import InvalidTurn
from memory_engine.llm import LLMInvalidAnswer, LLMUnavailable
from memory_engine.models import HeatEvent, MemoryUser, Page
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
    # The memory is labelled system content; the user's earlier words are quoted and attributed.
    about_user = system.split("What you know about the user:")[1].split("What you know about yourself:")[0]
    assert "occupation: nurse" in about_user
    assert "The user has a cat named Milo" in about_user
    assert 'the user said: "I\'m a nurse and I have a cat named Milo."' in about_user
    # Yesterday's cooking talk is over: it is no conversation in progress, so no chat turns; the query last.
    assert messages[1:] == [{"role": "user", "content": "What is my cat called?"}]
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


LOOP = "Milo is a cat and Milo is a cat and Milo is a cat and " * 60


def test_the_reply_is_asked_with_chat_settings_as_a_stream(memory, remembered, fake_llm):
    fake_llm.script(reply("Your cat is called Milo."))
    memory.get_response(user_id="alice", assistant_id="helper", query="What is my cat called?")
    request = fake_llm.requests[0]
    assert request["stream"] is True
    assert request["max_tokens"] == 160 and request["temperature"] == 0.0 and request["seed"] == 42
    assert request["frequency_penalty"] > 0 and "\nUser:" in request["stop"]
    assert "repeat_penalty" not in request  # llama.cpp's own: not an OpenAI field


def test_a_looping_reply_is_stopped_mid_stream_and_asked_again_with_stronger_settings(memory, remembered, fake_llm):
    fake_llm.script(reply(LOOP, chunk_seconds=0.005), reply("Your cat is called Milo."))
    response = memory.get_response(user_id="alice", assistant_id="helper", query="What is my cat called?")
    assert response.text == "Your cat is called Milo." and not response.withheld
    assert "repeats" in response.retried_because
    # The client hung up long before the 720 words of the loop were sent.
    first = fake_llm.streams[0]
    assert first.hung_up or first.sent < first.total
    assert first.sent < first.total / 2
    retry = fake_llm.requests[1]
    assert retry["temperature"] > 0 and retry["seed"] != fake_llm.requests[0]["seed"]
    assert retry["frequency_penalty"] > fake_llm.requests[0]["frequency_penalty"]
    assert response.page.agent_response == "Your cat is called Milo."


def test_a_reply_that_degenerates_twice_is_never_stored_and_the_user_gets_an_honest_answer(
    memory, remembered, fake_llm
):
    fake_llm.script(reply(LOOP), reply("What you know about the user: occupation: nurse"))
    response = memory.get_response(user_id="alice", assistant_id="helper", query="Tell me about Milo?")
    assert response.withheld and response.text == FALLBACK_REPLY
    page = Page.objects.get(pk=response.page.pk)
    assert page.user_input == "Tell me about Milo?"  # the user's words are memory
    assert page.agent_response == "" and page.reply_withheld  # the reply is not
    assert not Page.objects.filter(agent_response__contains="Milo is a cat and").exists()

    # The next prompt carries the user's words, not the failed reply, and keeps the roles alternating.
    fake_llm.script(reply("Milo is your cat."))
    memory.get_response(user_id="alice", assistant_id="helper", query="And his favourite spot?")
    messages = fake_llm.requests[-1]["messages"]
    assert "Milo is a cat and Milo" not in str(messages)
    assert messages[-1] == {"role": "user", "content": "Tell me about Milo?\nAnd his favourite spot?"}
    roles = [m["role"] for m in messages[1:]]
    assert all(a != b for a, b in zip(roles, roles[1:], strict=False))


def test_a_reply_that_speaks_as_the_user_is_asked_again(memory, remembered, fake_llm):
    MemoryUser.objects.filter(external_id="alice").update(display_name="Alice")
    fake_llm.script(reply("I'm Alice, a nurse with a cat."), reply("You're a nurse, and your cat is Milo."))
    response = memory.get_response(user_id="alice", assistant_id="helper", query="Who am I?")
    assert "speaks as the user" in response.retried_because
    assert response.text == "You're a nurse, and your cat is Milo."


def test_a_reply_cut_off_at_the_cap_keeps_its_whole_sentences(memory, remembered, fake_llm):
    fake_llm.script(reply("Your cat is Milo. He likes your scrubs. And he also", finish_reason="length"))
    response = memory.get_response(user_id="alice", assistant_id="helper", query="What is my cat called?")
    assert response.text == "Your cat is Milo. He likes your scrubs."


def test_a_reply_stops_after_three_sentences_and_keeps_them_whole(memory, remembered, fake_llm):
    rambling = "Your cat is Milo. He is 3.5 years old. Dr. Vet likes him! He sleeps a lot. " * 12
    fake_llm.script(reply(rambling, chunk_seconds=0.005))
    response = memory.get_response(user_id="alice", assistant_id="helper", query="Tell me about my cat?")
    # "3.5" and "Dr." end no sentence.
    assert response.text == "Your cat is Milo. He is 3.5 years old. Dr. Vet likes him!"
    assert response.page.agent_response == response.text and response.retried_because is None
    stream = fake_llm.streams[0]
    assert stream.sent < stream.total / 4  # generation stopped there: the client hung up


def test_a_reply_stopped_at_its_sentences_never_ends_on_a_list_it_announced(memory, remembered, fake_llm):
    """What the bundled model wrote to "Any tips for sleeping better?" ended "Here are some ways:\n\n1."."""
    listing = "Sleep matters. It is about habits. Here are some simple ways:\n\n1. Keep a schedule.\n2. No screens."
    fake_llm.script(reply(listing))
    response = memory.get_response(user_id="alice", assistant_id="helper", query="Any tips for sleeping?")
    # "1." opening a line ends no sentence: the third one runs to the end of the list's first item.
    assert response.text == "Sleep matters. It is about habits. Here are some simple ways:\n\n1. Keep a schedule."
    fake_llm.script(reply("Sleep matters. Here are some simple ways:\n\n1", finish_reason="length"))
    response = memory.get_response(user_id="alice", assistant_id="helper", query="Any tips for sleeping?")
    assert response.text == "Sleep matters."  # the list never came: its announcement goes too


def test_the_sentence_limit_follows_the_setting_and_zero_turns_it_off(memory, remembered, fake_llm, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "CHAT_MAX_SENTENCES": 0}
    fake_llm.script(reply("One. Two. Three. Four. Five."))
    response = memory.get_response(user_id="alice", assistant_id="helper", query="Count to five?")
    assert response.text == "One. Two. Three. Four. Five."
    settings.MEMORYOS = {**settings.MEMORYOS, "CHAT_MAX_SENTENCES": 1}
    fake_llm.script(reply("One. Two. Three."))
    response = memory.get_response(user_id="alice", assistant_id="helper", query="Count to three?")
    assert response.text == "One."


def test_a_weak_models_prompt_is_small_talk_with_no_memory_to_recite_and_its_guard_knows_the_name(memory, remembered):
    """Given notes, SmolLM2-135M recited them as a description of the user ("Maria Lindqvist is a
    wonderful person"); questions about the person are answered from their words (engine/recall.py), so its
    prompt holds none. The guard still knows the names: a reply opening with one, claiming one or
    describing the user by one is refused."""
    from memory_engine.engine.generator import build_prompt
    from memory_engine.engine.retriever import retrieve

    MemoryUser.objects.filter(external_id="alice").update(display_name="Alice Moreau")
    remembered.refresh_from_db()
    retrieval = retrieve(remembered, "Lovely weather today.")
    full = build_prompt(remembered, retrieval)
    compact = build_prompt(remembered, retrieval, compact=True)

    assert "Alice" in full.messages[0]["content"]
    assert "Alice" not in str(compact.messages) and "Milo" not in str(compact.messages)
    assert [m["role"] for m in compact.messages] == ["system", "user"]
    assert compact.messages[-1]["content"] == "Lovely weather today."
    assert [title for title, _ in compact.sections] == ["instructions"]
    for answer in (
        "I'm Alice, and I have a cat.",
        "Alice Moreau is a friendly nurse who loves cats.",
        "Alice's a wonderful person.",
        "Alice! Welcome to my clinic.",
        "Alice Moreau: Hey there!",
        "Reply to the user in one or two short, kind sentences.",
    ):
        assert compact.guard.problem(answer) is not None, answer
    assert compact.guard.problem("Hi Alice! Lovely weather indeed.") is None
    assert full.guard.problem("Alice, that sounds lovely.") is None  # a capable model may open with a name
    # A name given in the message itself, in any alphabet's letters (holdout 3: "My name is Tomás and I'm a
    # marine biologist", answered to "Hola, I'm Tomás").
    introduced = build_prompt(remembered, retrieve(remembered, "Hola, I'm Tomás, doing my PhD in Puerto Madryn."))
    assert introduced.guard.problem("Hola! My name is Tomás and I'm a marine biologist.") is not None


def _reply_request(fake_llm, query: str) -> dict:
    """The request that asked for the reply to `query` (a promotion after the turn asks the server too)."""
    return next(r for r in fake_llm.requests if r["messages"][-1] == {"role": "user", "content": query})


def test_the_conversation_in_progress_is_given_as_chat_turns(memory, remembered, fake_llm):
    add_turns(memory, [("I'm making the curry now.", "Enjoy it!")], start=timezone.now() - timedelta(minutes=3))
    fake_llm.script(reply("Basmati rice."))
    memory.get_response(user_id="alice", assistant_id="helper", query="Remind me, rice or naan?")
    messages = _reply_request(fake_llm, "Remind me, rice or naan?")["messages"]
    assert messages[1:] == [
        {"role": "user", "content": "I'm making the curry now."},
        {"role": "assistant", "content": "Enjoy it!"},
        {"role": "user", "content": "Remind me, rice or naan?"},
    ]


def test_a_capable_models_prompt_holds_the_turn_that_answers_not_the_last_sessions_long_replies(
    memory, alice_space, fake_llm
):
    # Weeks ago the person said where their sister lives; two days ago they planned a garden with long replies,
    # which are still in short-term memory. Asked about the sister, the prompt holds the answering turn and
    # none of the garden's replies.
    alice_space.stm_capacity = 6
    alice_space.save()
    fake_llm.responder = nothing_extracted
    said = [("My sister Ines lives in Porto and works as an architect.", "Porto is a beautiful city.")]
    said += [(f"I watched film number {n} last night.", "Nice, I hope you liked it.") for n in range(8)]
    add_turns(memory, said, start=days_ago(20))
    garden = [
        (
            f"Help me plan bed {n} of my vegetable garden.",
            " ".join(f"For bed {n}, step {k}: water the tomato seedlings and add compost." for k in range(60)),
        )
        for n in range(6)
    ]
    add_turns(memory, garden, start=days_ago(2))
    assert alice_space.pages.filter(tier="short").count() == 6
    fake_llm.requests.clear()
    fake_llm.script(reply("Your sister Ines lives in Porto."))
    memory.get_response(user_id="alice", assistant_id="helper", query="Where does my sister live?")
    messages = _reply_request(fake_llm, "Where does my sister live?")["messages"]
    assert [m["role"] for m in messages] == ["system", "user"]  # no garden turns as the conversation
    prompt = json.dumps(messages)
    assert "My sister Ines lives in Porto" in prompt
    assert all(reply_text not in prompt for _, reply_text in garden)
    assert prompt.count("tomato seedlings") <= len(garden)  # a sentence of a page shown for the room left, at most
