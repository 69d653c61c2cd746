"""Prompts and output schemas for the engine's LLM calls.

Extraction runs when a hot mid-term session is promoted to long-term memory: one call reads the
session's unanalysed pages and returns profile entries, user facts and assistant knowledge, each
citing the page it came from. `topic` gives each fact a short key the engine uses to spot a newer
fact contradicting an older one.

Every string and list in the schemas is bounded, because a small model decoding under a grammar
otherwise loops until max_tokens. `EXTRACTION_SCHEMA` is the contract every answer is validated
against; `extraction_schema(pages)` narrows it for one call (only the pages given), and anything valid
under the narrowed schema is valid under the contract. A weak model is not asked at all: its promotion
keeps the person's own statements (long_term.extraction_from_words).
"""

from __future__ import annotations

import json

from memory_engine.language.profile_attributes import PROFILE_ATTRIBUTES

Page = tuple[int, str, str]  # (page_number, user_input, agent_response)

EXTRACTION_SCHEMA_NAME = "memory_extraction"

MAX_ITEMS = 8
MAX_VALUE_CHARS = 120
MAX_FACT_CHARS = 200
MAX_TOPIC_CHARS = 40
EXTRACTION_MAX_TOKENS = 600  # 3 lists of a few short items fit; a runaway answer stops here


def _text(max_length: int) -> dict:
    return {"type": "string", "minLength": 1, "maxLength": max_length}


def _object(properties: dict) -> dict:
    # OpenAI strict mode requires every property to be required and no others allowed.
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }


def _array(items: dict, max_items: int = MAX_ITEMS) -> dict:
    return {"type": "array", "items": items, "maxItems": max_items}


def _fact_item(page: dict, fact: dict) -> dict:
    # Generation follows property order under a grammar: the page first, so the fact that follows
    # is copied from a page the model has just committed to; the topic last, summarising the fact.
    return _object({"page": page, "fact": fact, "topic": _text(MAX_TOPIC_CHARS)})


def _profile_item(page: dict) -> dict:
    return _object(
        {
            "page": page,
            "attribute": {"type": "string", "enum": list(PROFILE_ATTRIBUTES)},
            "value": _text(MAX_VALUE_CHARS),
        }
    )


_ANY_PAGE = {"type": "integer", "minimum": 0}

EXTRACTION_SCHEMA: dict = _object(
    {
        # Facts before the profile: the profile is easier to get right once the facts are written.
        "user_facts": _array(_fact_item(_ANY_PAGE, _text(MAX_FACT_CHARS))),
        "assistant_knowledge": _array(_fact_item(_ANY_PAGE, _text(MAX_FACT_CHARS))),
        "profile": _array(_profile_item(_ANY_PAGE)),
    }
)


def extraction_schema(pages: list[Page]) -> dict:
    """Return EXTRACTION_SCHEMA narrowed to one call over `pages`. Pure; safe to repeat.

    `page` may only name one of the given pages, and each list holds at most one item per page, never
    more than MAX_ITEMS, which stops a small model from inventing pages or looping.
    """
    if not pages:
        raise ValueError("extraction needs at least one page")
    numbers = [number for number, _, _ in pages]
    limit = min(MAX_ITEMS, len(pages))
    page = {"type": "integer", "enum": numbers}
    return _object(
        {
            "user_facts": _array(_fact_item(page, _text(MAX_FACT_CHARS)), max_items=limit),
            "assistant_knowledge": _array(_fact_item(page, _text(MAX_FACT_CHARS)), max_items=limit),
            "profile": _array(_profile_item(page), max_items=limit),
        }
    )


# --- the extraction prompt ----------------------------------------------------------------------------

EXTRACTION_SYSTEM = (
    "You save memories from a conversation as JSON. Copy words from the pages; never invent anything.\n"
    "user_facts: what the USER says about their own life.\n"
    "assistant_knowledge: what the ASSISTANT says about itself or promises to do.\n"
    "profile: the USER's {attributes}, only when the USER says it.\n"
    "topic: 2 to 4 words naming what a fact is about. page: the page the words are on.\n"
    "Questions and greetings are not memories. Leave a list empty when nothing fits."
)

# A worked example as earlier turns of the chat: a small model imitates a previous answer far better
# than it follows a description. (A second example with all lists empty made SmolLM2 answer empty
# lists even where the assistant plainly described itself; empty lists come from the schema instead.)
_EXAMPLE_PAGES: list[Page] = [
    (1, "Hi, I'm Tom. I just adopted a cat called Miso.", "Congratulations! I will remember Miso's name."),
    (2, "What time is it in Tokyo?", "I cannot check the time."),
]
_EXAMPLE_ANSWER = {
    "user_facts": [{"page": 1, "fact": "I just adopted a cat called Miso.", "topic": "user's cat"}],
    "assistant_knowledge": [
        {"page": 1, "fact": "I will remember Miso's name.", "topic": "remembering cat name"},
        {"page": 2, "fact": "I cannot check the time.", "topic": "checking the time"},
    ],
    "profile": [
        {"page": 1, "attribute": "name", "value": "Tom"},
        {"page": 1, "attribute": "pets", "value": "a cat called Miso"},
    ],
}


def format_pages(pages: list[Page]) -> str:
    """Render pages as the numbered USER/ASSISTANT transcript the extraction prompt uses. Pure."""
    return "\n".join(
        f"Page {number}\nUSER: {user_input.strip()}\nASSISTANT: {agent_response.strip()}"
        for number, user_input, agent_response in pages
    )


def extraction_messages(pages: list[Page]) -> list[dict]:
    """Build the chat messages for one extraction call over `pages`. Pure; safe to repeat.

    Send them with `extraction_schema(pages)` (or EXTRACTION_SCHEMA) under the
    name EXTRACTION_SCHEMA_NAME, and max_tokens=EXTRACTION_MAX_TOKENS.
    """
    if not pages:
        raise ValueError("extraction needs at least one page")
    return [
        {"role": "system", "content": EXTRACTION_SYSTEM.format(attributes=", ".join(PROFILE_ATTRIBUTES))},
        {"role": "user", "content": format_pages(_EXAMPLE_PAGES)},
        # Compact JSON in the example makes the model answer compactly: fewer tokens, faster calls.
        {"role": "assistant", "content": json.dumps(_EXAMPLE_ANSWER)},
        {"role": "user", "content": format_pages(pages)},
    ]
