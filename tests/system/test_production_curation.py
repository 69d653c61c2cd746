"""What you curate is what it says, behind the production stack (`scripts/serve web`: gunicorn, DEBUG off,
secure settings) with a capable model configured: a forget through the REST door governs the prompt that the
fake OpenAI-compatible server receives, a revert gives the words back, and an erase leaves them nowhere in
the database nor in the web process's index files."""

import httpx2
import pytest

from bench.fake_llm_server import nothing_extracted, reply
from memory_engine.models import EntryVersion, LongTermEntry, Page
from memory_engine.services.tokens import token_create
from tests.memory_helpers import told_with_no_key
from tests.system.test_production import migrated_web

pytestmark = pytest.mark.django_db(transaction=True)

TOLD = [
    ("Hi! I'm Maria Lindqvist.", "Hello Maria!"),
    ("My blood type is AB negative, in case that ever matters.", "Noted."),
    ("The weather has been lovely.", "Glad to hear it."),
]
WORDS = "AB negative"


def _prompt(fake_llm) -> str:
    return str([r for r in fake_llm.requests if "response_format" not in r][-1]["messages"])


def _production_api(start, fake_llm, alice_space) -> httpx2.Client:
    """The production stack with the fake OpenAI-compatible server as alice's capable model (it extracts
    nothing and replies "Noted."), and a REST client of her space there."""
    _, secret = token_create(memory_user=alice_space.user, name="curation")
    fake_llm.responder = lambda asked: nothing_extracted() if "response_format" in asked else reply("Noted.")
    _, base = migrated_web(
        start,
        MEMORYOS_LLM_PROVIDER="openai",
        MEMORYOS_LLM_BASE_URL=fake_llm.base_url,
        MEMORYOS_LLM_MODEL="fake-model",
        MEMORYOS_LLM_API_KEY="test-key",
    )
    return httpx2.Client(
        base_url=f"{base}/api/v1/users/alice/spaces/helper/", headers={"Authorization": f"Bearer {secret}"}, timeout=300
    )


def test_forget_revert_and_erase_through_the_production_stack(start, fake_llm, alice_space, settings, tmp_path):
    told_with_no_key(alice_space, settings, TOLD)
    entry = LongTermEntry.objects.get(kind="user_knowledge", value__icontains=WORDS)
    api = _production_api(start, fake_llm, alice_space)
    ask = {"query": "What's my blood type?"}

    assert api.post("chat/", json=ask).status_code == 200
    assert WORDS in _prompt(fake_llm)  # told: the model is given it

    forget = api.delete(f"knowledge/{entry.pk}/")
    assert forget.status_code == 200, forget.text
    assert forget.json()["covers"]["statements"] >= 1 and forget.json()["status"] == "deleted"
    assert api.post("chat/", json=ask).status_code == 200
    assert WORDS not in _prompt(fake_llm)  # forgotten: neither the entry nor the turn it came from

    revert = api.post(f"knowledge/{entry.pk}/revert/", json={})
    assert revert.status_code == 200, revert.text
    assert api.post("chat/", json=ask).status_code == 200
    assert WORDS in _prompt(fake_llm)  # reverted: all of it back

    erase = api.post(f"knowledge/{entry.pk}/erase/", json={})
    assert erase.status_code == 200 and erase.json()["erased"] is True, erase.text
    assert api.post("chat/", json=ask).status_code == 200
    assert WORDS not in _prompt(fake_llm)
    rows = [
        *Page.objects.values_list("user_input", "agent_response", "said"),
        *LongTermEntry.objects.values_list("value", "key"),
        *EntryVersion.objects.values_list("before", "after"),
    ]
    assert not [row for row in rows if "negative" in str(row).lower()]
    index_files = [path for path in (tmp_path / "indexes").rglob("*") if path.is_file()]
    assert index_files  # the web process wrote its own, and they hold none of the words
    assert not [path for path in index_files if b"negative" in path.read_bytes().lower()]


def test_forget_by_talking_and_its_undo_through_the_production_stack(start, fake_llm, alice_space, settings):
    told_with_no_key(alice_space, settings, TOLD)
    api = _production_api(start, fake_llm, alice_space)
    ask = {"query": "What's my blood type?"}

    asked_before = len(fake_llm.requests)
    said = api.post("chat/", json={"query": "please forget my blood type"})
    assert said.status_code == 200, said.text
    body = said.json()
    assert body["page"]["reply_source"] == "curation" and body["forgotten"]
    assert all(WORDS in f["entry"]["value"] for f in body["forgotten"])
    assert not [r for r in fake_llm.requests[asked_before:] if "response_format" not in r]  # done, not a promise
    assert api.post("chat/", json=ask).status_code == 200
    assert WORDS not in _prompt(fake_llm)

    doors = {"profile": "profile", "user_knowledge": "knowledge"}
    for f in body["forgotten"]:  # Undo, as the page's button does
        door = doors[f["entry"]["kind"]]
        undone = api.post(f"{door}/{f['entry']['id']}/revert/", json={"version_id": f["undo_to"]})
        assert undone.status_code == 200, undone.text
    assert api.post("chat/", json=ask).status_code == 200
    assert WORDS in _prompt(fake_llm)
