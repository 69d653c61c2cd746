"""The MCP server in its own process, driven by the SDK's real client over stdio and streamable HTTP.

The server shares the test database, consolidates inline and calls the scripted OpenAI-compatible
server over HTTP."""

import asyncio
import json
import sys

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from memory_engine.documents import SECTIONS, EntryCard, ErasedDoc
from memory_engine.errors import UnknownEntry
from memory_engine.models import EntryVersion, LongTermEntry, MemoryUser, Page
from memory_engine.services.tokens import token_create
from tests.api_helpers import SPACE, client_for
from tests.memory_helpers import CAT_TALK, add_turns, extraction, nothing_extracted
from tests.processes import ROOT, mcp_http_server

pytestmark = pytest.mark.django_db(transaction=True)

REFERENCE_TOOLS = {"add_memory", "retrieve_memory", "get_user_profile"}
CURATION_TOOLS = {
    "list_profile_entries",
    "list_knowledge",
    "edit_profile_entry",
    "edit_knowledge",
    "delete_profile_entry",
    "delete_knowledge",
    "erase_entry",
    "revert_entry",
    "entry_history",
    "export_memory",
}


@pytest.fixture
def alice_memory(memory, alice_space, fake_llm):
    alice_space.stm_capacity = 1
    alice_space.heat_threshold = 1.5
    alice_space.save()
    fake_llm.script(
        extraction(profile=[("occupation", "nurse", 1)], user_facts=[("pet", "The user has a cat named Milo", 1)])
    )
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK, user="alice")
    return alice_space


def result(call) -> object:
    """A tool result's value: its structured content, or the JSON in its text."""
    assert not call.is_error, call.content
    if call.structured_content is not None:
        value = call.structured_content
        return value.get("result", value) if set(value) == {"result"} else value
    return json.loads(call.content[0].text)


async def stdio_session(env: dict, *args: str, work):
    params = StdioServerParameters(
        command=sys.executable, args=["manage.py", "mcp_server", *args], env=env, cwd=str(ROOT)
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return await work(session)


def test_over_stdio_the_reference_tools_work_for_the_configured_user(alice_memory, server_env):
    async def work(session):
        tools = {tool.name for tool in (await session.list_tools()).tools}
        stored = result(
            await session.call_tool(
                "add_memory",
                {
                    "user_input": "I started learning the cello.",
                    "agent_response": "How exciting!",
                    "timestamp": "2026-11-20T10:00:00+00:00",
                    "meta_data": {"source": "mcp-test"},
                },
            )
        )
        found = result(await session.call_tool("retrieve_memory", {"query": "Milo the cat", "max_results": 3}))
        profile = result(await session.call_tool("get_user_profile", {"include_knowledge": True}))
        refused = await session.call_tool("get_user_profile", {"user_id": "bob"})
        empty = await session.call_tool("add_memory", {"user_input": " ", "agent_response": ""})
        assert empty.is_error and "empty" in empty.content[0].text
        bad_time = await session.call_tool(
            "add_memory", {"user_input": "a", "agent_response": "b", "timestamp": "soon"}
        )
        assert bad_time.is_error and "ISO 8601" in bad_time.content[0].text
        return tools, stored, found, profile, refused

    tools, stored, found, profile, refused = asyncio.run(
        stdio_session(server_env, "--user", "alice", "--assistant", "helper", work=work)
    )
    assert tools >= REFERENCE_TOOLS | CURATION_TOOLS
    page = Page.objects.get(pk=stored["page_id"])
    assert page.space.user.external_id == "alice" and page.meta == {"source": "mcp-test"}
    assert page.user_input == "I started learning the cello." and page.timestamp.day == 20
    assert any("Milo" in item["text"] for item in found["retrieved_user_knowledge"])
    assert len(found["retrieved_pages"]) <= 3
    assert profile["user_profile"] == {"occupation": "nurse"} and profile["user_knowledge"] == [
        "The user has a cat named Milo"
    ]
    assert refused.is_error and "alice" in refused.content[0].text


def test_over_stdio_curation_tools_edit_delete_and_explain_entries(alice_memory, server_env):
    profile_id = LongTermEntry.objects.get(kind="profile").pk
    fact_id = LongTermEntry.objects.get(kind="user_knowledge").pk

    async def work(session):
        listed = result(await session.call_tool("list_profile_entries", {}))
        edited = result(await session.call_tool("edit_profile_entry", {"entry_id": profile_id, "value": "surgeon"}))
        history = result(await session.call_tool("entry_history", {"entry_id": profile_id}))
        deleted = result(await session.call_tool("delete_knowledge", {"entry_id": fact_id}))
        knowledge = result(await session.call_tool("list_knowledge", {"status": "all"}))
        exported = result(await session.call_tool("export_memory", {}))
        missing = await session.call_tool("edit_knowledge", {"entry_id": 999999, "value": "x"})
        reverted = result(await session.call_tool("revert_entry", {"entry_id": fact_id}))
        erased = result(await session.call_tool("erase_entry", {"entry_id": fact_id}))
        return listed, edited, history, deleted, knowledge, exported, missing, reverted, erased

    listed, edited, history, deleted, knowledge, exported, missing, reverted, erased = asyncio.run(
        stdio_session(server_env, "--user", "alice", "--assistant", "helper", work=work)
    )
    assert [(e["key"], e["value"]) for e in listed] == [("occupation", "nurse")]
    assert edited["value"] == "surgeon"
    assert [(v["before"], v["after"]) for v in history["history"]] == [(None, "nurse"), ("nurse", "surgeon")]
    # The turn holds the edited value now; its words as said are kept, with the correction marked.
    source = history["source_pages"][0]
    assert source["said"]["user_input"] == CAT_TALK[0][0] and source["user_input"] == CAT_TALK[0][0].replace(
        "nurse", "surgeon"
    )
    assert [(m["kind"], m["entry_id"]) for m in source["marks"]] == [("corrected", profile_id)]
    assert edited["covers"] == {"statements": 1, "turns": [source["seq"]], "entries": []}
    assert deleted["id"] == fact_id and deleted["status"] == "deleted"  # the entry now, with what it covered
    assert [e["status"] for e in knowledge] == ["deleted"]
    assert exported["user"]["id"] == "alice" and exported["spaces"][0]["entries"]
    assert missing.is_error
    assert reverted["status"] == "active" and reverted["id"] == fact_id  # the delete undone
    # Erased: the fact, its history and the words it was drawn from are nowhere.
    assert erased["erased"] and erased["id"] == fact_id and not LongTermEntry.objects.filter(pk=fact_id).exists()
    first = Page.objects.get(space__user__external_id="alice", seq=1)
    assert "Milo" not in first.user_input and first.said is None  # the turn it was drawn from
    assert EntryVersion.objects.filter(entry_id=profile_id, cause="api", actor="mcp").exists()


@pytest.fixture
def http_server(server_env, tmp_path):
    """The server over streamable HTTP in its own process; yields its /mcp URL."""
    with mcp_http_server(server_env, tmp_path / "mcp-http.log") as url:
        yield url


async def http_session(url: str, secret: str | None, work):
    headers = {"Authorization": f"Bearer {secret}"} if secret else {}
    async with (
        create_mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (
            read,
            write,
            *_,
        ),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        return await work(session)


def test_over_http_the_token_decides_whose_memory_is_served(alice_memory, memory, http_server):
    _, alice_secret = token_create(memory_user=MemoryUser.objects.get(external_id="alice"))
    _, bob_secret = token_create(memory_user=MemoryUser.objects.get(external_id="bob"))

    async def as_alice(session):
        stored = result(
            await session.call_tool("add_memory", {"user_input": "I moved to Porto.", "agent_response": "Nice!"})
        )
        profile = result(await session.call_tool("get_user_profile", {}))
        refused = await session.call_tool("get_user_profile", {"user_id": "bob"})
        return stored, profile, refused

    async def as_bob(session):
        return await session.call_tool("list_profile_entries", {})

    stored, profile, refused = asyncio.run(http_session(http_server, alice_secret, as_alice))
    assert Page.objects.get(pk=stored["page_id"]).space.user.external_id == "alice"
    assert profile["user_profile"] == {"occupation": "nurse"}
    assert refused.is_error
    bobs = asyncio.run(http_session(http_server, bob_secret, as_bob))
    assert bobs.is_error and "no memory" in bobs.content[0].text  # bob has no space with helper yet


def test_over_http_a_request_without_a_valid_token_is_refused(http_server):
    import httpx2

    for headers in ({}, {"Authorization": "Bearer mos_wrong"}):
        answer = httpx2.post(
            http_server,
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}},
            headers={**headers, "Accept": "application/json, text/event-stream"},
        )
        assert answer.status_code == 401


def test_rest_and_mcp_give_the_same_document_for_the_same_entry(alice_memory, server_env):
    async def work(session):
        refused = await session.call_tool("list_knowledge", {"status": "gone"})
        assert refused.is_error
        return refused.content[0].text, [
            *result(await session.call_tool("list_profile_entries", {})),
            *result(await session.call_tool("list_knowledge", {"status": "all"})),
        ]

    refused, over_mcp = asyncio.run(stdio_session(server_env, "--user", "alice", "--assistant", "helper", work=work))
    assert {entry["kind"] for entry in over_mcp} == {"profile", "user_knowledge"}
    alice = client_for("alice")
    for entry in over_mcp:
        path = "profile" if entry["kind"] == "profile" else "knowledge"
        over_rest = alice.get(SPACE.format(user="alice") + f"{path}/{entry['id']}/")
        assert over_rest.status_code == 200
        assert json.loads(over_rest.content) == entry
    # A status neither knows is refused by both with the same words.
    bad = alice.get(SPACE.format(user="alice") + "knowledge/", {"status": "gone"})
    assert bad.status_code == 400 and refused.endswith(f": {bad.data['detail']}")


def test_rest_and_mcp_answer_a_forget_and_an_erase_with_the_same_document(alice_memory, server_env):
    """A delete (a forget) answers the entry as it is now, with what it covered, at both doors; an erase
    answers what it changed; each is the one model's document (documents.EntryCard, ErasedDoc)."""
    profile_id = LongTermEntry.objects.get(space=alice_memory, kind="profile").pk
    fact_id = LongTermEntry.objects.get(space=alice_memory, kind="user_knowledge").pk

    async def forget(session):
        return result(await session.call_tool("delete_knowledge", {"entry_id": fact_id}))

    async def erase(session):
        return result(await session.call_tool("erase_entry", {"entry_id": fact_id}))

    alice, space = client_for("alice"), SPACE.format(user="alice")
    forgot_over_mcp = asyncio.run(stdio_session(server_env, "--user", "alice", "--assistant", "helper", work=forget))
    forgot_over_rest = alice.delete(space + f"profile/{profile_id}/")
    assert forgot_over_rest.status_code == 200
    forgot_over_rest = json.loads(forgot_over_rest.content)
    for forgot, entry_id in ((forgot_over_mcp, fact_id), (forgot_over_rest, profile_id)):
        assert EntryCard.model_validate_json(json.dumps(forgot)).model_dump(mode="json") == forgot
        assert forgot["id"] == entry_id and forgot["status"] == "deleted"
        assert forgot["covers"]["statements"] >= 1  # what the person is told went with it
    assert set(forgot_over_mcp) == set(forgot_over_rest)
    # What MCP answered is what REST gives of the entry afterwards.
    assert json.loads(alice.get(space + f"knowledge/{fact_id}/").content) == forgot_over_mcp

    erased_over_mcp = asyncio.run(stdio_session(server_env, "--user", "alice", "--assistant", "helper", work=erase))
    erased_over_rest = alice.post(space + f"profile/{profile_id}/erase/", {}, format="json")
    assert erased_over_rest.status_code == 200
    erased_over_rest = json.loads(erased_over_rest.content)
    for erased, entry_id in ((erased_over_mcp, fact_id), (erased_over_rest, profile_id)):
        assert ErasedDoc.model_validate(erased).payload() == erased
        assert erased["id"] == entry_id and erased["erased"] is True and erased["turns_changed"] >= 1
    assert not LongTermEntry.objects.filter(pk__in=[profile_id, fact_id]).exists()


def test_rest_and_mcp_give_the_same_document_for_each_version_of_an_entry(alice_memory, server_env):
    profile_id = LongTermEntry.objects.get(space=alice_memory, kind="profile").pk

    async def work(session):
        await session.call_tool("edit_profile_entry", {"entry_id": profile_id, "value": "ward nurse"})
        return result(await session.call_tool("entry_history", {"entry_id": profile_id}))

    over_mcp = asyncio.run(stdio_session(server_env, "--user", "alice", "--assistant", "helper", work=work))
    over_rest = client_for("alice").get(SPACE.format(user="alice") + f"profile/{profile_id}/history/")
    assert over_rest.status_code == 200
    assert json.loads(over_rest.content)["results"] == over_mcp["history"]
    assert over_mcp["history"][-1]["changes"] == [["ins", "ward"], ["same", "nurse"]]


def test_the_python_class_answers_the_document_rest_and_mcp_give(alice_memory, server_env, memory):
    """An entry, its versions, a turn, a forget and an erase: what the class answers is the document REST and
    MCP give (documents.py), as a pydantic model."""
    profile_id = LongTermEntry.objects.get(space=alice_memory, kind="profile").pk
    fact_id = LongTermEntry.objects.get(space=alice_memory, kind="user_knowledge").pk
    alice, space, who = client_for("alice"), SPACE.format(user="alice"), {"user_id": "alice", "assistant_id": "helper"}

    def over_rest(path: str) -> object:
        answer = alice.get(space + path)
        assert answer.status_code == 200, answer.content
        return json.loads(answer.content)

    edited = memory.edit_entry(**who, entry_id=profile_id, value="ward nurse")
    assert isinstance(edited, EntryCard) and edited.value == "ward nurse"
    assert edited.payload() == over_rest(f"profile/{profile_id}/")
    assert memory.get_entry(**who, entry_id=profile_id) == edited
    history = memory.entry_history(**who, entry_id=profile_id)
    assert [version.payload() for version in history] == over_rest(f"profile/{profile_id}/history/")["results"]
    assert history[-1].changes == [["ins", "ward"], ["same", "nurse"]]
    [fact] = memory.get_knowledge(**who)
    forgot = memory.delete_entry(**who, entry_id=fact_id)
    assert fact.id == fact_id and forgot.status == "deleted" and forgot.covers.statements >= 1
    assert forgot.covers == memory.entry_coverage(**who, entry_id=fact_id)
    turns = [memory.get_turn(**who, page_id=page_id) for page_id in fact.source_page_ids]

    async def work(session):
        return (
            result(await session.call_tool("list_knowledge", {"status": "all"})),
            result(await session.call_tool("entry_history", {"entry_id": fact_id})),
        )

    listed, drawn = asyncio.run(stdio_session(server_env, "--user", "alice", "--assistant", "helper", work=work))
    assert listed == [forgot.payload()] and forgot.payload() == over_rest(f"knowledge/{fact_id}/")
    assert drawn["entry"] == forgot.payload()
    assert {page["id"]: page for page in drawn["source_pages"]} == {turn.id: turn.payload() for turn in turns}
    assert any(turn.marks for turn in turns)  # the forget's marks, in the class's document as in the others'
    stored = memory.add_memory(**who, user_input="I moved to Ghent.", agent_response="Nice city.")
    assert stored.payload() == over_rest(f"turns/{stored.id}/") and stored.seq == len(CAT_TALK) + 1
    erased = memory.erase_entry(**who, entry_id=fact_id)
    assert isinstance(erased, ErasedDoc) and (erased.id, erased.erased) == (fact_id, True) and erased.turns_changed >= 1
    with pytest.raises(UnknownEntry):
        memory.get_entry(**who, entry_id=fact_id)


def test_rest_and_mcp_give_the_same_document_for_each_item_a_query_finds(alice_memory, server_env):
    query = {"query": "What is my cat called?", "top_pages": 3, "top_knowledge": 3}
    over_rest = client_for("alice").post(
        SPACE.format(user="alice") + "retrieve/", {**query, "count_hits": False}, format="json"
    )
    assert over_rest.status_code == 200

    async def work(session):
        return result(await session.call_tool("retrieve_memory", {"query": query["query"], "max_results": 3}))

    over_mcp = asyncio.run(stdio_session(server_env, "--user", "alice", "--assistant", "helper", work=work))
    rest = json.loads(over_rest.content)
    by_key = {(item["kind"], item["id"]): item for name in SECTIONS for item in rest[name]}
    found = [*over_mcp["retrieved_pages"], *over_mcp["retrieved_user_knowledge"], *over_mcp["short_term_memory"]]
    assert {item["kind"] for item in found} >= {"page", "user_knowledge"}
    for item in found:
        assert by_key[item["kind"], item["id"]] == item
    assert over_mcp["retrieved_user_knowledge"] == rest["user_knowledge"]


def test_rest_and_mcp_give_the_same_document_for_each_turn_an_entry_was_drawn_from(alice_memory, server_env):
    knowledge_id = LongTermEntry.objects.get(space=alice_memory, kind="user_knowledge").pk

    async def work(session):
        await session.call_tool("delete_knowledge", {"entry_id": knowledge_id})
        return result(await session.call_tool("entry_history", {"entry_id": knowledge_id}))

    over_mcp = asyncio.run(stdio_session(server_env, "--user", "alice", "--assistant", "helper", work=work))
    assert over_mcp["source_pages"]
    alice = client_for("alice")
    for page in over_mcp["source_pages"]:
        over_rest = alice.get(SPACE.format(user="alice") + f"turns/{page['id']}/")
        assert over_rest.status_code == 200
        assert json.loads(over_rest.content) == page
    # The forget holds the statement out of its turn: both doors give the words as said and the mark.
    marked = [page for page in over_mcp["source_pages"] if page["marks"]]
    assert marked and all(page["said"] for page in marked)
    assert {mark["kind"] for page in marked for mark in page["marks"]} == {"forgotten"}


def test_a_turn_asking_to_forget_through_add_memory_forgets_it_and_revert_entry_undoes_it(alice_memory, server_env):
    # A client's own model answered the turn ("Sure"): the request in it is the person's, and the memory does it.
    async def work(session):
        stored = result(
            await session.call_tool(
                "add_memory", {"user_input": "Please forget my cat, I rehomed him.", "agent_response": "Sure."}
            )
        )
        after = result(await session.call_tool("get_user_profile", {"include_knowledge": True}))
        undone = [
            result(await session.call_tool("revert_entry", {"entry_id": f["entry"]["id"], "version_id": f["undo_to"]}))
            for f in stored["forgotten"]
        ]
        again = result(await session.call_tool("get_user_profile", {"include_knowledge": True}))
        return stored, after, undone, again

    stored, after, undone, again = asyncio.run(
        stdio_session(server_env, "--user", "alice", "--assistant", "helper", work=work)
    )
    assert stored["forgotten"] and any("Milo" in f["entry"]["value"] for f in stored["forgotten"])
    assert not any("Milo" in fact for fact in after["user_knowledge"])
    assert len(undone) == len(stored["forgotten"])
    assert "The user has a cat named Milo" in again["user_knowledge"]


def test_a_correction_told_through_add_memory_supersedes_what_it_replaces(alice_memory, server_env, fake_llm):
    # The client's own model answered; the memory's model (the scripted server) draws the corrected fact, and the
    # memory supersedes the one it replaces: the profile's knowledge says Mochi, not Milo, and a query's items
    # give the correction before the words it corrects.
    def drawn(request):
        said = json.dumps(request)
        if "not Milo" in said:
            return extraction(user_facts=[("pet", "The user's cat is called Mochi, not Milo", 1)])
        return extraction()

    fake_llm.responder = drawn
    correction = "Sorry, I got that wrong: my cat is called Mochi, not Milo."

    async def work(session):
        stored = result(await session.call_tool("add_memory", {"user_input": correction, "agent_response": "Noted!"}))
        for said in ("Mochi is asleep on my scrubs again.", "Anyway, time for my shift."):
            result(await session.call_tool("add_memory", {"user_input": said, "agent_response": "Ha!"}))
        profile = result(await session.call_tool("get_user_profile", {"include_knowledge": True}))
        found = result(await session.call_tool("retrieve_memory", {"query": "What is my cat called?"}))
        return stored, profile, found

    stored, profile, found = asyncio.run(
        stdio_session(server_env, "--user", "alice", "--assistant", "helper", work=work)
    )
    assert stored["forgotten"] == []  # a correction, not a request to forget
    assert profile["user_knowledge"] == ["The user's cat is called Mochi, not Milo"]
    old = LongTermEntry.objects.get(space=alice_memory, value="The user has a cat named Milo")
    assert old.status == LongTermEntry.Status.SUPERSEDED and "Mochi" in old.superseded_by.value
    pages = [item["text"] for item in found["retrieved_pages"]]
    assert "Mochi, not Milo" in pages[0] and any("cat named Milo" in text for text in pages[1:])


def test_with_the_bundled_model_a_correction_through_add_memory_supersedes_what_it_replaces(
    memory, alice_space, server_env
):
    # No key: consolidation keeps the person's own sentences, and a later one that names the value it sets aside
    # ("Hanabusa, not Sakuraya") supersedes the earlier.
    alice_space.stm_capacity, alice_space.heat_threshold = 1, 1.0
    alice_space.save()
    offline = {**server_env, "MEMORYOS_LLM_PROVIDER": "offline", "MEMORYOS_LLM_BASE_URL": ""}
    said = [
        "I booked Hotel Sakuraya in Kyoto for 3 nights.",
        "Sorry, my mistake: the hotel is Hotel Hanabusa, not Hotel Sakuraya.",
        "Now I need a packing list.",
        "And a phrase for thank you.",
    ]

    async def work(session):
        for text in said:
            result(await session.call_tool("add_memory", {"user_input": text, "agent_response": "Noted."}))
        return result(await session.call_tool("get_user_profile", {"include_knowledge": True}))

    profile = asyncio.run(stdio_session(offline, "--user", "alice", "--assistant", "helper", work=work))
    entries = dict(LongTermEntry.objects.filter(space=alice_space).values_list("value", "status"))
    assert entries[said[0]] == LongTermEntry.Status.SUPERSEDED and entries[said[1]] == LongTermEntry.Status.ACTIVE
    assert said[1] in profile["user_knowledge"] and said[0] not in profile["user_knowledge"]
