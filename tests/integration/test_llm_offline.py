"""The bundled SmolLM2-135M, for real. Each test costs a few seconds; run them with -m offline_llm."""

from __future__ import annotations

import jsonschema
import pytest

from memory_engine.engine.prompts import (
    EXTRACTION_MAX_TOKENS,
    EXTRACTION_SCHEMA,
    EXTRACTION_SCHEMA_NAME,
    extraction_messages,
    extraction_schema,
)
from memory_engine.errors import ReplyStopped
from memory_engine.llm import get_llm
from memory_engine.llm.offline import OfflineLLM

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


def test_its_answer_under_a_schema_is_schema_valid(offline_llm):
    """The product no longer asks the bundled model to promote (it only chose among the person's own
    statements, slowly: long_term.extraction_from_words does that), but the provider's structured call,
    which a GGUF of a capable model could serve, still decodes under the schema's grammar."""
    before = offline_llm.usage()

    value, completion = offline_llm.structured(
        extraction_messages(PAGES),
        schema=extraction_schema(PAGES),
        schema_name=EXTRACTION_SCHEMA_NAME,
        max_tokens=EXTRACTION_MAX_TOKENS,
    )

    jsonschema.validate(value, EXTRACTION_SCHEMA)
    jsonschema.validate(value, extraction_schema(PAGES))
    assert completion.completion_tokens > 0
    assert (offline_llm.usage() - before).calls >= 1


def test_it_answers_a_chat_message(offline_llm):
    completion = offline_llm.chat(
        [{"role": "user", "content": "Say hello to Priya in one short sentence."}], max_tokens=40
    )

    assert completion.text.strip()
    assert completion.prompt_tokens > 0


def test_an_answer_stopped_while_written_still_counts_the_prompt_it_read(offline_llm):
    """A streamed answer stopped early (the page's Stop, the guard) gets no usage from llama.cpp; the
    prompt it read is still counted, so a reply's record does not say "the model read 0 tokens"."""
    before = offline_llm.usage()

    with pytest.raises(ReplyStopped):
        offline_llm.chat(
            [{"role": "user", "content": "Tell me a long story about a lighthouse keeper and her cat."}],
            max_tokens=80,
            on_text=lambda text: len(text) > 10,
        )

    spent = offline_llm.usage() - before
    assert spent.calls == 1
    assert spent.prompt_tokens > 10
    assert spent.completion_tokens > 0


@pytest.mark.django_db
def test_a_conversation_through_the_api_gets_short_distinct_replies_and_the_fact_back(offline_llm, settings):
    """With no key, as a user meets it: the bundled model answers through the REST API, each reply short
    and distinct (unguarded, every reply ran to the 512-token cap in a loop), and the dog's name comes
    back."""
    from memory_engine.interfaces.memoryos import MemoryOS
    from memory_engine.llm.degeneration import loop_problem
    from tests.api_helpers import SPACE, client_for

    MemoryOS().create_user("sam")
    api = client_for("sam")
    replies = []
    for said in (
        "Hi! I'm Sam, I work as a nurse in Lyon.",
        "My dog is called Pixel.",
        "What's a good breakfast before a run?",
        "What is my dog's name?",
    ):
        answer = api.post(SPACE.format(user="sam") + "chat/", {"query": said}, format="json")
        assert answer.status_code == 200, answer.data
        text = answer.data["response"]
        assert answer.data["usage"]["completion_tokens"] < settings.MEMORYOS["CHAT_MAX_TOKENS"], text
        assert not answer.data["reply_withheld"], text
        assert loop_problem(text) is None, text
        assert "I'm Sam" not in text and "I am Sam" not in text
        replies.append(text)
    assert len(set(replies)) == len(replies)
    assert "Pixel" in replies[-1], replies
