"""A chat reply streamed as server-sent events, over real HTTP (the live server) from the scripted LLM
server, which streams word by word: the words arrive before the reply is complete, the turn is stored
once, only when it is, and a client that hangs up midway leaves nothing behind."""

import json
import threading
import time

import httpx2
import pytest

from bench.fake_llm_server import reply, status
from memory_engine.models import HeatEvent, LongTermEntry, MemoryUser, MidTermSession, Page
from memory_engine.services.tokens import token_create
from tests.api_helpers import SPACE
from tests.memory_helpers import CAT_TALK, add_turns, extraction, nothing_extracted

QUESTION = "What is my cat called?"


@pytest.fixture
def cat_space(memory, alice_space, fake_llm):
    """alice's memory holds the cat conversation, promoted into a profile and knowledge."""
    alice_space.stm_capacity = 2
    alice_space.heat_threshold = 2.5
    alice_space.save()
    fake_llm.script(extraction(user_facts=[("pet", "The user has a cat named Milo", 1)]))
    fake_llm.responder = nothing_extracted
    add_turns(memory, [*CAT_TALK, ("I also like long walks.", "Noted.")])
    assert fake_llm.pending == 0 and LongTermEntry.objects.filter(space=alice_space).exists()
    return alice_space


def _headers(user_id: str) -> dict:
    _, secret = token_create(memory_user=MemoryUser.objects.get(external_id=user_id), name="stream test")
    return {"Authorization": f"Bearer {secret}"}


def _chat_url(live_server, user_id: str = "alice") -> str:
    return live_server.url + SPACE.format(user=user_id) + "chat/"


def _events(response: httpx2.Response):
    """(name, data) for each server-sent event of a streamed response, as it arrives."""
    name, data = None, []
    for line in response.iter_lines():
        if line.startswith(":"):
            continue
        if not line:
            if name:
                yield name, json.loads("\n".join(data))
            name, data = None, []
        elif line.startswith("event: "):
            name = line[len("event: ") :]
        elif line.startswith("data: "):
            data.append(line[len("data: ") :])


def _stream(live_server, body: dict):
    return httpx2.stream("POST", _chat_url(live_server), json=body, headers=_headers("alice"), timeout=60)


def _state(space) -> tuple:
    """Everything a reply may change: turns, heat and visits, hits, heat events."""
    return (
        Page.objects.filter(space=space).count(),
        list(MidTermSession.objects.filter(space=space).order_by("pk").values_list("heat", "n_visit")),
        list(LongTermEntry.objects.filter(space=space).order_by("pk").values_list("hits", flat=True)),
        HeatEvent.objects.filter(session__space=space).count(),
    )


def _chat_replies(step_for_chat):
    """A responder: `step_for_chat()` for a chat request, an empty extraction for the updater's."""
    return lambda request: step_for_chat() if "response_format" not in request else nothing_extracted()


def test_a_streamed_reply_shows_its_words_before_it_is_complete_and_is_stored_once_when_it_is(
    live_server, cat_space, fake_llm
):
    gate = threading.Event()
    text = "Your cat is called Milo, and he likes the sun."
    fake_llm.responder = _chat_replies(lambda: reply(text, pause_after=3, gate=gate))
    before = _state(cat_space)
    body = {"query": QUESTION, "stream": True}
    with _stream(live_server, body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        events = _events(response)
        shown = ""
        while len(shown.split()) < 3:  # the first three words, while the model is still writing
            name, data = next(events)
            assert name == "delta", (name, data)
            shown += data["text"]
        assert shown.strip() == "Your cat is"
        assert _state(cat_space) == before  # nothing stored mid-reply, not even the retrieval's hits
        gate.set()
        rest = list(events)
    assert [name for name, _ in rest][-1] == "reply", rest[-1]
    shown += "".join(data["text"] for name, data in rest if name == "delta")
    final = rest[-1][1]
    assert shown.strip() == final["response"] == text
    assert final["page"]["user_input"] == QUESTION and final["page"]["agent_response"] == text
    assert any("Milo" in item["text"] for item in final["retrieval"]["user_knowledge"])
    assert final["usage"]["completion_tokens"] > 0
    stored = Page.objects.filter(space=cat_space, user_input=QUESTION)
    assert [page.agent_response for page in stored] == [text]
    hits = list(LongTermEntry.objects.filter(space=cat_space).values_list("hits", flat=True))
    assert sum(hits) > sum(before[2])  # the knowledge used got its hit once the reply was stored


def test_a_client_that_hangs_up_midway_stops_the_reply_and_leaves_no_turn(live_server, cat_space, fake_llm):
    gate = threading.Event()
    long_sentence = "Your cat is called Milo " + " ".join(f"and word{n}" for n in range(200)) + "."
    fake_llm.responder = _chat_replies(lambda: reply(long_sentence, pause_after=4, gate=gate, chunk_seconds=0.05))
    before = _state(cat_space)
    body = {"query": QUESTION, "stream": True}
    with _stream(live_server, body) as response:
        name, data = next(_events(response))
        assert name == "delta"
    # The client has gone. The server learns it at its next writes and stops the model there; the rest of
    # the reply is long and slow (10 s), so however late a busy machine notices, the model is still writing.
    gate.set()
    deadline = time.monotonic() + 60
    while not fake_llm.streams[-1].hung_up and time.monotonic() < deadline:
        time.sleep(0.05)
    record = fake_llm.streams[-1]
    assert record.hung_up and record.sent < record.total
    time.sleep(0.5)  # were anything still to be stored, it would be by now
    assert _state(cat_space) == before
    assert not Page.objects.filter(user_input=QUESTION).exists()


def test_a_degenerate_start_is_dropped_in_the_stream_and_the_retry_streams_afresh(live_server, cat_space, fake_llm):
    answers = iter([reply("Milo Milo Milo Milo " * 20), reply("Your cat is Milo.")])
    fake_llm.responder = _chat_replies(lambda: next(answers))
    body = {"query": QUESTION, "stream": True}
    with _stream(live_server, body) as response:
        events = list(_events(response))
    names = [name for name, _ in events]
    assert "restart" in names and names[-1] == "reply"
    after_restart = events[len(names) - 1 - names[::-1].index("restart") + 1 :]
    assert "".join(data["text"] for name, data in after_restart if name == "delta").strip() == "Your cat is Milo."
    assert events[-1][1]["response"] == "Your cat is Milo."


def test_an_llm_failure_in_a_stream_is_an_error_event_and_stores_nothing(live_server, cat_space, fake_llm):
    fake_llm.responder = _chat_replies(lambda: status(500))
    before = _state(cat_space)
    body = {"query": QUESTION, "stream": True}
    with _stream(live_server, body) as response:
        assert response.status_code == 200
        events = list(_events(response))
    assert [name for name, _ in events] == ["error"]
    assert events[0][1]["status"] == 503 and "unavailable" in events[0][1]["detail"]
    assert _state(cat_space) == before


def test_a_bad_query_or_another_users_space_is_refused_before_any_event(live_server, cat_space, bob_space):
    headers = _headers("alice")
    bad = httpx2.post(_chat_url(live_server), json={"query": " ", "stream": True}, headers=headers, timeout=30)
    assert bad.status_code == 400 and bad.headers["content-type"] == "application/json"
    nul = httpx2.post(_chat_url(live_server), json={"query": "a\u0000b", "stream": True}, headers=headers, timeout=30)
    assert nul.status_code == 400
    theirs = httpx2.post(
        _chat_url(live_server, "bob"), json={"query": "hi", "stream": True}, headers=headers, timeout=30
    )
    assert theirs.status_code == 404
    not_bool = httpx2.post(
        _chat_url(live_server), json={"query": "hi", "stream": "yes please"}, headers=headers, timeout=30
    )
    assert not_bool.status_code == 400 and "stream" in not_bool.json()


def test_a_client_accepting_only_event_streams_gets_a_refusal_as_an_error_event(live_server, cat_space):
    headers = {**_headers("alice"), "Accept": "text/event-stream"}
    bad = httpx2.post(_chat_url(live_server), json={"query": " ", "stream": True}, headers=headers, timeout=30)
    assert bad.status_code == 400 and bad.headers["content-type"].startswith("text/event-stream")
    assert bad.text.startswith("event: error\ndata: ") and '"status":400' in bad.text
