"""The REST API over real HTTP semantics (DRF's test client): tokens, isolation, every operation, errors.

alice and bob each have a token for their own memory; charlie's playground account owns charlie's.
Nobody reaches anyone else's memory: every endpoint is tried with the wrong user's id."""

import pytest
from django.contrib.auth import get_user_model
from django.core.cache import cache
from django.test import Client
from rest_framework.test import APIClient

from bench.fake_llm_server import reply, status
from memory_engine.models import (
    EntryVersion,
    Experiment,
    HeatEvent,
    LongTermEntry,
    MemorySpace,
    MemoryUser,
    MidTermSession,
    Page,
)
from memory_engine.services.tokens import token_create, token_revoke
from tests.api_helpers import SPACE, client_for
from tests.memory_helpers import CAT_TALK, add_turns, extraction, nothing_extracted


@pytest.fixture(autouse=True)
def _fresh_rate_counts():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def alice(memory):
    return client_for("alice")


@pytest.fixture
def bob(memory):
    return client_for("bob")


@pytest.fixture
def filled(memory, alice_space, bob_space, fake_llm):
    """alice and bob each have turns, a profile entry and a fact."""
    for space in (alice_space, bob_space):
        space.stm_capacity = 1
        space.heat_threshold = 1.5
        space.save()
    fake_llm.script(
        extraction(profile=[("occupation", "nurse", 1)], user_facts=[("pet", "The user has a cat named Milo", 1)])
    )
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK, user="alice")
    fake_llm.script(
        extraction(profile=[("occupation", "pilot", 1)], user_facts=[("pet", "The user has a dog named Rex", 1)])
    )
    bobs_turns = [("I work as a pilot; my dog Rex loves the beach.", "Rex sounds fun!"), ("Hi", "Hello")]
    add_turns(memory, bobs_turns, user="bob")
    assert {e.kind for e in LongTermEntry.objects.filter(space=bob_space)} == {"profile", "user_knowledge"}
    return alice_space


def entry_of(user: str, kind: str) -> LongTermEntry:
    return LongTermEntry.objects.filter(space__user__external_id=user, kind=kind, status="active").first()


def bobs_memory() -> tuple:
    space = MemorySpace.objects.get(user__external_id="bob")
    entries = list(LongTermEntry.objects.filter(space=space).order_by("pk").values_list("value", "status"))
    return Page.objects.filter(space=space).count(), entries, EntryVersion.objects.filter(entry__space=space).count()


# --- Isolation -------------------------------------------------------------------------------------


def every_endpoint(entry_id: int, page_id: int, experiment_id: int):
    space = SPACE.format(user="bob")
    experiment = space + f"experiments/{experiment_id}/"
    return [
        ("get", space + "experiments/", None),
        ("post", space + "experiments/", {"name": "mine now", "parameters": {"heat_threshold": 2}}),
        ("get", experiment, None),
        ("delete", experiment, None),
        ("post", experiment + "compare/", {"questions": ["what is the dog called?"]}),
        ("get", experiment + "heat/", None),
        ("get", "/api/v1/users/bob/", None),
        ("delete", "/api/v1/users/bob/", None),
        ("get", "/api/v1/users/bob/export/", None),
        ("get", space, None),
        ("patch", space, {"stm_capacity": 3}),
        ("delete", space, None),
        ("get", space + "export/", None),
        ("get", space + "turns/", None),
        ("post", space + "turns/", {"user_input": "hi", "agent_response": "hello"}),
        ("get", space + f"turns/{page_id}/", None),
        ("post", space + "chat/", {"query": "what is my dog called?"}),
        ("post", space + "retrieve/", {"query": "dog"}),
        ("post", space + "inspect/", {"query": "dog"}),
        ("get", space + "sessions/", None),
        ("get", space + "heat/", None),
        ("get", space + "runs/", None),
        ("get", space + "imports/", None),
        ("post", space + "imports/", {"transcript": [{"user_input": "hi", "agent_response": "hello"}]}),
        ("get", space + "profile/", None),
        ("post", space + "profile/", {"key": "occupation", "value": "thief"}),
        ("get", space + f"profile/{entry_id}/", None),
        ("patch", space + f"profile/{entry_id}/", {"value": "thief"}),
        ("delete", space + f"profile/{entry_id}/", None),
        ("get", space + f"profile/{entry_id}/history/", None),
        ("get", space + "knowledge/", None),
        ("post", space + "knowledge/", {"value": "The user owes alice money"}),
        ("get", space + f"knowledge/{entry_id}/", None),
        ("patch", space + f"knowledge/{entry_id}/", {"value": "changed"}),
        ("delete", space + f"knowledge/{entry_id}/", None),
        ("get", space + f"knowledge/{entry_id}/history/", None),
    ]


def test_a_token_never_reaches_another_users_memory_on_any_endpoint(filled, alice, bob, fake_llm):
    experiment = bob.post(SPACE.format(user="bob") + "experiments/", {"name": "bob's"}, format="json")
    assert experiment.status_code == 202, experiment.data
    fake_llm.responder = lambda request: reply("Rex!")
    before, calls = bobs_memory(), len(fake_llm.requests)
    experiments = list(Experiment.objects.values_list("pk", "space_id"))
    page_id = Page.objects.filter(space__user__external_id="bob").first().pk
    for kind in ("profile", "user_knowledge"):
        entry_id = entry_of("bob", kind).pk
        for method, url, body in every_endpoint(entry_id, page_id, experiment.data["id"]):
            response = getattr(alice, method)(url, body, format="json")
            assert response.status_code == 404, (method, url, response.status_code)
    assert bobs_memory() == before
    assert list(Experiment.objects.values_list("pk", "space_id")) == experiments
    assert not any("Rex" in str(r) for r in fake_llm.requests[calls:])  # nothing of bob's went to the LLM


def test_a_users_own_entry_id_under_another_users_url_is_not_found(filled, alice, bob):
    alices_entry = entry_of("alice", "profile").pk
    assert bob.get(SPACE.format(user="bob") + f"profile/{alices_entry}/").status_code == 404
    assert alice.get(SPACE.format(user="alice") + f"profile/{alices_entry}/").status_code == 200


def test_lists_show_only_what_the_caller_may_see(filled, alice):
    users = alice.get("/api/v1/users/").data
    assert [u["user_id"] for u in users["results"]] == ["alice"]
    assert users["results"][0]["assistants"] == ["helper"]


def test_a_playground_account_sees_the_memory_users_it_owns_and_may_create_them(memory, filled):
    account = get_user_model().objects.create_user("carla", password="pw-carla-123")
    client = APIClient()
    client.force_authenticate(account)
    assert client.get("/api/v1/users/").data["results"] == []
    made = client.post("/api/v1/users/", {"user_id": "demo", "display_name": "Carla"}, format="json")
    assert made.status_code == 201 and made.data["user_id"] == "carla:demo"  # in the account's namespace
    assert [u["user_id"] for u in client.get("/api/v1/users/").data["results"]] == ["carla:demo"]
    assert client.get("/api/v1/users/alice/").status_code == 404
    again = client.post("/api/v1/users/", {"user_id": "carla:demo"}, format="json")
    assert again.status_code == 400 and "taken" in again.data["user_id"][0]
    turn = {"user_input": "Hi.", "agent_response": "Hello."}
    sent = client.post("/api/v1/users/carla:demo/spaces/helper/turns/", turn, format="json")
    assert sent.status_code == 201


def test_a_signed_in_session_must_send_the_csrf_token_and_without_it_nothing_is_stored(memory, alice_space):
    account = get_user_model().objects.create_user("ann", password="pw-ann-12345")
    MemoryUser.objects.filter(external_id="alice").update(owner=account)
    browser = Client(enforce_csrf_checks=True)
    browser.login(username="ann", password="pw-ann-12345")
    url = SPACE.format(user="alice") + "turns/"
    turn = {"user_input": "Remember my locker code.", "agent_response": "Noted."}
    forged = browser.post(url, turn, content_type="application/json")
    assert forged.status_code == 403 and "CSRF" in forged.json()["detail"]
    assert not Page.objects.filter(user_input=turn["user_input"]).exists()
    page = browser.get("/chat/alice/helper/")  # the page hands its script the token
    token = page.context["csrf_token"]
    sent = browser.post(url, turn, content_type="application/json", HTTP_X_CSRFTOKEN=str(token))
    assert sent.status_code == 201
    assert Page.objects.filter(user_input=turn["user_input"]).count() == 1


def test_a_token_cannot_create_users(alice):
    assert alice.post("/api/v1/users/", {"user_id": "mallory"}, format="json").status_code == 403
    assert not MemoryUser.objects.filter(external_id="mallory").exists()


def test_no_token_a_wrong_token_or_a_revoked_token_is_refused(memory, alice):
    assert APIClient().get("/api/v1/users/alice/").status_code == 401
    wrong = APIClient()
    wrong.credentials(HTTP_AUTHORIZATION="Bearer mos_not-a-real-token")
    assert wrong.get("/api/v1/users/alice/").status_code == 401
    token, secret = token_create(memory_user=MemoryUser.objects.get(external_id="alice"))
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {secret}")
    assert client.get("/api/v1/users/alice/").status_code == 200
    token_revoke(token=token)
    assert client.get("/api/v1/users/alice/").status_code == 401


# --- Operations ------------------------------------------------------------------------------------


def test_adding_a_turn_stores_it_and_makes_the_space_on_first_use(memory, alice, fake_llm):
    fake_llm.responder = nothing_extracted
    url = "/api/v1/users/alice/spaces/travel-bot/turns/"
    made = alice.post(
        url, {"user_input": "<b>Lisbon</b> in June", "agent_response": "Lovely!", "meta": {"id": 7}}, format="json"
    )
    assert made.status_code == 201
    assert made.data["user_input"] == "<b>Lisbon</b> in June" and made.data["meta"] == {"id": 7}
    listed = alice.get(url).data
    assert listed["count"] == 1 and listed["results"][0]["seq"] == 1
    assert alice.get("/api/v1/users/alice/spaces/travel-bot/").data["counts"]["short_term_pages"] == 1


def test_chat_answers_from_memory_and_stores_the_exchange(filled, alice, fake_llm):
    fake_llm.responder = lambda request: (
        reply("Your cat is Milo.") if "response_format" not in request else nothing_extracted()
    )
    answer = alice.post(SPACE.format(user="alice") + "chat/", {"query": "What is my cat called?"}, format="json")
    assert answer.status_code == 200
    assert answer.data["response"] == "Your cat is Milo."
    assert answer.data["page"]["user_input"] == "What is my cat called?"
    assert any("Milo" in item["text"] for item in answer.data["retrieval"]["user_knowledge"])
    prompt = [r for r in fake_llm.requests if "response_format" not in r][-1]
    assert "Milo" in str(prompt["messages"])


def test_a_reply_that_degenerates_twice_answers_honestly_and_keeps_only_the_users_words(filled, alice, fake_llm):
    loops = iter([reply("Milo Milo Milo Milo " * 50), reply("I am a cat, I am a cat, I am a cat, I am a cat")])
    fake_llm.responder = lambda request: next(loops) if "response_format" not in request else nothing_extracted()
    answer = alice.post(SPACE.format(user="alice") + "chat/", {"query": "What is my cat called?"}, format="json")
    assert answer.status_code == 200 and answer.data["reply_withheld"] is True
    assert "couldn't put together a proper answer" in answer.data["response"]
    turn = alice.get(SPACE.format(user="alice") + f"turns/{answer.data['page']['id']}/").data
    assert (turn["user_input"], turn["agent_response"], turn["reply_withheld"]) == ("What is my cat called?", "", True)
    # what the person was told is what the turn says it was told, whenever it is read again (not memory)
    assert turn["withheld_reply"] == answer.data["response"] == answer.data["page"]["withheld_reply"]
    listed = alice.get(SPACE.format(user="alice") + "turns/").data["results"]
    assert [t["withheld_reply"] for t in listed if t["reply_withheld"]] == [answer.data["response"]]
    assert all(t["withheld_reply"] is None for t in listed if not t["reply_withheld"])


def test_a_failing_llm_gets_a_clear_error_and_stores_nothing(filled, alice, fake_llm):
    fake_llm.responder = lambda request: status(500)
    pages = Page.objects.count()
    answer = alice.post(SPACE.format(user="alice") + "chat/", {"query": "Hello?"}, format="json")
    assert answer.status_code == 503 and "unavailable" in answer.data["detail"]
    assert Page.objects.count() == pages


def test_one_turn_is_read_by_its_id_in_its_own_space_only(filled, alice):
    base = SPACE.format(user="alice") + "turns/"
    first = Page.objects.filter(space__user__external_id="alice").order_by("seq").first()
    turn = alice.get(base + f"{first.pk}/")
    assert turn.status_code == 200
    assert (turn.data["seq"], turn.data["user_input"], turn.data["tier"]) == (first.seq, first.user_input, first.tier)
    bobs = Page.objects.filter(space__user__external_id="bob").first().pk
    assert alice.get(base + f"{bobs}/").status_code == 404  # bob's turn under alice's own URL
    assert alice.get(base + f"{2**63}/").status_code == 404


def test_retrieve_gives_scored_items_with_provenance(filled, alice):
    found = alice.post(
        SPACE.format(user="alice") + "retrieve/", {"query": "Milo the cat", "top_pages": 2}, format="json"
    )
    assert found.status_code == 200
    matched = [page for page in found.data["pages"] if page["provenance"]["why"] == "matches the question"]
    assert 0 < len(matched) <= 2  # and pages ranked next fill the room left
    fact = found.data["user_knowledge"][0]
    assert "Milo" in fact["text"] and fact["provenance"]["source_page_ids"]
    sources = Page.objects.filter(pk__in=fact["provenance"]["source_page_ids"]).order_by("seq")
    assert fact["provenance"]["source_pages"] == [{"page_id": page.pk, "seq": page.seq} for page in sources]
    assert found.data["profile"][0]["text"] == "occupation: nurse"


def _memory_state(space) -> tuple:
    """What a read-only look must leave as it was: pages, heat and visits, hits, heat events."""
    return (
        Page.objects.filter(space=space).count(),
        list(MidTermSession.objects.filter(space=space).order_by("pk").values_list("heat", "n_visit")),
        list(LongTermEntry.objects.filter(space=space).order_by("pk").values_list("hits", "value")),
        HeatEvent.objects.filter(session__space=space).count(),
    )


def test_inspect_shows_what_a_chat_turn_would_use_and_send_and_changes_nothing(filled, alice, fake_llm):
    calls, before = len(fake_llm.requests), _memory_state(filled)
    url = SPACE.format(user="alice") + "inspect/"
    seen = alice.post(url, {"query": "What is my cat called?"}, format="json")
    assert seen.status_code == 200
    retrieval, messages, parts = seen.data["retrieval"], seen.data["messages"], seen.data["parts"]
    assert {"match", "chain", "dense", "bm25"} <= set(retrieval["pages"][0]["scores"])
    assert "Milo" in retrieval["user_knowledge"][0]["text"]
    # The prompt as it would be sent: the system message is its sections, the last message the query.
    assert messages[-1] == {"role": "user", "content": "What is my cat called?"}
    system = [p["text"] for p in parts if p["role"] == "system"]
    assert "\n\n".join(system) == messages[0]["content"] and "Milo" in messages[0]["content"]
    assert [p["name"] for p in parts][-1] == "the message"
    assert seen.data["prompt_tokens"] == sum(p["tokens"] for p in parts) > 0
    assert seen.data["compact"] is False  # the fake server is not a weak model
    assert _memory_state(filled) == before and len(fake_llm.requests) == calls  # nothing stored, heated or asked


def test_inspect_under_a_small_budget_lists_what_was_cut(filled, alice):
    url = SPACE.format(user="alice") + "inspect/"
    full = alice.post(url, {"query": "cat"}, format="json").data["retrieval"]
    small = alice.post(url, {"query": "cat", "token_budget": 40}, format="json").data["retrieval"]
    sections = ("short_term", "profile", "pages", "user_knowledge", "assistant_knowledge")
    kept = {(i["kind"], i["id"]) for name in sections for i in small[name]}
    cut = {(i["kind"], i["id"]) for i in small["cut"]}
    assert small["tokens_used"] <= 40 and small["dropped"] == len(small["cut"]) > 0
    assert not kept & cut
    assert kept | cut == {(i["kind"], i["id"]) for name in sections for i in full[name]}
    assert alice.post(url, {"query": "   "}, format="json").status_code == 400


def test_the_owner_reads_the_heat_timeline_of_their_sessions(filled, alice):
    alice.post(SPACE.format(user="alice") + "retrieve/", {"query": "Milo the cat"}, format="json")  # a visit
    url = SPACE.format(user="alice") + "heat/"
    points = alice.get(url, {"page_size": 500}).data["results"]
    rows = HeatEvent.objects.filter(space=filled).order_by("at", "pk")
    assert [(p["session"], p["cause"], p["heat"]) for p in points] == [(e.session_id, e.cause, e.heat) for e in rows]
    assert {"created", "retrieved"} <= {p["cause"] for p in points}
    one = points[-1]["session"]
    assert {p["session"] for p in alice.get(url, {"session": one}).data["results"]} == {one}
    assert {p["cause"] for p in alice.get(url, {"cause": "retrieved"}).data["results"]} == {"retrieved"}
    for bad in ({"session": "x"}, {"session": "-1"}, {"cause": "burnt"}):
        assert alice.get(url, bad).status_code == 400


def test_an_edit_by_the_signed_in_owner_is_an_owner_edit_and_a_tokens_is_the_apis(filled, alice, django_user_model):
    account = django_user_model.objects.create_user("ann", password="pw-ann-12345")
    MemoryUser.objects.filter(external_id="alice").update(owner=account)
    owner = APIClient()
    owner.force_login(account)
    url = SPACE.format(user="alice") + f"profile/{entry_of('alice', 'profile').pk}/"
    assert owner.patch(url, {"value": "midwife"}, format="json").status_code == 200
    assert alice.patch(url, {"value": "surgeon"}, format="json").status_code == 200
    versions = EntryVersion.objects.filter(entry=entry_of("alice", "profile")).order_by("pk")
    (owner_cause, owner_actor), (token_cause, token_actor) = versions.values_list("cause", "actor")[1:]
    assert (owner_cause, owner_actor) == ("owner", "ann")
    assert token_cause == "api" and token_actor.startswith("api token ")


def test_profile_edit_is_recorded_in_the_history_and_delete_keeps_it(filled, alice):
    base = SPACE.format(user="alice") + "profile/"
    assert alice.get(base).data["profile"] == {"occupation": "nurse"}
    entry_id = entry_of("alice", "profile").pk
    edited = alice.patch(base + f"{entry_id}/", {"value": "surgeon"}, format="json")
    assert edited.status_code == 200 and edited.data["value"] == "surgeon"
    history = alice.get(base + f"{entry_id}/history/").data["results"]
    assert [(v["before"], v["after"], v["cause"]) for v in history] == [
        (None, "nurse", "consolidation"),
        ("nurse", "surgeon", "api"),
    ]
    assert history[0]["source_page_ids"] and history[1]["actor"].startswith("api token mos_")
    assert alice.delete(base + f"{entry_id}/").status_code == 200
    assert alice.get(base).data["profile"] == {}
    assert alice.get(base + f"{entry_id}/history/").data["results"][-1]["status_after"] == "deleted"
    added = alice.post(base, {"key": "hobby", "value": "climbing"}, format="json")
    assert added.status_code == 201 and alice.get(base).data["profile"] == {"hobby": "climbing"}


def test_knowledge_changes_are_seen_by_retrieval_at_once(filled, alice):
    base = SPACE.format(user="alice") + "knowledge/"
    made = alice.post(
        base, {"kind": "assistant_knowledge", "value": "The assistant recommends oat milk"}, format="json"
    )
    assert made.status_code == 201
    assert [e["value"] for e in alice.get(base, {"kind": "assistant_knowledge"}).data["results"]] == [
        "The assistant recommends oat milk"
    ]
    fact = entry_of("alice", "user_knowledge")
    alice.patch(base + f"{fact.pk}/", {"value": "The user has a parrot named Kiwi"}, format="json")
    found = alice.post(
        SPACE.format(user="alice") + "retrieve/", {"query": "parrot Kiwi", "count_hits": False}, format="json"
    )
    assert found.data["user_knowledge"][0]["text"] == "The user has a parrot named Kiwi"
    assert alice.delete(base + f"{fact.pk}/").status_code == 200
    found = alice.post(
        SPACE.format(user="alice") + "retrieve/", {"query": "parrot Kiwi", "count_hits": False}, format="json"
    )
    assert all("Kiwi" not in item["text"] for item in found.data["user_knowledge"])
    assert [e["status"] for e in alice.get(base, {"status": "all", "kind": "user_knowledge"}).data["results"]] == [
        "deleted"
    ]


def test_sessions_are_listed_hottest_first(filled, alice):
    sessions = alice.get(SPACE.format(user="alice") + "sessions/").data["results"]
    assert sessions and [s["heat"] for s in sessions] == sorted((s["heat"] for s in sessions), reverse=True)


def test_space_parameters_can_be_changed_and_are_checked(filled, alice):
    url = SPACE.format(user="alice")
    assert (
        alice.patch(url, {"heat_alpha": 2.5, "stm_capacity": 4}, format="json").data["parameters"]["heat_alpha"] == 2.5
    )
    bad = alice.patch(url, {"stm_capacity": 0, "eviction_policy": "random"}, format="json")
    assert bad.status_code == 400 and {"stm_capacity", "eviction_policy"} & set(bad.data)
    assert MemorySpace.objects.get(user__external_id="alice").stm_capacity == 4


def test_each_parameter_change_is_recorded_with_who_made_it_and_listed_oldest_first(filled, alice, bob):
    url = SPACE.format(user="alice")
    alice.patch(url, {"heat_threshold": 3.0, "stm_capacity": 1}, format="json")  # stm_capacity unchanged
    alice.patch(url, {"heat_threshold": 2.0}, format="json")
    alice.patch(url, {"stm_capacity": 0}, format="json")  # refused: nothing recorded
    history = alice.get(url + "parameters/history/").data
    changes = [(c["name"], c["before"], c["after"]) for c in history["results"]]
    assert changes == [("heat_threshold", 1.5, 3.0), ("heat_threshold", 3.0, 2.0)]
    assert all(c["actor"].startswith("api token ") for c in history["results"])
    assert alice.get(url + "parameters/history/?name=stm_capacity").data["count"] == 0
    assert alice.get(url + "parameters/history/?name=nonsense").status_code == 400
    assert bob.get(url + "parameters/history/").status_code == 404  # not bob's


def test_export_holds_every_tier_with_history(filled, alice):
    exported = alice.get("/api/v1/users/alice/export/").data
    assert exported["format"] == "memoryos-export-1" and exported["user"]["id"] == "alice"
    space = exported["spaces"][0]
    assert {p["user_input"] for p in space["pages"]} == {u for u, _ in CAT_TALK}
    assert space["sessions"][0]["heat_timeline"]
    assert any(e["history"] and e["source_page_ids"] for e in space["entries"])
    assert "embedding" not in str(space["pages"][0])


def test_deleting_a_users_memory_removes_all_of_it_and_nothing_of_others(filled, alice, bob, settings):
    space_id = filled.pk
    folder = settings.MEMORYOS["INDEX_DIR"] / f"space-{space_id}"
    alice.post(SPACE.format(user="alice") + "retrieve/", {"query": "cat"}, format="json")  # index files exist
    assert folder.exists()
    before = bobs_memory()
    assert alice.delete("/api/v1/users/alice/").status_code == 204
    assert not MemoryUser.objects.filter(external_id="alice").exists()
    assert not MemorySpace.objects.filter(pk=space_id).exists()
    assert not Page.objects.filter(space_id=space_id).exists()
    assert not LongTermEntry.objects.filter(space_id=space_id).exists()
    assert not folder.exists()
    assert bobs_memory() == before
    found = bob.post(SPACE.format(user="bob") + "retrieve/", {"query": "dog", "count_hits": False}, format="json")
    assert found.data["user_knowledge"][0]["text"] == "The user has a dog named Rex"  # bob's memory answers
    assert alice.get("/api/v1/users/alice/").status_code == 401  # its token went with it


# --- Bad input ---------------------------------------------------------------------------------------


def test_missing_fields_get_400_with_field_messages(memory, alice):
    bad = alice.post(SPACE.format(user="alice") + "turns/", {"user_input": "hi"}, format="json")
    assert bad.status_code == 400 and "agent_response" in bad.data
    assert alice.post(SPACE.format(user="alice") + "profile/", {}, format="json").data.keys() == {"key", "value"}


def test_an_oversized_turn_or_body_gets_413_and_stores_nothing(memory, alice, settings):
    url = SPACE.format(user="alice") + "turns/"
    long_text = "x" * (settings.MEMORYOS["MAX_TURN_CHARS"] + 1)
    too_long = alice.post(url, {"user_input": long_text, "agent_response": "ok"}, format="json")
    assert too_long.status_code == 413 and "limit" in too_long.data["detail"]
    settings.MEMORYOS = {**settings.MEMORYOS, "API_MAX_BODY_BYTES": 1000}
    too_big = alice.post(url, {"user_input": "y" * 2000, "agent_response": "ok"}, format="json")
    assert too_big.status_code == 413
    assert not Page.objects.exists()


def test_an_empty_turn_or_query_gets_400(memory, alice, fake_llm):
    fake_llm.responder = nothing_extracted
    base = SPACE.format(user="alice")
    assert alice.post(base + "turns/", {"user_input": "", "agent_response": ""}, format="json").status_code == 400
    alice.post(base + "turns/", {"user_input": "hi", "agent_response": "hello"}, format="json")
    assert alice.post(base + "retrieve/", {"query": "   "}, format="json").status_code == 400
    assert alice.post(base + "chat/", {"query": ""}, format="json").status_code == 400


def test_broken_unicode_gets_400_and_html_is_kept_as_text(memory, alice, fake_llm):
    fake_llm.responder = nothing_extracted
    url = SPACE.format(user="alice") + "turns/"
    broken = alice.generic(
        "POST", url, b'{"user_input": "bad \\ud800 surrogate", "agent_response": "x"}', content_type="application/json"
    )
    assert broken.status_code == 400
    raw = alice.generic(
        "POST", url, b'{"user_input": "\xff\xfe", "agent_response": "x"}', content_type="application/json"
    )
    assert raw.status_code == 400
    html = alice.post(url, {"user_input": "<script>alert(1)</script>", "agent_response": "ok"}, format="json")
    assert html.status_code == 201 and Page.objects.get().user_input == "<script>alert(1)</script>"


def test_too_many_requests_get_429_with_retry_after(memory, alice, settings):
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {"api": "3/min", "chat": "1/min"}}
    from rest_framework.throttling import SimpleRateThrottle

    rates = SimpleRateThrottle.THROTTLE_RATES
    SimpleRateThrottle.THROTTLE_RATES = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    try:
        codes = [alice.get("/api/v1/users/alice/").status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429]
        limited = alice.get("/api/v1/users/alice/")
        assert limited.status_code == 429 and int(limited["Retry-After"]) > 0
    finally:
        SimpleRateThrottle.THROTTLE_RATES = rates


def test_lists_are_paginated(memory, alice, fake_llm):
    fake_llm.responder = nothing_extracted
    add_turns(memory, [(f"turn {i}", "ok") for i in range(7)])
    url = SPACE.format(user="alice") + "turns/"
    first = alice.get(url, {"page_size": 3}).data
    assert first["count"] == 7 and len(first["results"]) == 3 and first["next"]
    last = alice.get(url, {"page_size": 3, "page": 3}).data
    assert [p["user_input"] for p in last["results"]] == ["turn 6"]
    assert alice.get(url, {"page": 9}).status_code == 404
    assert alice.get(url, {"tier": "nonsense"}).status_code == 400


def test_the_schema_and_its_docs_page_are_served_without_a_cdn(db):
    client = APIClient()
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert schema.status_code == 200
    assert "/api/v1/users/{user_id}/spaces/{assistant_id}/chat/" in schema.json()["paths"]
    docs = client.get("/api/docs/")
    assert docs.status_code == 200
    page = docs.content.decode()
    assert "swagger-ui" in page and "cdn" not in page.lower()


def test_the_api_token_command_makes_lists_and_revokes_tokens(memory, capsys):
    from django.core.management import call_command

    call_command("api_token", "create", "dora", "--name", "notebook")
    secret = capsys.readouterr().out.strip()
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
    assert client.get("/api/v1/users/dora/").status_code == 200
    call_command("api_token", "list", "dora")
    listed = capsys.readouterr().out
    assert secret[:12] in listed and "notebook" in listed and "active" in listed
    assert secret not in listed
    call_command("api_token", "revoke", secret[:12])
    assert client.get("/api/v1/users/dora/").status_code == 401


def test_deleting_one_space_keeps_the_users_other_spaces(filled, alice, fake_llm):
    fake_llm.responder = nothing_extracted
    other = "/api/v1/users/alice/spaces/travel-bot/"
    alice.post(other + "turns/", {"user_input": "Lisbon in June", "agent_response": "Lovely"}, format="json")
    assert alice.delete(SPACE.format(user="alice")).status_code == 204
    assert alice.get(SPACE.format(user="alice")).status_code == 404
    assert alice.get(other + "turns/").data["count"] == 1
    assert alice.get("/api/v1/users/alice/").data["assistants"] == ["travel-bot"]


@pytest.mark.parametrize(
    ("path", "field", "value"),
    [
        ("sessions/", "status", "warm"),
        ("heat/", "cause", "sunshine"),
        ("heat/", "session", "twelve"),
        ("parameters/history/", "name", "warmth"),
        ("runs/", "status", "sleeping"),
        ("knowledge/", "status", "gone"),
        ("turns/", "tier", "attic"),
    ],
)
def test_a_list_refuses_a_filter_it_does_not_know_and_says_which_it_does(alice, alice_space, path, field, value):
    base = SPACE.format(user="alice")
    assert alice.get(base + path).status_code == 200  # the list itself answers
    refused = alice.get(base + path, {field: value})
    assert refused.status_code == 400 and refused.data["detail"].startswith(f"{field} must be")
