"""Promotion with the bundled SmolLM2 (a weak model): memories are the user's own sentences."""

import pytest

from memory_engine.engine import long_term
from memory_engine.engine.long_term import FactItem, profile_from_statements
from memory_engine.interfaces.memoryos import MemoryOS
from memory_engine.models import LongTermEntry, Page
from memory_engine.store.embeddings import get_embedder
from tests.memory_helpers import add_turns

Kind = LongTermEntry.Kind


def _facts(*sentences, kind=Kind.USER_KNOWLEDGE):
    return [FactItem(kind, "", sentence, page=None, supersedes=False) for sentence in sentences]


def test_a_users_statement_is_filed_under_the_attribute_it_clearly_speaks_of():
    facts = _facts("I have a dog named Rex who loves the park.", "I want to become a counselor one day.")
    items = profile_from_statements(facts, get_embedder().encode([f.fact for f in facts]))
    assert [(i.attribute, i.value) for i in items] == [
        ("pets", "I have a dog named Rex who loves the park."),
        ("goals", "I want to become a counselor one day."),
    ]


def test_a_statement_close_to_no_attribute_and_assistant_statements_are_left_out():
    facts = _facts("The bus was late again this morning.") + _facts(
        "I have a dog named Rex.", kind=Kind.ASSISTANT_KNOWLEDGE
    )
    assert profile_from_statements(facts, get_embedder().encode([f.fact for f in facts])) == []


@pytest.mark.offline_llm
def test_the_offline_model_promotes_only_sentences_said_in_the_conversation(db, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PROVIDER": "offline", "LLM_BASE_URL": ""}
    memory = MemoryOS()
    memory.create_user("alice")
    memory.create_assistant("helper")
    space = memory.space(user_id="alice", assistant_id="helper")
    space.stm_capacity = 1
    space.heat_threshold = 3.5
    space.save()
    turns = [
        ("I have a dog named Rex and he loves the beach.", "Rex sounds like a happy dog."),
        ("I work as a nurse at the city hospital.", "Nursing is demanding work; I admire it."),
        ("What's the capital of Australia?", "The capital of Australia is Canberra."),
        ("ok", "ok"),
    ]
    add_turns(memory, turns)
    assert not Page.objects.filter(tier=Page.Tier.MID, analyzed=False).exists()
    user_said = [p.user_input for p in Page.objects.all()]
    entries = list(LongTermEntry.objects.filter(space=space).exclude(kind=Kind.PROFILE))
    assert entries, "the model stored nothing"
    for entry in entries:
        page = entry.source_pages.get()
        text = page.user_input if entry.kind == Kind.USER_KNOWLEDGE else page.agent_response
        assert entry.value in text  # word for word, from the right speaker
    for attribute, value in long_term.user_profile(space).items():
        for part in value.split("; "):
            assert any(part in text for text in user_said), (attribute, part)
