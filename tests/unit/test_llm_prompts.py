"""The extraction prompt and schemas, without any model."""

from __future__ import annotations

import jsonschema
import pytest

from memory_engine.engine.prompts import (
    EXTRACTION_SCHEMA,
    MAX_ITEMS,
    extraction_messages,
    extraction_schema,
)
from memory_engine.language.profile_attributes import PROFILE_ATTRIBUTES

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
    [EXTRACTION_SCHEMA, extraction_schema(PAGES)],
    ids=["contract", "narrowed"],
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
