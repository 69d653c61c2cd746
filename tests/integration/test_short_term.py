"""Storing turns: short-term memory, validation, unknown users and assistants."""

import pytest
from django.utils import timezone

from memory_engine.engine.short_term import short_term_pages
from memory_engine.errors import InvalidTurn, MemoryInputError, UnknownAssistant, UnknownUser
from memory_engine.models import MemorySpace, Page
from tests.memory_helpers import CAT_TALK, COOKING_TALK, add_turns, nothing_extracted


def test_a_turn_is_stored_as_a_numbered_short_term_page(memory, alice_space):
    page = memory.add_memory(user_id="alice", assistant_id="helper", user_input="Hi!", agent_response="Hello!")
    assert (page.seq, page.tier, page.session_id) == (1, Page.Tier.SHORT, None)
    page2 = memory.add_memory(user_id="alice", assistant_id="helper", user_input="Again", agent_response="Yes?")
    assert page2.seq == 2


def test_pages_are_numbered_per_space(memory, alice_space, bob_space):
    memory.add_memory(user_id="alice", assistant_id="helper", user_input="a1", agent_response="")
    memory.add_memory(user_id="alice", assistant_id="helper", user_input="a2", agent_response="")
    bob_page = memory.add_memory(user_id="bob", assistant_id="helper", user_input="b1", agent_response="")
    assert bob_page.seq == 1


def test_short_term_always_holds_the_last_n_pages(memory, alice_space, fake_llm):
    fake_llm.responder = nothing_extracted
    alice_space.stm_capacity = 3
    alice_space.save()
    add_turns(memory, CAT_TALK + COOKING_TALK)
    seqs = list(short_term_pages(alice_space).values_list("seq", flat=True))
    assert seqs == [4, 5, 6]
    assert Page.objects.filter(space=alice_space, tier=Page.Tier.MID).count() == 3


def test_the_paper_default_capacity_is_seven(alice_space):
    assert alice_space.stm_capacity == 7


@pytest.mark.parametrize(
    ("user_input", "agent_response", "message"),
    [
        ("", "", "empty"),
        ("   \n\t", "  ", "empty"),
        ("x" * 8001, "ok", "limit is 8000"),
        ("ok", "y" * 8001, "limit is 8000"),
        ("broken \ud800 surrogate", "ok", "not valid unicode"),
        ("nul \x00 byte", "ok", "NUL"),
        (b"bytes".decode() and 42, "ok", "must be text"),
    ],
)
def test_bad_turns_get_a_clear_error_and_change_nothing(memory, alice_space, user_input, agent_response, message):
    with pytest.raises(InvalidTurn, match=message):
        memory.add_memory(user_id="alice", assistant_id="helper", user_input=user_input, agent_response=agent_response)
    alice_space.refresh_from_db()
    assert alice_space.last_seq == 0
    assert not Page.objects.exists()


@pytest.mark.parametrize("meta", [{"note": "a\x00b"}, {"k\x00": 1}, {"deep": [[{"x": ["\x00"]}]]}])
def test_a_nul_anywhere_in_meta_is_refused_on_every_database(memory, alice_space, meta):
    # PostgreSQL's jsonb cannot hold U+0000: the API answered 500 for such a meta (found by schemathesis).
    with pytest.raises(InvalidTurn, match="NUL"):
        memory.add_memory(user_id="alice", assistant_id="helper", user_input="hi", agent_response="", meta=meta)
    assert not Page.objects.exists()


def test_a_naive_timestamp_is_refused(memory, alice_space):
    with pytest.raises(InvalidTurn, match="timezone"):
        memory.add_memory(
            user_id="alice",
            assistant_id="helper",
            user_input="hi",
            agent_response="",
            timestamp=timezone.now().replace(tzinfo=None),
        )
    assert not Page.objects.exists()


def test_html_is_stored_exactly_as_typed(memory, alice_space):
    html = '<script>alert("x")</script> & <b>bold</b>'
    stored = memory.add_memory(user_id="alice", assistant_id="helper", user_input=html, agent_response="")
    read = memory.get_turn(user_id="alice", assistant_id="helper", page_id=stored.id)
    assert stored.user_input == read.user_input == Page.objects.get(pk=stored.id).user_input == html


def test_a_turn_at_the_size_limit_is_accepted(memory, alice_space, settings):
    page = memory.add_memory(user_id="alice", assistant_id="helper", user_input="é" * 8000, agent_response="")
    assert len(page.user_input) == 8000


def test_an_unknown_user_or_assistant_is_an_error_and_creates_nothing(memory):
    with pytest.raises(UnknownUser, match="zoe"):
        memory.add_memory(user_id="zoe", assistant_id="helper", user_input="hi", agent_response="")
    with pytest.raises(UnknownAssistant, match="nobody"):
        memory.add_memory(user_id="alice", assistant_id="nobody", user_input="hi", agent_response="")
    assert not MemorySpace.objects.exists()
    assert not Page.objects.exists()


def test_ids_with_odd_characters_are_refused(memory):
    with pytest.raises(MemoryInputError, match="not valid"):
        memory.create_user("alice smith<script>")
