"""The chat page's memory feed, over real HTTP (the live server): server-sent events that a change to the
space, made through any door, reaches at once, with the parts that changed; a page that reconnects with
the last revision it saw is told at once what it missed."""

import json

import httpx2
import pytest

from memory_engine.interfaces.api import memory_feed
from memory_engine.models import MemoryUser
from memory_engine.services import curation
from memory_engine.services.spaces import space_delete
from memory_engine.services.tokens import token_create
from tests.api_helpers import SPACE
from tests.memory_helpers import CAT_TALK, add_turns, nothing_extracted

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(autouse=True)
def short_streams(settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "EVENTS_STREAM_SECONDS": 3.0}


@pytest.fixture
def announced_only(monkeypatch, settings):
    """The feed reads the revision only when a change is announced: what arrives was pushed."""
    monkeypatch.setattr(memory_feed, "CHECK_SECONDS", 600.0)
    settings.MEMORYOS = {**settings.MEMORYOS, "EVENTS_STREAM_SECONDS": 600.0}


def _events_url(live_server, user_id: str = "alice") -> str:
    return live_server.url + SPACE.format(user=user_id) + "events/"


def _headers(user_id: str = "alice", **extra: str) -> dict:
    _, secret = token_create(memory_user=MemoryUser.objects.get(external_id=user_id), name="feed test")
    return {"Authorization": f"Bearer {secret}", **extra}


def _events(response):
    """(name, id, data) for each event as it arrives; keep-alive comments are skipped."""
    name, event_id, data = None, None, []
    for line in response.iter_lines():
        if not line:
            if name:
                yield name, event_id, json.loads("\n".join(data))
            name, event_id, data = None, None, []
        elif line.startswith("event: "):
            name = line[7:]
        elif line.startswith("id: "):
            event_id = line[4:]
        elif line.startswith("data: "):
            data.append(line[6:])


def test_the_feed_pushes_each_change_with_what_changed(live_server, memory, alice_space, fake_llm, announced_only):
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK[:1])
    url, headers = _events_url(live_server), _headers()
    with httpx2.stream("GET", url, headers={**headers, "Accept": "text/event-stream"}, timeout=120) as response:
        assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
        events = _events(response)
        name, first_id, data = next(events)  # where the memory stands, at once
        assert name == "memory" and set(data["changed"]) >= {"tiers", "parameters"}
        assert data["space"]["counts"]["short_term_pages"] == 1 and data["import"] is None

        add_turns(memory, CAT_TALK[1:2])  # another door: the Python class
        name, second_id, data = next(events)
        assert name == "memory" and "tiers" in data["changed"] and "entries" not in data["changed"]
        assert data["space"]["counts"]["short_term_pages"] == 2 and second_id != first_id

        entry = curation.profile_entry_add(space=alice_space, attribute="occupation", value="nurse", actor="test")
        name, _, data = next(events)
        assert "entries" in data["changed"] and data["space"]["counts"]["profile_entries"] == 1
        curation.entry_edit(entry=entry, value="paediatric nurse", actor="test")
        name, _, data = next(events)
        assert "entries" in data["changed"] and "runs" not in data["changed"]


def test_a_page_that_reconnects_is_told_at_once_what_it_missed(live_server, memory, alice_space, fake_llm):
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK[:1])
    url, headers = _events_url(live_server), _headers()
    with httpx2.stream("GET", url, headers=headers, timeout=120) as response:
        _, seen, _ = next(_events(response))
    # Disconnected: an entry is set meanwhile. Reconnecting with the revision seen tells just that.
    curation.profile_entry_add(space=alice_space, attribute="pet", value="a cat named Milo", actor="test")
    with httpx2.stream("GET", url, headers={**headers, "Last-Event-ID": seen}, timeout=120) as response:
        name, now, data = next(_events(response))
    assert name == "memory" and "entries" in data["changed"] and "imports" not in data["changed"] and now != seen
    # Nothing changed since: the stream says nothing but keep-alives until its end.
    with httpx2.stream("GET", url + f"?last_event_id={now}", headers=headers, timeout=120) as response:
        assert list(_events(response)) == []  # the stream ends after MEMORYOS_EVENTS_STREAM_SECONDS (the test's)


def test_the_feed_says_when_the_space_is_deleted_and_is_nobody_elses(live_server, memory, alice_space, bob_space):
    url = _events_url(live_server)
    assert httpx2.get(_events_url(live_server, "bob"), headers=_headers("alice"), timeout=30).status_code == 404
    with httpx2.stream("GET", url, headers=_headers(), timeout=120) as response:
        events = _events(response)
        assert next(events)[0] == "memory"
        space_delete(space=alice_space)
        assert next(events)[0] == "gone"


def test_a_bad_last_event_id_counts_as_knowing_nothing(live_server, memory, alice_space):
    url, headers = _events_url(live_server), _headers()
    for junk in ("tiers:", "x" * 5000, "tiers:1.1 heat:" + "9" * 200, "\u00e9\u00e9"):
        with httpx2.stream("GET", url, params={"last_event_id": junk}, headers=headers, timeout=120) as response:
            name, _, data = next(_events(response))
        assert name == "memory" and len(data["changed"]) == 6
