"""One validation layer (memory_engine/inputs.py): the same bad input gets the same refusal through the
REST API, the MCP server and the Python class, and nothing is stored."""

import asyncio

import pytest

from memory_engine import inputs
from memory_engine.errors import InvalidParameter, MemoryInputError
from memory_engine.models import LongTermEntry, Page
from memory_engine.services import curation
from tests.api_helpers import SPACE, client_for
from tests.integration.test_mcp import stdio_session

pytestmark = pytest.mark.django_db(transaction=True)

OK_TURN = {"user_input": "I like tea.", "agent_response": "Noted.", "timestamp": None, "meta": None}
DEEP = {"a": 1}
for _ in range(25):
    DEEP = {"next": DEEP}

# (what is wrong, the turn's fields that differ from OK_TURN, what the refusal says)
BAD_TURNS = [
    ("NUL in the text", {"user_input": "tea\x00time"}, "user_input contains a NUL character"),
    ("over the length limit", {"agent_response": "x" * 8001}, "agent_response is 8001 characters long"),
    ("empty", {"user_input": " ", "agent_response": ""}, "the turn is empty"),
    ("a timestamp without a timezone", {"timestamp": "2026-11-20T10:00:00"}, "timestamp must carry a timezone"),
    ("a timestamp that is not one", {"timestamp": "soon"}, "is not an ISO 8601 date and time"),
    # at the calendar's edges: the year 10000 and the year 0 in UTC
    ("a timestamp past the calendar", {"timestamp": "9999-12-31T23:59:59-14:00"}, "between the years 1900 and 9000"),
    ("a timestamp before it", {"timestamp": "0001-01-01T00:00:00+14:00"}, "between the years 1900 and 9000"),
    ("meta over its size limit", {"meta": {"blob": "x" * 20_000}}, "the limit is 16384"),
    ("meta holding a NUL", {"meta": {"k": ["a\x00"]}}, "meta contains a NUL character"),
    ("meta nested too deep", {"meta": DEEP}, "meta is nested more than 20 deep"),
    ("meta that is not an object", {"meta": ["a", "list"]}, "meta must be a JSON object"),
]
SCHEMA_SHAPED = {"turn: meta that is not an object"}
BAD_QUERIES = [
    ("NUL in the query", "tea\x00", "query contains a NUL character"),
    ("over the length limit", "q" * 8001, "query is 8001 characters long"),
    ("empty", "   ", "the query is empty"),
]
BAD_VALUES = [
    ("NUL in the value", "nur\x00se", "value contains a NUL character"),
    ("over the length limit", "v" * 2001, "value is 2001 characters long; the limit is 2000"),
    ("empty", "  ", "the value is empty"),
]


@pytest.fixture
def alice_with_profile(memory, alice_space):
    entry = curation.profile_entry_add(space=alice_space, attribute="occupation", value="nurse", actor="test")
    return alice_space, entry


def stored(space) -> tuple:
    """Everything a refused request could have left behind."""
    entries = list(LongTermEntry.objects.filter(space=space).values_list("pk", "value", "status", "vector_version"))
    return Page.objects.filter(space=space).count(), entries


def rest_refusals(space, entry) -> dict:
    api = client_for("alice")
    base = SPACE.format(user="alice")
    said = {}
    for name, changes, _ in BAD_TURNS:
        body = {k: v for k, v in (OK_TURN | changes).items() if v is not None}
        answer = api.post(base + "turns/", body, format="json")
        said["turn: " + name] = (answer.status_code, str(answer.data))
    for name, query, _ in BAD_QUERIES:
        answer = api.post(base + "retrieve/", {"query": query}, format="json")
        said["query: " + name] = (answer.status_code, str(answer.data))
    for name, value, _ in BAD_VALUES:
        answer = api.patch(base + f"profile/{entry.pk}/", {"value": value}, format="json")
        said["value: " + name] = (answer.status_code, str(answer.data))
    return said


def library_refusals(memory, space, entry) -> dict:
    said = {}

    def attempt(key, call):
        try:
            call()
        except MemoryInputError as exc:
            said[key] = str(exc)
        else:
            said[key] = "accepted"

    for name, changes, _ in BAD_TURNS:
        turn = OK_TURN | changes
        attempt("turn: " + name, lambda t=turn: memory.add_memory(user_id="alice", assistant_id="helper", **t))
    for name, query, _ in BAD_QUERIES:
        attempt("query: " + name, lambda q=query: memory.retrieve(user_id="alice", assistant_id="helper", query=q))
    for name, value, _ in BAD_VALUES:
        attempt("value: " + name, lambda v=value: curation.entry_edit(entry=entry, value=v, actor="library"))
    return said


def mcp_refusals(server_env, entry) -> dict:
    async def work(session):
        said = {}
        for name, changes, _ in BAD_TURNS:
            turn = OK_TURN | changes
            arguments = {
                "user_input": turn["user_input"],
                "agent_response": turn["agent_response"],
                **({"timestamp": turn["timestamp"]} if turn["timestamp"] is not None else {}),
                **({"meta_data": turn["meta"]} if turn["meta"] is not None else {}),
            }
            call = await session.call_tool("add_memory", arguments)
            said["turn: " + name] = (call.is_error, call.content[0].text)
        for name, query, _ in BAD_QUERIES:
            call = await session.call_tool("retrieve_memory", {"query": query})
            said["query: " + name] = (call.is_error, call.content[0].text)
        for name, value, _ in BAD_VALUES:
            call = await session.call_tool("edit_profile_entry", {"entry_id": entry.pk, "value": value})
            said["value: " + name] = (call.is_error, call.content[0].text)
        return said

    return asyncio.run(stdio_session(server_env, "--user", "alice", "--assistant", "helper", work=work))


def expected() -> dict:
    return {
        **{"turn: " + name: says for name, _, says in BAD_TURNS},
        **{"query: " + name: says for name, _, says in BAD_QUERIES},
        **{"value: " + name: says for name, _, says in BAD_VALUES},
    }


def test_every_door_refuses_the_same_bad_input_the_same_way_and_stores_nothing(
    memory,
    alice_with_profile,
    server_env,  # noqa: F811
):
    space, entry = alice_with_profile
    before = stored(space)

    rest = rest_refusals(space, entry)
    library = library_refusals(memory, space, entry)
    mcp = mcp_refusals(server_env, entry)

    for case, says in expected().items():
        status, body = rest[case]
        assert status in (400, 413) and says in body, (case, status, body)
        too_large = "characters long" in says or "the limit is" in says
        assert (status == 413) == too_large, (case, status)
        assert says in library[case], (case, library[case])
        is_error, text = mcp[case]
        # The MCP tool's schema (meta_data: an object) refuses a wrong JSON type before the engine does.
        mcp_says = "meta_data\n  Input should be a valid dictionary" if case in SCHEMA_SHAPED else says
        assert is_error and mcp_says in text, (case, text)
    assert stored(space) == before


def test_a_deeply_nested_body_is_refused_not_a_server_error(memory, alice_space):
    api = client_for("alice")
    nested = '{"user_input": "hi", "agent_response": "ok", "meta": ' + "[" * 60_000 + "]" * 60_000 + "}"
    answer = api.post(SPACE.format(user="alice") + "turns/", nested, content_type="application/json")
    assert answer.status_code == 400, answer.content[:200]
    assert Page.objects.filter(space=alice_space).count() == 0


@pytest.mark.parametrize(
    ("values", "says"),
    [
        ({"stm_capacity": True}, "stm_capacity must be a whole number"),
        ({"mtm_capacity": 2.5}, "mtm_capacity must be a whole number"),
        ({"heat_alpha": float("nan")}, "heat_alpha must be a number"),
        ({"heat_beta": float("inf")}, "heat_beta must be a number"),
        ({"heat_gamma": "1"}, "heat_gamma must be a number"),
        ({"recency_mu_seconds": -5.0}, "recency_mu_seconds must be more than 0"),
        ({"eviction_policy": "random"}, "eviction_policy must be one of heat, lfu"),
        ({"last_seq": 0}, "last_seq is not a parameter"),
        ({"top_pages": 0}, "top_pages must be a whole number from 1 to 100"),
        ({"top_knowledge": 101}, "top_knowledge must be a whole number from 1 to 100"),
        ({"context_token_budget": 10**9}, "context_token_budget must be a whole number from 1 to 100,000"),
        ({"lexical_weight": 1.5}, "lexical_weight must be from 0 to 1"),
        ({"chain_weight": -0.1}, "chain_weight must be from 0 to 1"),
    ],
)
def test_space_parameters_are_refused_by_name_and_reason(values, says):
    with pytest.raises(InvalidParameter, match=says):
        inputs.space_parameters(values)


def test_space_parameters_come_back_as_stored():
    assert inputs.space_parameters({"heat_alpha": 2, "stm_capacity": 3, "recency_mu_seconds": 1e7}) == {
        "heat_alpha": 2.0,
        "stm_capacity": 3,
        "recency_mu_seconds": 1e7,
    }
