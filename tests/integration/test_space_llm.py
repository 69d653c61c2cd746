"""A space's own LLM: its owner points it at the bundled model or an OpenAI-compatible endpoint, whose key
is kept encrypted and never sent back; the space's replies, consolidation and experiments then use it.
The endpoints are real scripted HTTP servers on 127.0.0.1; the deployment's LLM is another one."""

import socket

import pytest
from django.db import connection

from bench.fake_llm_server import FakeLLMServer, redirect, reply, status
from memory_engine.engine.llm_choice import llm_for
from memory_engine.models import LongTermEntry, SpaceLLM
from memory_engine.services import space_llm
from memory_engine.services.lab import experiment_create
from memory_engine.store import secrets
from tests.api_helpers import SPACE, client_for
from tests.memory_helpers import CAT_TALK, add_turns, extraction, nothing_extracted

KEY = "sk-test-abcdefghijklmnop-7Q9z"


@pytest.fixture
def own_llm(settings):
    """The endpoint alice's space is pointed at; 127.0.0.1 is allowed for it, as an operator would allow
    a model server of their own."""
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_ALLOWED_HOSTS": "127.0.0.1"}
    settings.MEMORYOS = {**settings.MEMORYOS, "SECRETS_KEY": "the test server's secrets passphrase of 32+ chars"}
    with FakeLLMServer(model="own-model") as server:
        yield server


@pytest.fixture
def alice(memory, alice_space):
    return client_for("alice")


def _llm_url(user_id: str = "alice") -> str:
    return SPACE.format(user=user_id) + "llm/"


def _choose(client, server, **extra):
    body = {"provider": "openai", "base_url": server.base_url, "model": "own-model", "api_key": KEY, **extra}
    return client.put(_llm_url(), body, format="json")


def _hot_space_pointed_at(space, server) -> None:
    """The space promotes after a few turns, through `server`'s endpoint."""
    space.stm_capacity, space.heat_threshold = 2, 2.5
    space.save()
    space_llm.choice_set(
        space=space,
        values={"provider": "openai", "base_url": server.base_url, "model": "own-model", "api_key": KEY},
        actor="test",
    )


def test_a_chosen_endpoint_answers_the_spaces_chat_with_its_model_and_key(alice, alice_space, fake_llm, own_llm):
    fake_llm.responder = lambda request: nothing_extracted()  # the deployment's: no reply must come from it
    own_llm.responder = lambda request: (
        nothing_extracted() if "response_format" in request else reply("From your own model.")
    )
    chosen = _choose(alice, own_llm)
    assert chosen.status_code == 200, chosen.data
    assert chosen.data["provider"] == "openai" and chosen.data["has_key"] and chosen.data["key_hint"] == "7Q9z"
    assert KEY not in str(chosen.data) and KEY not in alice.get(_llm_url()).content.decode()

    answer = alice.post(SPACE.format(user="alice") + "chat/", {"query": "Hello?"}, format="json")
    assert answer.status_code == 200 and answer.data["response"] == "From your own model."
    chats = [r for r in own_llm.requests if "response_format" not in r]
    assert [r["model"] for r in chats] == ["own-model"] and own_llm.authorizations[-1] == f"Bearer {KEY}"
    assert not [r for r in fake_llm.requests if "response_format" not in r]

    # Back to the deployment's LLM.
    assert alice.put(_llm_url(), {"provider": "default"}, format="json").data["provider"] == "default"
    fake_llm.responder = lambda request: nothing_extracted() if "response_format" in request else reply("Default.")
    assert (
        alice.post(SPACE.format(user="alice") + "chat/", {"query": "Hi?"}, format="json").data["response"] == "Default."
    )


def test_the_key_is_stored_encrypted_and_a_changed_server_key_is_a_clear_error(
    alice, alice_space, own_llm, settings, fake_llm
):
    old = "the first passphrase of the operator that is long enough"
    settings.MEMORYOS = {**settings.MEMORYOS, "SECRETS_KEY": old}
    assert _choose(alice, own_llm).status_code == 200
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {SpaceLLM._meta.db_table}")
        assert KEY not in repr(cursor.fetchall())
    stored = SpaceLLM.objects.get(space=alice_space)
    assert secrets.decrypt(stored.api_key_encrypted) == KEY

    # Rotated: the new key first, the old one kept, and the stored key still opens.
    settings.MEMORYOS = {
        **settings.MEMORYOS,
        "SECRETS_KEY": "the second passphrase of the operator and long too," + old,
    }
    assert llm_for(alice_space).name == "openai"
    # Replaced without the old one: the space's replies fail with a clear error, and nothing is stored.
    settings.MEMORYOS = {**settings.MEMORYOS, "SECRETS_KEY": "a third passphrase that opens nothing stored"}
    own_llm.responder = lambda request: reply("never asked")
    answer = alice.post(SPACE.format(user="alice") + "chat/", {"query": "Hello?"}, format="json")
    assert answer.status_code == 502 and "cannot be read" in answer.data["detail"]
    assert own_llm.requests == [] and not alice_space.pages.exists()


def test_endpoints_the_server_must_not_call_are_refused_and_nothing_is_stored(alice, alice_space, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_ALLOWED_HOSTS": ""}
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_LOCAL_SERVERS": []}  # as in production
    refused = {
        "http://127.0.0.1:8080/v1": "private or local",
        "https://127.0.0.1/v1": "private or local",
        "https://169.254.169.254/latest": "private or local",
        "https://10.1.2.3/v1": "private or local",
        "https://[::1]/v1": "private or local",
        "https://localhost/v1": "private or local",
        "http://8.8.8.8/v1": "https",
        "https://user:pw@8.8.8.8/v1": "user name",
        "ftp://8.8.8.8/v1": "http",
        "https://no-such-host.invalid/v1": "cannot be found",
        "https://8.8.8.8:99999/v1": "port",
        # IPv6 forms carrying a loopback or metadata IPv4 address (compatible, NAT64, 6to4, translated)
        "https://[::127.0.0.1]/v1": "private or local",
        "https://[64:ff9b::7f00:1]/v1": "private or local",
        "https://[64:ff9b::a9fe:a9fe]/v1": "private or local",
        "https://[2002:7f00:1::1]/v1": "private or local",
        "https://[::ffff:0:7f00:1]/v1": "private or local",
        "https://[64:ff9b:1::808:808]/v1": "private or local",
    }
    for url, reason in refused.items():
        answer = alice.put(_llm_url(), {"provider": "openai", "base_url": url, "model": "m"}, format="json")
        assert answer.status_code == 400 and reason in str(answer.data["base_url"]), (url, answer.data)
    for body, field in [
        ({"provider": "openai", "base_url": "https://8.8.8.8/v1"}, "model"),
        ({"provider": "openai", "model": "m"}, "api_key"),  # api.openai.com needs a key
        ({"provider": "openai", "model": "m", "api_key": "sk-a\nb"}, "api_key"),
        ({"provider": "openai", "model": "m", "api_key": "k" * 501}, None),
        ({"provider": "cloud"}, "provider"),
        ({"provider": "openai", "model": "m\u0000", "api_key": "k"}, None),
    ]:
        answer = alice.put(_llm_url(), body, format="json")
        assert answer.status_code in (400, 413) and (field is None or field in answer.data), (body, answer.data)
    assert not SpaceLLM.objects.exists()


def test_without_a_secrets_key_production_keeps_no_api_key(alice, alice_space, own_llm, settings):
    settings.DEBUG = False
    settings.MEMORYOS = {**settings.MEMORYOS, "SECRETS_KEY": ""}
    answer = _choose(alice, own_llm)
    assert answer.status_code == 409 and "MEMORYOS_SECRETS_KEY" in answer.data["detail"]
    assert not SpaceLLM.objects.exists() and alice.get(_llm_url()).data["can_keep_keys"] is False
    # A local model server needs no key: that is kept.
    assert _choose(alice, own_llm, api_key="").status_code == 200
    settings.MEMORYOS = {**settings.MEMORYOS, "SECRETS_KEY": "short"}
    assert _choose(alice, own_llm).status_code == 409


def test_another_users_space_llm_is_out_of_reach(alice, bob_space, own_llm):
    for answer in (
        alice.get(_llm_url("bob")),
        alice.put(_llm_url("bob"), {"provider": "offline"}, format="json"),
        alice.post(_llm_url("bob") + "test/", {}, format="json"),
    ):
        assert answer.status_code == 404
    assert not SpaceLLM.objects.exists()


def test_the_connection_test_asks_for_one_word_and_stores_nothing(alice, alice_space, own_llm):
    own_llm.responder = lambda request: reply("OK")
    unsaved = alice.post(
        _llm_url() + "test/",
        {"provider": "openai", "base_url": own_llm.base_url, "model": "own-model", "api_key": KEY},
        format="json",
    )
    assert unsaved.data["ok"] is True and unsaved.data["answer"] == "OK" and unsaved.data["model"] == "own-model"
    assert not SpaceLLM.objects.exists() and own_llm.authorizations[-1] == f"Bearer {KEY}"
    assert _choose(alice, own_llm).status_code == 200
    # The stored key is used when the form leaves it out.
    again = alice.post(
        _llm_url() + "test/", {"provider": "openai", "base_url": own_llm.base_url, "model": "own-model"}, format="json"
    )
    assert again.data["ok"] is True and own_llm.authorizations[-1] == f"Bearer {KEY}"
    stored = alice.post(_llm_url() + "test/", format="json")
    assert stored.data["ok"] is True
    dead = alice.post(
        _llm_url() + "test/",
        {"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key": ""},
        format="json",
    )
    assert dead.status_code == 200 and dead.data["ok"] is False and "127.0.0.1:9" in dead.data["detail"]
    assert not alice_space.pages.exists()


def test_consolidation_and_an_experiment_use_the_spaces_llm(memory, alice_space, fake_llm, own_llm):
    fake_llm.responder = lambda request: nothing_extracted()
    _hot_space_pointed_at(alice_space, own_llm)
    own_llm.script(extraction(user_facts=[("pet", "The user has a cat named Milo", 1)]))
    own_llm.responder = nothing_extracted
    add_turns(memory, [*CAT_TALK, ("I also like long walks.", "Noted.")])
    assert LongTermEntry.objects.filter(space=alice_space, value__contains="Milo").exists()
    assert [r for r in own_llm.requests if "response_format" in r]  # the promotion asked the space's LLM
    assert not fake_llm.requests

    experiment = experiment_create(source=alice_space, name="hotter", parameters={"heat_threshold": 2.0})
    shadow = SpaceLLM.objects.get(space=experiment.space)
    assert (shadow.base_url, shadow.model, secrets.decrypt(shadow.api_key_encrypted)) == (
        own_llm.base_url,
        "own-model",
        KEY,
    )


def test_a_promotion_with_an_unusable_endpoint_fails_on_record_and_stores_nothing(
    memory, alice_space, fake_llm, own_llm, settings
):
    fake_llm.responder = lambda request: nothing_extracted()
    _hot_space_pointed_at(alice_space, own_llm)
    settings.MEMORYOS = {**settings.MEMORYOS, "SECRETS_KEY": "a passphrase that opens nothing that is stored"}
    add_turns(memory, [*CAT_TALK, ("I also like long walks.", "Noted.")])
    failed = alice_space.consolidation_runs.filter(status="failed")
    assert failed.exists() and "cannot be read" in failed.first().error
    assert not LongTermEntry.objects.filter(space=alice_space).exists()
    assert own_llm.requests == [] and fake_llm.requests == []  # no other model was asked instead


@pytest.mark.offline_llm
def test_the_bundled_model_is_tested_by_loading_it_and_left_unasked(alice, alice_space, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_PROVIDER": "openai"}  # the server's default is elsewhere
    tested = alice.post(_llm_url() + "test/", {"provider": "offline"}, format="json")
    assert tested.status_code == 200 and tested.data["ok"] is True and "loaded" in tested.data["answer"]
    assert tested.data["provider"] == "offline" and not SpaceLLM.objects.exists()


def test_the_model_servers_answering_on_this_machine_are_offered_and_may_be_chosen(alice, alice_space, settings):
    """In development, Ollama, LM Studio or llama.cpp answering on their usual ports are offered in the
    model form (here a scripted server stands in, on its own port); the one listed may be chosen although
    it is on loopback, and no other loopback port may."""
    with FakeLLMServer(model="llama3.2:3b") as local:
        settings.MEMORYOS = {
            **settings.MEMORYOS,
            "LLM_LOCAL_SERVERS": [("Ollama", local.base_url), ("LM Studio", "http://127.0.0.1:9/v1")],
        }
        found = alice.get(_llm_url() + "local/")
        assert found.status_code == 200, found.data
        assert found.data == {"servers": [{"name": "Ollama", "base_url": local.base_url, "models": ["llama3.2:3b"]}]}

        chosen = alice.put(
            _llm_url(), {"provider": "openai", "base_url": local.base_url, "model": "llama3.2:3b"}, format="json"
        )
        assert chosen.status_code == 200, chosen.data
        assert chosen.data["weak"] is False and chosen.data["base_url"] == local.base_url
        other_port = local.base_url.replace(str(local.port), "7")  # loopback, but no server listed there
        refused = alice.put(_llm_url(), {"provider": "openai", "base_url": other_port, "model": "x"}, format="json")
        assert refused.status_code == 400 and "private or local address" in str(refused.data)


def test_no_local_server_is_offered_or_allowed_unless_configured(alice, alice_space, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_LOCAL_SERVERS": []}
    assert alice.get(_llm_url() + "local/").data == {"servers": []}
    refused = alice.put(
        _llm_url(), {"provider": "openai", "base_url": "http://127.0.0.1:11434/v1", "model": "x"}, format="json"
    )
    assert refused.status_code == 400


def test_another_account_cannot_ask_for_a_spaces_local_servers(memory, alice_space, bob_space):
    assert client_for("bob").get(_llm_url("alice") + "local/").status_code == 404


def test_the_space_says_whether_its_model_is_the_weak_offline_one(alice, alice_space, fake_llm):
    assert alice.get(_llm_url()).data["weak"] is False  # the deployment's: here a scripted endpoint
    alice.put(_llm_url(), {"provider": "offline"}, format="json")
    assert alice.get(_llm_url()).data["weak"] is True


def test_an_endpoint_that_redirects_is_not_followed_and_what_answered_is_not_shown(alice, alice_space, own_llm):
    with FakeLLMServer(model="elsewhere") as elsewhere:
        elsewhere.responder = lambda request: reply("The memory prompt arrived here.")
        own_llm.responder = lambda request: redirect(elsewhere.base_url + "/chat/completions")
        body = {"provider": "openai", "base_url": own_llm.base_url, "model": "own-model", "api_key": KEY}
        tested = alice.post(_llm_url() + "test/", body, format="json")
        assert tested.data["ok"] is False and "HTTP 307" in tested.data["detail"], tested.data
        assert _choose(alice, own_llm).status_code == 200
        answer = alice.post(SPACE.format(user="alice") + "chat/", {"query": "What is my cat called?"}, format="json")
        assert answer.status_code == 502 and "HTTP 307" in answer.data["detail"], answer.data
        assert elsewhere.requests == [] and not alice_space.pages.exists()
    # An error's body is the endpoint's to say, not ours to show: the status only.
    own_llm.responder = lambda request: status(401, "upstream says: internal-host-42 at 10.0.0.7, trace follows")
    tested = alice.post(_llm_url() + "test/", format="json")
    assert tested.data["ok"] is False and "HTTP 401" in tested.data["detail"]
    assert "internal-host-42" not in tested.data["detail"]


def test_a_name_that_resolves_to_loopback_once_checked_is_not_called(alice, alice_space, settings, monkeypatch):
    """DNS rebinding: the name answers a public address while it is checked and 127.0.0.1 when called."""
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_ALLOWED_HOSTS": ""}
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_LOCAL_SERVERS": []}
    settings.MEMORYOS = {**settings.MEMORYOS, "LLM_TIMEOUT_SECONDS": 2.0, "LLM_MAX_RETRIES": 0}
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    resolve, asked = socket.getaddrinfo, []

    def rebinding(host, *args, **kwargs):
        if host != "rebind.example":
            return resolve(host, *args, **kwargs)
        asked.append(host)
        address = "93.184.215.14" if len(asked) <= 2 else "127.0.0.1"  # the choice and its re-check see it public
        return [(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    base_url = f"https://rebind.example:{port}/v1"
    chosen = alice.put(_llm_url(), {"provider": "openai", "base_url": base_url, "model": "m"}, format="json")
    assert chosen.status_code == 200, chosen.data
    answer = alice.post(SPACE.format(user="alice") + "chat/", {"query": "Hello there"}, format="json")
    assert answer.status_code == 502 and "private or local" in answer.data["detail"], answer.data
    listener.setblocking(False)
    with pytest.raises(BlockingIOError):
        listener.accept()  # nothing connected to 127.0.0.1
    listener.close()
    assert len(asked) >= 3 and not alice_space.pages.exists()


def test_the_stored_key_goes_only_to_the_server_it_was_given_for(alice, alice_space, own_llm):
    own_llm.responder = lambda request: reply("OK")
    assert _choose(alice, own_llm).status_code == 200
    with FakeLLMServer(model="other") as other:
        other.responder = lambda request: reply("OK")
        elsewhere = {"provider": "openai", "base_url": other.base_url, "model": "m"}
        tested = alice.post(_llm_url() + "test/", elsewhere, format="json")
        assert tested.status_code == 400 and "another server" in str(tested.data["api_key"]), tested.data
        moved = alice.put(_llm_url(), elsewhere, format="json")
        assert moved.status_code == 400 and "another server" in str(moved.data["api_key"]), moved.data
        assert other.requests == []
        # With the key given again, or none, it may move.
        assert alice.put(_llm_url(), {**elsewhere, "api_key": ""}, format="json").status_code == 200
        assert alice.post(_llm_url() + "test/", format="json").data["ok"] is True
        assert other.authorizations[-1] in ("", None, "Bearer not-needed")
    # The same server on another path keeps it.
    assert _choose(alice, own_llm).status_code == 200
    same = {"provider": "openai", "base_url": own_llm.base_url + "/", "model": "own-model"}
    assert alice.post(_llm_url() + "test/", same, format="json").data["ok"] is True
    assert own_llm.authorizations[-1] == f"Bearer {KEY}"
