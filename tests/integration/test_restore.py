"""The export round-trip: a space's export restored into an empty space (or an experiment) gives the same
turns, tiers, sessions, heat timelines, entries and history; a bad export is refused whole."""

import copy
import json
from pathlib import Path

import pytest
from django.conf import settings
from django.test import override_settings

from memory_engine.errors import InputTooLarge, InvalidParameter, MemoryInputError
from memory_engine.models import (
    BackgroundJob,
    EntryVersion,
    HeatEvent,
    LongTermEntry,
    MemorySpace,
    MidTermSession,
    Page,
)
from memory_engine.services import curation
from memory_engine.services.background import background_run, background_stalled, restore_create
from memory_engine.services.comparison import ranked_items
from memory_engine.services.export import space_export, user_export
from memory_engine.services.lab import experiment_create
from memory_engine.services.restore import space_restore
from memory_engine.services.spaces import space_get
from tests.api_helpers import SPACE, client_for
from tests.memory_helpers import CAT_TALK, COOKING_TALK, add_turns, days_ago, extraction, nothing_extracted


@pytest.fixture
def lived(memory, alice_space, fake_llm):
    """alice's space after a chat, its consolidation and promotions, retrievals that heated it, an edit,
    a deletion and a fact the owner added: every kind of row and history an export holds."""
    alice_space.stm_capacity = 2
    alice_space.heat_threshold = 3.5
    alice_space.lexical_weight = 0.7
    alice_space.save()
    fake_llm.script(
        extraction(
            profile=[("occupation", "nurse", 1)],
            user_facts=[("cat", "The user has a cat named Milo", 1), ("coffee", "Milo knocks coffee over", 3)],
        )
    )
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK, start=days_ago(6), step_minutes=3)
    memory.add_memory(
        user_id="alice", assistant_id="helper", user_input="Hi", agent_response="Hello!", meta={"dia_ids": ["D1:1"]}
    )
    for question in ("What is my cat called?", "Where does Milo sleep?"):
        memory.retrieve(user_id="alice", assistant_id="helper", query=question)
    add_turns(memory, COOKING_TALK, start=days_ago(1))
    profile = LongTermEntry.objects.get(space=alice_space, key="occupation")
    curation.entry_edit(entry=profile, value="paediatric nurse", actor="api account ann")
    fact = LongTermEntry.objects.get(space=alice_space, value="Milo knocks coffee over")
    curation.entry_delete(entry=fact, actor="api account ann")
    curation.knowledge_entry_add(
        space=alice_space, kind="user_knowledge", topic="food", fact="The user likes spicy food", actor="library"
    )
    # Replies written here by the bundled model, and one quoting the person: kept as said, never memory.
    # (The newest two turns: in short-term memory, so no vector or index holds their words yet.)
    newest, before = Page.objects.filter(space=alice_space).order_by("-seq")[:2]
    Page.objects.filter(pk=newest.pk).update(reply_source=Page.ReplySource.WEAK_MODEL)
    Page.objects.filter(pk=before.pk).update(reply_source=Page.ReplySource.QUOTED)
    alice_space.refresh_from_db()
    return alice_space


def canonical(document: dict) -> dict:
    """An export with its ids replaced by what they name (a page by its seq, a session or an entry by its
    place), so two exports of the same memory compare equal whatever ids the rows got."""
    doc = copy.deepcopy(document)
    doc.pop("created_at", None)
    seq_of = {p["id"]: p["seq"] for p in doc["pages"]}
    session_of = {s["id"]: n for n, s in enumerate(doc["sessions"])}
    entry_of = {e["id"]: n for n, e in enumerate(doc["entries"])}
    for page in doc["pages"]:
        page.pop("id")
        page["session_id"] = session_of.get(page["session_id"])
        for mark in page.get("marks", []):
            mark["entry_id"] = entry_of[mark["entry_id"]]
    for session in doc["sessions"]:
        session.pop("id")
    for entry in doc["entries"]:
        entry.pop("id")
        entry["superseded_by"] = entry_of.get(entry["superseded_by"])
        entry["source_page_ids"] = [seq_of[p] for p in entry["source_page_ids"]]
        for version in entry["history"]:
            version.pop("id")
            version["source_page_ids"] = [seq_of[p] for p in version["source_page_ids"]]
            version["with_entry"] = entry_of.get(version.get("with_entry"))
    return doc


def test_a_restored_export_is_the_same_memory_and_retrieves_the_same(lived, bob_space):
    exported = space_export(space=lived)
    sources = [p["reply_source"] for p in exported["pages"]]
    assert sources[-2:] == [Page.ReplySource.QUOTED, Page.ReplySource.WEAK_MODEL]
    assert exported["entries"] and exported["sessions"] and any(e["status"] == "deleted" for e in exported["entries"])
    assert sum(len(s["heat_timeline"]) for s in exported["sessions"]) > 3
    document = json.loads(json.dumps(exported))  # as it travels
    counts = space_restore(space=bob_space, document=document)
    assert counts["pages"] == Page.objects.filter(space=lived).count() == Page.objects.filter(space=bob_space).count()
    assert counts["versions"] == EntryVersion.objects.filter(entry__space=lived).count()
    again = space_export(space=bob_space)
    assert canonical(again) == canonical(exported)
    bob_space.refresh_from_db()
    assert (bob_space.lexical_weight, bob_space.last_seq) == (0.7, lived.last_seq)
    for question in ("What is my cat called?", "Which curry could I cook?", "spicy food"):
        here = [(i.kind, i.text, round(i.score, 6)) for i in ranked_items(lived, question, 10)]
        there = [(i.kind, i.text, round(i.score, 6)) for i in ranked_items(bob_space, question, 10)]
        assert here == there, question


def test_a_users_export_is_restored_by_its_space_for_the_assistant(lived, bob_space):
    whole = json.loads(json.dumps(user_export(user=lived.user)))
    space_restore(space=bob_space, document=whole)
    assert canonical(space_export(space=bob_space)) == canonical(space_export(space=lived))


def test_an_experiment_can_be_an_export_restored_and_compared(lived, bob_space):
    document = json.loads(json.dumps(space_export(space=lived)))
    experiment = experiment_create(
        source=bob_space, name="alice's memory", parameters={"top_pages": 3}, export=document
    )
    assert experiment.replay is None and experiment.space.top_pages == 3
    assert experiment.restore.status == "succeeded"  # a worker's job, here inline
    experiment.space.refresh_from_db()
    assert experiment.space.lexical_weight == 0.7  # the export's own parameters, but for those given
    assert Page.objects.filter(space=experiment.space).count() == Page.objects.filter(space=lived).count()
    assert not Page.objects.filter(space=bob_space).exists()  # the source is never written to


def break_it(document: dict, change) -> dict:
    broken = copy.deepcopy(document)
    change(broken)
    return broken


BROKEN = [
    (lambda d: d.pop("pages"), "source_page_ids: names"),  # entries made of turns it does not hold
    (lambda d: d.update(pages={}), "pages: Input should be a valid list"),
    (lambda d: d["pages"][0].update(seq=0), r"pages\[0\].seq: Input should be greater than or equal to 1"),
    (lambda d: d["pages"][1].update(seq=d["pages"][0]["seq"]), "increasing seq"),
    (lambda d: d["pages"][0].update(id=d["pages"][1]["id"]), "comes twice"),
    (lambda d: d["pages"][0].update(tier="long"), "pages\\[0\\].tier: Input should be 'short', 'mid' or 'archived'"),
    (lambda d: d["pages"][0].update(reply_source="the user"), "reply_source: Input should be"),
    (lambda d: d["pages"][0].update(session_id=10**9), "session_id: names"),
    (lambda d: d["pages"][0].update(session_id=[1]), "session_id: Input should be a valid integer"),
    (lambda d: d["pages"][0].update(user_input="x\x00"), "NUL"),
    (lambda d: d["pages"][0].update(timestamp="yesterday"), "not an ISO 8601"),
    (lambda d: d["pages"][0].update(timestamp="9999-12-31T23:59:59-14:00"), "between the years"),
    (lambda d: d["sessions"][0]["heat_timeline"][0].update(at="0001-01-01T00:00:00+14:00"), "between the years"),
    (lambda d: d["pages"][0].update(meta={"a": json.loads("[" * 30 + "]" * 30)}), "nested more than"),
    (lambda d: d["sessions"][0].update(heat=float("nan")), "heat: Input should be a finite number"),
    (lambda d: d["sessions"][0]["heat_timeline"][0].update(cause="boiled"), r"timeline\[0\].cause: Input should be"),
    (lambda d: d["entries"][0].update(source_page_ids=[10**9]), "source_page_ids: names"),
    (lambda d: d["entries"][0].update(superseded_by={"id": 1}), "superseded_by: Input should be a valid integer"),
    (lambda d: d["entries"][0]["history"][0].update(cause="magic"), r"history\[0\].cause: Input should be"),
    (lambda d: d["entries"][0].update(value=""), "the value is empty"),
    (lambda d: d.update(parameters={"heat_alpha": "hot"}), "heat_alpha must be a number"),
    (lambda d: d.update(format="memoryos-export-0", spaces=[]), "format must be"),
]


@pytest.mark.parametrize(("change", "says"), BROKEN)
def test_a_bad_export_is_refused_whole_and_stores_nothing(lived, bob_space, change, says):
    document = break_it(json.loads(json.dumps(space_export(space=lived))), change)
    error = InvalidParameter if "heat_alpha" in says else MemoryInputError
    with pytest.raises(error, match=says):
        space_restore(space=bob_space, document=document)
    assert not Page.objects.filter(space=bob_space).exists()
    assert not MidTermSession.objects.filter(space=bob_space).exists()
    assert not HeatEvent.objects.filter(space=bob_space).exists()
    assert not LongTermEntry.objects.filter(space=bob_space).exists()


def test_only_an_empty_space_takes_a_restore_and_sizes_are_bounded(lived, bob_space):
    document = json.loads(json.dumps(space_export(space=lived)))
    with pytest.raises(MemoryInputError, match="into an empty space"):
        space_restore(space=lived, document=document)
    huge = break_it(document, lambda d: d.update(pages=d["pages"] * 2000))
    with pytest.raises(InputTooLarge, match="at most 5000"):
        space_restore(space=bob_space, document=huge)


def test_the_rest_door_restores_into_a_new_space_and_refuses_alike(lived, charlie_client):
    document = json.loads(json.dumps(space_export(space=lived)))
    # Over the API's usual limit and Django's own for a request body (2.5 MiB), within an export's (8 MiB).
    padded = {"export": document, "pad": "x" * 3_000_000}
    assert len(json.dumps(document)) < 256 * 1024 and 2.5 * 2**20 < len(json.dumps(padded)) < 8 * 2**20
    url = SPACE.format(user="charlie").replace("helper", "notes") + "restore/"
    made = charlie_client.post(url, padded, format="json")
    assert made.status_code == 202, made.data  # a worker restores (here inline: over on return)
    assert (made.data["kind"], made.data["status"]) == ("restore", "succeeded")
    polled = charlie_client.get(url.replace("restore/", f"jobs/{made.data['id']}/"))
    assert polled.status_code == 200 and polled.data == made.data
    assert made.data["result"]["pages"] == Page.objects.filter(space=lived).count()
    assert BackgroundJob.objects.get(pk=made.data["id"]).request == {}  # the export is not kept
    restored = MemorySpace.objects.get(user__external_id="charlie", assistant__external_id="notes")
    here, there = canonical(space_export(space=restored)), canonical(space_export(space=lived))
    assert here.pop("assistant")["id"] == "notes" and there.pop("assistant")["id"] == "helper"
    assert here == there
    again = charlie_client.post(url, {"export": document}, format="json")
    assert again.status_code == 400 and "empty space" in again.data["detail"]
    other = SPACE.format(user="charlie") + "restore/"
    bad = break_it(document, lambda d: d["pages"][0].update(tier="long"))
    refused = charlie_client.post(other, {"export": bad}, format="json")
    assert refused.status_code == 400 and "pages[0].tier" in refused.data["detail"]
    assert charlie_client.post(other, {"export": []}, format="json").status_code == 400
    with override_settings(MEMORYOS={**settings.MEMORYOS, "API_MAX_EXPORT_BYTES": 1000}):
        assert charlie_client.post(other, {"export": document}, format="json").status_code == 413
    assert not Page.objects.filter(space__user__external_id="charlie", space__assistant__external_id="helper")
    assert client_for("bob").post(url, {"export": document}, format="json").status_code == 404
    assert client_for("bob").get(url.replace("restore/", f"jobs/{made.data['id']}/")).status_code == 404
    assert not BackgroundJob.objects.exclude(pk=made.data["id"]).exists()  # a refusal records no job


@pytest.fixture
def charlie_client(memory):
    return client_for("charlie")


def test_a_restore_keeps_what_it_checked_not_the_keys_an_export_may_carry_and_that_are_ignored(lived, charlie_client):
    """A key the export ignores is not stored with the job: a NUL in it made PostgreSQL refuse the job's row
    (a server error the schema fuzzer found); a user's export keeps only the space restored."""
    document = {**space_export(space=lived), "\u0000note": {"ke\u0000y": ["\u0000"]}}
    job = restore_create(space=space_get(user_id="charlie", assistant_id="helper"), document=document)
    kept = json.dumps(job.request)
    assert "note" not in kept and "\\u0000" not in kept and job.request["export"]["pages"]
    job.delete()
    url = SPACE.format(user="charlie").replace("helper", "notes") + "restore/"
    made = charlie_client.post(url, {"export": document}, format="json")
    assert made.status_code == 202 and made.data["status"] == "succeeded", made.data
    assert made.data["result"]["pages"] == Page.objects.filter(space=lived).count()


def test_a_restore_delivered_twice_or_left_by_a_dead_worker_is_done_once(lived, bob_space, memory):
    document = json.loads(json.dumps(space_export(space=lived)))
    job = restore_create(space=bob_space, document=document)
    background_run(job.pk)
    background_run(job.pk)  # the message delivered again
    job.refresh_from_db()
    assert (job.status, job.error, job.result["pages"]) == ("succeeded", "", Page.objects.filter(space=lived).count())
    assert Page.objects.filter(space=bob_space).count() == job.result["pages"]

    charlie = memory.space(user_id="charlie", assistant_id="helper")
    left = restore_create(space=charlie, document=document)
    BackgroundJob.objects.filter(pk=left.pk).update(status="running", touched_at=days_ago(1))  # its worker died
    background_run(left.pk)  # a copy of the message meets it "running": not taken twice
    assert not Page.objects.filter(space=charlie).exists()
    assert background_stalled() == [left.pk]  # the sweep queues it again and sends it
    assert background_stalled() == []  # once per period
    background_run(left.pk)
    left.refresh_from_db()
    assert left.status == "succeeded" and Page.objects.filter(space=charlie).count() == job.result["pages"]


def test_a_restore_on_a_worker_goes_a_part_at_a_time_and_stores_nothing_until_its_last(
    lived, bob_space, monkeypatch, django_capture_on_commit_callbacks
):
    """An 8 MB restore once held the only worker for 407 s. Each part embeds at least a batch, keeps what
    it made, and gives the worker back; the rows are stored in one transaction by the last."""
    from memory_engine.services import background

    monkeypatch.setattr(background, "EMBED_BATCH", 2)
    document = json.loads(json.dumps(space_export(space=lived)))
    job = restore_create(space=bob_space, document=document)
    parts, progress = 0, []
    while not background_run(job.pk, seconds=0):  # a part whose time is up at once still does a batch
        parts += 1
        job.refresh_from_db()
        assert job.status == "queued" and not Page.objects.filter(space=bob_space).exists()
        progress.append(job.result["done"])
        assert background.restore_vectors_path(job.pk).stat().st_size == job.result["done"] * 384 * 4
    job.refresh_from_db()
    assert progress == list(range(2, 2 * (parts + 1), 2)) and parts >= 3
    assert job.status == "succeeded" and job.result["pages"] == Page.objects.filter(space=lived).count()
    bob_space.refresh_from_db()
    assert canonical(space_export(space=bob_space)) == canonical(space_export(space=lived))
    assert not background.restore_vectors_path(job.pk).exists()
    for question in ("What is my cat called?", "spicy food"):  # the vectors made a part at a time are the same
        here = [(i.kind, i.text, round(i.score, 6)) for i in ranked_items(lived, question, 10)]
        assert here == [(i.kind, i.text, round(i.score, 6)) for i in ranked_items(bob_space, question, 10)]


# --- The export document, defined once (memory_engine/export_format.py) ------------------------------


def test_the_published_json_schema_is_current_and_describes_what_an_export_writes(lived):
    from django.core.management import call_command
    from jsonschema import Draft202012Validator

    call_command("export_schema", "--check")  # docs/export.schema.json is the module's schema
    published = json.loads((Path(__file__).parents[2] / "docs" / "export.schema.json").read_text())
    validator = Draft202012Validator(published)
    for document in (space_export(space=lived), user_export(user=lived.user)):
        assert not list(validator.iter_errors(json.loads(json.dumps(document))))
    broken = break_it(space_export(space=lived), lambda d: d["pages"][0].update(tier="long"))
    assert list(validator.iter_errors(broken))  # the schema refuses what the restore refuses


def test_the_openapi_document_gives_the_export_its_schema(db):
    from rest_framework.test import APIClient

    schema = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    space_path = schema["paths"]["/api/v1/users/{user_id}/spaces/{assistant_id}/export/"]["get"]
    user_path = schema["paths"]["/api/v1/users/{user_id}/export/"]["get"]
    for path, name in ((space_path, "SpaceExport"), (user_path, "UserExport")):
        assert path["responses"]["200"]["content"]["application/json"]["schema"] == {
            "$ref": f"#/components/schemas/{name}"
        }
    published = json.loads((Path(__file__).parents[2] / "docs" / "export.schema.json").read_text())
    for name in ("SpaceExport", "PageDoc", "SessionDoc", "EntryDoc", "HeatPoint", "VersionDoc"):
        assert (
            schema["components"]["schemas"][name]["properties"].keys() == published["$defs"][name]["properties"].keys()
        )
    restore = schema["components"]["schemas"]["RestoreInRequest"]["properties"]["export"]
    assert {"$ref": "#/components/schemas/SpaceExport"} in restore["anyOf"]
