"""Property-based run of the MCP tools against their own input schemas, as tests/integration/test_api_schema.py runs
the REST API: generated arguments for every tool, into alice's memory, must be answered or refused with
a clear error (ToolError), never crash (the SDK's UnexpectedToolError, MCP's server error). Bounded: a
fixed number of examples per tool, no deadline per example.

The server is the stdio one, called in this process (its tools, validation and services are the same as
over HTTP); the arguments are drawn from each tool's published JSON schema, with the ids that exist in
the memory mixed in so that edits and deletes reach real entries."""

import itertools

import pytest
from asgiref.sync import async_to_sync
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError

from memory_engine.interfaces.mcp_server import build_server
from memory_engine.models import LongTermEntry, Page
from memory_engine.services import curation
from tests.memory_helpers import CAT_TALK, add_turns

pytestmark = pytest.mark.django_db(transaction=True)

EXAMPLES_PER_TOOL = 40
SERVER = build_server(user_id="alice", assistant_id="helper")
TOOLS = {tool.name: tool.input_schema for tool in async_to_sync(SERVER.list_tools)()}

# Text as clients send it, and as an attacker might: any unicode (lone surrogates included), NUL,
# the texts the tools expect, and long runs.
TEXT = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", " ", "\x00", "a\x00b", "\ud800", "Milo", "all", "deleted", "user_knowledge", "2026-11-23"]),
    st.builds(lambda ch, n: ch * n, st.sampled_from("x\u00e9\U0001f600"), st.integers(1000, 20_000)),
)
JSON_LEAF = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), TEXT)
JSON = st.recursive(JSON_LEAF, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4))


def value_for(name: str, schema: dict, entry_ids: list[int]) -> st.SearchStrategy:
    """Values a client could send for one parameter, from its JSON schema."""
    if "anyOf" in schema:
        return st.one_of([value_for(name, option, entry_ids) for option in schema["anyOf"]])
    kind = schema.get("type")
    if kind == "string":
        return TEXT
    if kind == "integer":
        return st.one_of(st.sampled_from(entry_ids), st.integers(-(2**63), 2**63))
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "object":
        return st.dictionaries(TEXT, JSON, max_size=6)
    return JSON


def arguments_for(schema: dict, entry_ids: list[int]) -> st.SearchStrategy:
    required = set(schema.get("required", []))
    fields = {}
    for name, prop in schema["properties"].items():
        if name in WHO:  # mostly the server's own user and assistant, so that most calls reach the memory
            fields[name] = st.one_of(*(st.just(v) for v in WHO[name]), TEXT)
            continue
        value = value_for(name, prop, entry_ids)
        fields[name] = value if name in required else st.one_of(st.just(OMITTED), value)
    return st.fixed_dictionaries(fields).map(lambda args: {k: v for k, v in args.items() if v is not OMITTED})


OMITTED = object()
WHO = {"user_id": (OMITTED, OMITTED, None, "alice", "bob"), "assistant_id": (OMITTED, OMITTED, None, "helper")}


@pytest.fixture
def alice_entries(memory, alice_space):
    add_turns(memory, CAT_TALK)
    made = [
        curation.profile_entry_add(space=alice_space, attribute="occupation", value="nurse", actor="test"),
        curation.knowledge_entry_add(
            space=alice_space, kind="user_knowledge", topic="pets", fact="Alice has a cat named Milo", actor="test"
        ),
    ]
    return [entry.pk for entry in made]


@pytest.mark.parametrize("tool", sorted(TOOLS))
def test_no_generated_call_crashes_a_tool(alice_entries, bob_space, tool):
    bobs_entry = curation.profile_entry_add(space=bob_space, attribute="hobby", value="chess", actor="test")
    entry_ids = [*alice_entries, bobs_entry.pk]
    counter = itertools.count()

    @settings(
        max_examples=EXAMPLES_PER_TOOL,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
    )
    @given(arguments=arguments_for(TOOLS[tool], entry_ids))
    def call(arguments):
        next(counter)
        try:
            async_to_sync(SERVER.call_tool)(tool, arguments)
        except UnexpectedToolError as crash:
            raise AssertionError(f"{tool}({arguments!r:.300}) crashed: {crash.__cause__!r}") from crash
        except ToolError:
            pass  # refused with a message the client can read

    call()
    assert next(counter) >= EXAMPLES_PER_TOOL // 2  # the run really made calls
    # Whatever was sent, bob's memory is as it was: alice's server never reaches it.
    bobs_entry.refresh_from_db()
    assert (bobs_entry.value, bobs_entry.status) == ("chess", LongTermEntry.Status.ACTIVE)
    assert not Page.objects.filter(space=bob_space).exists()
