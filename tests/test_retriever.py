"""Retrieval across every tier: hybrid ranking, token budget, scores, provenance, heat."""

import pytest

from memory_engine.models import HeatEvent, MidTermSession
from memory_engine.retriever import fuse
from tests.memory_helpers import CAT_TALK, COOKING_TALK, add_turns, days_ago, extraction, nothing_extracted

TRAVEL_TALK = [
    ("I'm flying to Lisbon in June for a conference.", "Lisbon in June is lovely; try the pastel de nata."),
    ("My hotel is near the Alfama district.", "Alfama has great views and fado bars."),
]


@pytest.fixture
def filled(memory, alice_space, fake_llm):
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
    add_turns(memory, CAT_TALK, start=days_ago(9))
    add_turns(memory, TRAVEL_TALK, start=days_ago(6))
    add_turns(memory, COOKING_TALK, start=days_ago(1))
    return alice_space


def test_one_call_returns_every_tier_with_scores_and_provenance(memory, filled):
    result = memory.retrieve(user_id="alice", assistant_id="helper", query="Which district is my hotel near?")
    assert [i.text.split("\n")[0] for i in result.short_term] == [
        "User: I want the curry spicy, with lots of chili.",
        "User: Should I serve the curry with rice or naan?",
    ]
    assert "Alfama" in result.pages[0].text
    top = result.pages[0]
    assert {"fused", "dense", "bm25"} <= set(top.scores)
    assert top.provenance["session_id"] and top.provenance["seq"] and top.provenance["timestamp"]
    assert result.sessions and "Alfama" in result.sessions[0].text
    assert [i.text for i in result.profile] == ["occupation: nurse"]
    assert result.user_knowledge[0].provenance["source_page_ids"]
    assert result.tokens_used <= result.token_budget


def test_lexical_matching_finds_a_rare_name_dense_similarity_ranks_low(memory, filled):
    result = memory.retrieve(user_id="alice", assistant_id="helper", query="pastel de nata")
    assert "pastel de nata" in result.pages[0].text
    assert result.pages[0].scores["bm25"] > 0


def test_the_context_is_capped_by_the_token_budget(memory, filled):
    full = memory.retrieve(user_id="alice", assistant_id="helper", query="cat", count_hits=False)
    small = memory.retrieve(user_id="alice", assistant_id="helper", query="cat", token_budget=60, count_hits=False)
    assert small.tokens_used <= 60
    assert len(small.items()) < len(full.items())
    assert small.dropped > 0
    assert sum(i.tokens for i in small.items()) == small.tokens_used


def test_hits_make_the_sessions_used_hotter_and_are_recorded(memory, filled):
    result = memory.retrieve(user_id="alice", assistant_id="helper", query="Lisbon conference hotel")
    used = {i.provenance["session_id"] for i in result.pages}
    for session in MidTermSession.objects.filter(pk__in=used):
        assert session.n_visit == 1 and session.total_visits == 1
        assert HeatEvent.objects.filter(session=session, cause=HeatEvent.Cause.RETRIEVED).count() == 1


def test_a_read_only_retrieval_changes_no_heat(memory, filled):
    before = list(MidTermSession.objects.values_list("n_visit", "heat"))
    events = HeatEvent.objects.count()
    memory.retrieve(user_id="alice", assistant_id="helper", query="Lisbon", count_hits=False)
    assert list(MidTermSession.objects.values_list("n_visit", "heat")) == before
    assert HeatEvent.objects.count() == events


def test_one_user_never_retrieves_another_users_memory(memory, filled, bob_space):
    result = memory.retrieve(user_id="bob", assistant_id="helper", query="Lisbon hotel cat Milo nurse curry")
    assert result.items() == []


def test_reciprocal_rank_fusion_rewards_agreement():
    fused = fuse([1, 2, 3], [3, 1, 4])
    assert max(fused, key=fused.get) == 1
    assert fused[3] > fused[2] > 0 and fused[4] > 0


def test_an_empty_or_broken_query_is_an_error(memory, filled):
    from memory_engine.errors import InvalidTurn

    with pytest.raises(InvalidTurn):
        memory.retrieve(user_id="alice", assistant_id="helper", query="  ")
    with pytest.raises(InvalidTurn):
        memory.retrieve(user_id="alice", assistant_id="helper", query="bad \udfff")
