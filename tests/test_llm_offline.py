"""The bundled SmolLM2-135M, for real. Each test costs a few seconds; run them with -m offline_llm."""

from __future__ import annotations

import jsonschema
import pytest

from memory_engine.llm import get_llm
from memory_engine.llm.offline import OfflineLLM
from memory_engine.llm.prompts import (
    EXTRACTION_MAX_TOKENS,
    EXTRACTION_SCHEMA,
    EXTRACTION_SCHEMA_NAME,
    extraction_messages,
    extraction_schema,
)

pytestmark = pytest.mark.offline_llm

PAGES = [
    (1, "Hi! I'm Priya, I work as a nurse at a hospital in Berlin.", "Nice to meet you, Priya! How can I help?"),
    (2, "What's the capital of Australia?", "The capital of Australia is Canberra."),
    (3, "My dog Rex pulls on the leash.", "I'll suggest a few training exercises for Rex."),
]


@pytest.fixture
def offline_llm(settings) -> OfflineLLM:
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PROVIDER": "offline", "LLM_BASE_URL": ""}
    llm = get_llm()
    assert isinstance(llm, OfflineLLM)
    return llm


def test_it_extracts_schema_valid_grounded_memories(offline_llm):
    before = offline_llm.usage()

    value, completion = offline_llm.structured(
        extraction_messages(PAGES),
        schema=extraction_schema(PAGES, verbatim=offline_llm.weak),
        schema_name=EXTRACTION_SCHEMA_NAME,
        max_tokens=EXTRACTION_MAX_TOKENS,
    )

    jsonschema.validate(value, EXTRACTION_SCHEMA)
    user_turns = {number: user for number, user, _ in PAGES}
    assistant_turns = {number: answer for number, _, answer in PAGES}
    assert all(fact["fact"] in user_turns[fact["page"]] for fact in value["user_facts"])
    assert all(fact["fact"] in assistant_turns[fact["page"]] for fact in value["assistant_knowledge"])
    assert value["profile"] == []  # a weak model is not asked for a profile
    # Page 2 holds no first-person statement: nothing may cite it.
    assert all(item["page"] != 2 for item in value["user_facts"] + value["assistant_knowledge"])
    assert completion.completion_tokens > 0
    assert (offline_llm.usage() - before).calls >= 1


def test_it_answers_a_chat_message(offline_llm):
    completion = offline_llm.chat(
        [{"role": "user", "content": "Say hello to Priya in one short sentence."}], max_tokens=40
    )

    assert completion.text.strip()
    assert completion.prompt_tokens > 0
