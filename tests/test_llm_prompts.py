"""The extraction prompt and schemas, without any model."""

from __future__ import annotations

import jsonschema
import pytest

from memory_engine.engine.profile_attributes import PROFILE_ATTRIBUTES
from memory_engine.engine.prompts import (
    EXTRACTION_SCHEMA,
    MAX_ITEMS,
    extraction_messages,
    extraction_schema,
    first_person_statements,
)

PAGES = [
    (4, "I moved to Seattle last month. Do you like rain?", "I can't feel rain, but I'll keep you company."),
    (5, "What is 2 + 2?", "It is 4."),
]


def walk(schema):
    yield schema
    for value in schema.values():
        children = value if isinstance(value, list) else [value]
        for child in children:
            if isinstance(child, dict):
                yield from walk(child)


@pytest.mark.parametrize(
    "schema",
    [EXTRACTION_SCHEMA, extraction_schema(PAGES), extraction_schema(PAGES, verbatim=True)],
    ids=["contract", "narrowed", "verbatim"],
)
def test_every_schema_is_bounded_and_strict(schema):
    jsonschema.Draft202012Validator.check_schema(schema)
    for node in walk(schema):
        if node.get("type") == "object":
            assert node["additionalProperties"] is False
            assert node["required"] == list(node["properties"])
        if node.get("type") == "array":
            assert node["maxItems"] <= MAX_ITEMS
        if node.get("type") == "string":
            assert "maxLength" in node or "enum" in node


def test_the_contract_has_the_three_lists_and_the_profile_attributes():
    assert set(EXTRACTION_SCHEMA["required"]) == {"profile", "user_facts", "assistant_knowledge"}
    attribute = EXTRACTION_SCHEMA["properties"]["profile"]["items"]["properties"]["attribute"]
    assert attribute["enum"] == list(PROFILE_ATTRIBUTES)


def test_first_person_statements_keep_statements_about_the_speaker():
    text = "Hey Mel! Good to see you! I'm swamped with the kids & work. What's up with you? Anything new?"

    assert first_person_statements(text) == ["I'm swamped with the kids & work."]


def test_the_verbatim_schema_accepts_only_sentences_from_the_cited_page():
    schema = extraction_schema(PAGES, verbatim=True)
    good = {
        "user_facts": [{"page": 4, "fact": "I moved to Seattle last month.", "topic": "user's city"}],
        "assistant_knowledge": [{"page": 4, "fact": "I can't feel rain, but I'll keep you company.", "topic": "rain"}],
        "profile": [],
    }
    jsonschema.validate(good, schema)
    jsonschema.validate(good, EXTRACTION_SCHEMA)  # narrowed answers always satisfy the contract

    for bad_fact in [
        {"page": 4, "fact": "I moved to Portland last month.", "topic": "city"},  # not in the page
        {"page": 5, "fact": "I moved to Seattle last month.", "topic": "city"},  # wrong page
        {"page": 4, "fact": "Do you like rain?", "topic": "rain"},  # a question
    ]:
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate({**good, "user_facts": [bad_fact]}, schema)


def test_the_verbatim_schema_forces_empty_lists_when_nothing_is_stated():
    pages = [(1, "What's the capital of Australia?", "The capital of Australia is Canberra.")]
    schema = extraction_schema(pages, verbatim=True)

    for name in ("user_facts", "assistant_knowledge", "profile"):
        assert schema["properties"][name]["maxItems"] == 0


def test_the_narrowed_schema_rejects_a_page_that_was_not_given():
    answer = {
        "user_facts": [{"page": 9, "fact": "I moved.", "topic": "move"}],
        "assistant_knowledge": [],
        "profile": [],
    }

    jsonschema.validate(answer, EXTRACTION_SCHEMA)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(answer, extraction_schema(PAGES))


def test_the_messages_end_with_the_numbered_pages():
    messages = extraction_messages(PAGES)

    assert messages[0]["role"] == "system"
    assert messages[-1] == {
        "role": "user",
        "content": "Page 4\nUSER: I moved to Seattle last month. Do you like rain?\n"
        "ASSISTANT: I can't feel rain, but I'll keep you company.\n"
        "Page 5\nUSER: What is 2 + 2?\nASSISTANT: It is 4.",
    }
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user"]


def test_an_empty_page_list_is_refused():
    with pytest.raises(ValueError):
        extraction_messages([])
    with pytest.raises(ValueError):
        extraction_schema([])
