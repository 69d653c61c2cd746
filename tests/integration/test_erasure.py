"""Erase (engine/erasure.py): words removed for good. After an erase the words are in no turn (as said or as
held now), no reply that quoted them, no entry or version, no summary or keywords, no waiting import, no
fork, no index file of any process, no free page of the SQLite file and no row of a PostgreSQL dump."""

import asyncio
import os
import subprocess
from pathlib import Path

import pytest
from django.db import connection

from memory_engine.engine.erasure import ERASED
from memory_engine.interfaces.memoryos import MemoryOS
from memory_engine.models import EntryVersion, ImportJob, LongTermEntry, MemoryUser, MidTermSession, Page
from memory_engine.services.imports import import_create
from memory_engine.services.lab import replay_turns
from memory_engine.services.tokens import token_create
from tests.api_helpers import SPACE, client_for
from tests.integration.test_mcp import http_session
from tests.memory_helpers import told_with_no_key
from tests.processes import mcp_http_server, wait_until

SECRET = "My bank pin-4471 is kept by my quokka, a zanzibarian one."
WORDS = ("quokka", "zanzibarian", "pin-4471")
TOLD = [
    ("Hi! I'm Maria Lindqvist.", "Hello Maria!"),
    (SECRET, "Noted."),
    ("I'm a radiology nurse and I have a cat named Milo.", "Lovely."),
    ("The weather has been lovely.", "Glad to hear it."),
]


def _weak_memory(alice_space, settings) -> MemoryOS:
    return told_with_no_key(alice_space, settings, TOLD)


def _rows_holding(words=WORDS) -> list[str]:
    """Every text the database holds for the memory, read back, that holds one of the words."""
    texts = []
    for page in Page.objects.all():
        texts += [f"page {page.seq}", page.user_input, page.agent_response, str(page.said), page.thread_summary]
        texts += [str(page.keywords), str(page.meta)]
    texts += [f"{s.summary} {s.keywords}" for s in MidTermSession.objects.all()]
    texts += [f"{e.key} {e.value}" for e in LongTermEntry.objects.all()]
    texts += [f"{v.before} {v.after}" for v in EntryVersion.objects.all()]
    texts += [str(job.turns) for job in ImportJob.objects.all()]
    return [text for text in texts if any(word in text.lower() for word in words)]


def _files_holding(folder: Path, words=WORDS) -> list[str]:
    """The files under `folder` that hold any of `words`. Another process may be removing the folder while
    it is read (the MCP server's prune): a file gone before it is read holds nothing."""
    found = []
    for parent, _, names in os.walk(folder):  # a folder gone while walked is passed over
        for name in names:
            try:
                held = (Path(parent) / name).read_bytes().lower()
            except FileNotFoundError:
                continue
            found += [f"{name}: {word}" for word in words if word.encode() in held]
    return found


@pytest.mark.django_db
def test_erasing_an_entry_takes_its_words_out_of_every_turn_reply_entry_summary_and_waiting_import(
    memory, alice_space, settings
):
    weak = _weak_memory(alice_space, settings)
    assert "quokka" in weak.get_response(user_id="alice", assistant_id="helper", query="Who keeps my bank pin?").text
    fact = LongTermEntry.objects.get(value__icontains="quokka")
    weak.delete_entry(user_id="alice", assistant_id="helper", entry_id=fact.pk)  # forgotten first: kept as said
    assert _rows_holding()
    import_create(space=alice_space, turns=[{"user_input": SECRET, "agent_response": "Ok."}], source="t")

    weak.erase_entry(user_id="alice", assistant_id="helper", entry_id=fact.pk)

    assert _rows_holding() == []
    assert not LongTermEntry.objects.filter(pk=fact.pk).exists()
    assert Page.objects.get(seq=2).user_input == ERASED and Page.objects.get(seq=2).said is None
    assert "Milo" in Page.objects.get(seq=3).user_input  # nothing else of the memory went
    answer = weak.get_response(user_id="alice", assistant_id="helper", query="Who keeps my bank pin?").text
    assert not any(word in answer.lower() for word in WORDS)


@pytest.mark.django_db
def test_erasing_one_sentence_or_a_whole_turn_over_rest_leaves_the_rest(memory, alice_space, settings):
    _weak_memory(alice_space, settings)
    alice = client_for("alice")
    turn = Page.objects.get(seq=3)
    url = SPACE.format(user="alice") + f"turns/{turn.pk}/erase/"
    refused = alice.post(url, {"sentence": "I never said this."}, format="json")
    assert refused.status_code == 400 and "sentence" in refused.data
    erased = alice.post(url, {"sentence": "I'm a radiology nurse and I have a cat named Milo."}, format="json")
    # A worker erases the words (here, inline: done on return); the job says how many turns changed.
    assert erased.status_code == 202 and erased.data["kind"] == "erase", erased.data
    job = alice.get(SPACE.format(user="alice") + f"jobs/{erased.data['id']}/").data
    assert job["status"] == "succeeded" and job["result"]["turns_changed"] >= 1, job
    assert _rows_holding(("radiology",)) == []
    assert Page.objects.get(seq=1).user_input == TOLD[0][0]

    whole = alice.post(SPACE.format(user="alice") + f"turns/{Page.objects.get(seq=2).pk}/erase/", {}, format="json")
    assert whole.status_code == 202
    assert _rows_holding() == [] and Page.objects.get(seq=2).user_input == ERASED
    other = client_for("bob").post(url, {}, format="json")
    assert other.status_code == 404  # another account's memory: not there


@pytest.mark.django_db
def test_a_fork_made_before_the_erase_loses_the_words_too(memory, alice_space, settings):
    weak = _weak_memory(alice_space, settings)
    weak.fork(user_id="alice", assistant_id="helper", name="before", parameters={"heat_threshold": 3})
    shadow_pages = Page.objects.exclude(space=alice_space)
    assert any("quokka" in p.user_input for p in shadow_pages) or any(
        "quokka" in t["user_input"] for job in ImportJob.objects.exclude(space=alice_space) for t in job.turns
    )
    weak.erase_entry(
        user_id="alice",
        assistant_id="helper",
        entry_id=LongTermEntry.objects.get(space=alice_space, value__icontains="quokka").pk,
    )
    assert _rows_holding() == []
    assert "quokka" not in str(replay_turns(alice_space))


@pytest.mark.django_db(transaction=True)
def test_erased_words_are_in_no_index_folder_of_any_process_nor_in_the_database_file_or_dump(
    memory, alice_space, server_env, settings, tmp_path
):
    weak = _weak_memory(alice_space, settings)
    for number in range(8):  # more turns that hold them: the pages reach the indexes
        weak.add_memory(user_id="alice", assistant_id="helper", user_input=f"{SECRET} ({number})", agent_response="Ok")
    weak.consolidate(user_id="alice", assistant_id="helper")
    _, secret = token_create(memory_user=MemoryUser.objects.get(external_id="alice"), name="mcp")
    env = {**server_env, "MEMORYOS_INDEX_PRUNE_SECONDS": "1"}
    mcp_indexes = Path(server_env["MEMORYOS_INDEX_DIR"])
    with mcp_http_server(env, tmp_path / "mcp.log") as url:

        async def search(session):
            return await session.call_tool("retrieve_memory", {"query": "Who keeps my bank pin?"})

        assert "quokka" in asyncio.run(http_session(url, secret, search)).content[0].text
        weak.retrieve(user_id="alice", assistant_id="helper", query="quokka pin", count_hits=False)
        assert _files_holding(mcp_indexes) and _files_holding(Path(settings.MEMORYOS["INDEX_DIR"]))

        fact = LongTermEntry.objects.get(value__icontains="quokka", status="active")
        answer = client_for("alice").post(SPACE.format(user="alice") + f"knowledge/{fact.pk}/erase/")
        assert answer.status_code == 200, answer.data
        wait_until(lambda: not _files_holding(mcp_indexes), timeout=120, what="the MCP process to prune")
        assert "quokka" not in asyncio.run(http_session(url, secret, search)).content[0].text
    assert _files_holding(Path(settings.MEMORYOS["INDEX_DIR"])) == []  # this process's own
    assert _rows_holding() == []
    if connection.vendor == "sqlite":
        database = Path(connection.settings_dict["NAME"])
        files = [path for path in database.parent.glob(database.name + "*") if path.is_file()]
        held = [f"{p.name}: {w}" for p in files for w in WORDS if w.encode() in p.read_bytes().lower()]
        assert held == [], held
    else:
        params = connection.get_connection_params()
        dump = subprocess.run(
            [
                "pg_dump",
                "-h",
                params.get("host") or "127.0.0.1",
                "-p",
                str(params.get("port") or 5432),
                "-U",
                params.get("user") or "postgres",
                "--data-only",
                params["dbname"],
            ],
            capture_output=True,
            check=True,
            timeout=300,
        ).stdout.lower()
        assert [w for w in WORDS if w.encode() in dump] == []


@pytest.mark.django_db
def test_an_admin_erases_selected_entries_for_good(memory, alice_space, settings, admin_client):
    _weak_memory(alice_space, settings)
    fact = LongTermEntry.objects.get(value__icontains="quokka")
    changelist = "/admin/memory_engine/longtermentry/"
    chosen = {"action": "erase_selected", "_selected_action": [fact.pk]}
    asked = admin_client.post(changelist, chosen).content.decode()
    assert "for good" in asked and "cannot be" in asked  # asked first: nothing erased yet
    assert LongTermEntry.objects.filter(pk=fact.pk).exists() and _rows_holding()
    done = admin_client.post(changelist, {**chosen, "post": "yes"}, follow=True)
    assert "Erased 1 entry" in done.content.decode()
    assert _rows_holding() == [] and not LongTermEntry.objects.filter(pk=fact.pk).exists()


@pytest.mark.django_db
def test_another_account_cannot_erase_and_erasing_shares_the_chat_rate(memory, alice_space, settings):
    from rest_framework.throttling import SimpleRateThrottle

    _weak_memory(alice_space, settings)
    fact = LongTermEntry.objects.get(value__icontains="quokka")
    url = SPACE.format(user="alice") + f"knowledge/{fact.pk}/erase/"
    assert client_for("bob").post(url).status_code == 404  # bob's token, alice's memory: not there
    assert LongTermEntry.objects.filter(pk=fact.pk).exists() and _rows_holding()
    rates = SimpleRateThrottle.THROTTLE_RATES
    SimpleRateThrottle.THROTTLE_RATES = {"api": "100/min", "chat": "1/min"}
    try:
        alice = client_for("alice")
        assert alice.post(url).status_code == 200
        turn = Page.objects.get(seq=1)
        limited = alice.post(SPACE.format(user="alice") + f"turns/{turn.pk}/erase/", {}, format="json")
        assert limited.status_code == 429 and Page.objects.get(seq=1).user_input == TOLD[0][0]
    finally:
        SimpleRateThrottle.THROTTLE_RATES = rates


@pytest.mark.django_db
def test_a_fragment_of_a_sentence_is_refused_and_nothing_is_erased(memory, alice_space, settings):
    """`{"sentence": "e"}` took the first "e" out of every turn of the space ("I liv in Berlin") and out of
    knowledge, for good. Only a whole sentence of the turn is erased; a fragment is a 400, nothing changed."""
    _weak_memory(alice_space, settings)
    alice = client_for("alice")
    before = list(Page.objects.order_by("seq").values_list("user_input", "agent_response"))
    entries = list(LongTermEntry.objects.order_by("pk").values_list("value", flat=True))
    url = SPACE.format(user="alice") + f"turns/{Page.objects.get(seq=3).pk}/erase/"
    for fragment in ("e", "radiology nurse", "I'm a radiology nurse and I have a cat named"):
        refused = alice.post(url, {"sentence": fragment}, format="json")
        assert refused.status_code == 400 and "whole sentence" in str(refused.data["sentence"]), refused.data
    assert alice.post(url, {"sentence_index": 7}, format="json").status_code == 400
    assert list(Page.objects.order_by("seq").values_list("user_input", "agent_response")) == before
    assert list(LongTermEntry.objects.order_by("pk").values_list("value", flat=True)) == entries


@pytest.mark.django_db
def test_a_dry_run_says_what_an_erasure_would_take_and_changes_nothing(memory, alice_space, settings):
    _weak_memory(alice_space, settings)
    alice = client_for("alice")
    turn = Page.objects.get(seq=2)
    url = SPACE.format(user="alice") + f"turns/{turn.pk}/erase/"
    preview = alice.post(url, {"dry_run": True}, format="json")
    assert preview.status_code == 200, preview.data
    assert [s["text"] for s in preview.data["sentences"]] == [SECRET, "Noted."]
    assert [(t["seq"], t["user_input"]) for t in preview.data["turns"]][0] == (2, ERASED)
    assert any("quokka" in e["value"] for e in preview.data["entries_deleted"]), preview.data
    assert _rows_holding() != []  # nothing changed
    # One sentence, by its index: the other stays, in this turn and wherever it is.
    narrowed = alice.post(url, {"dry_run": True, "sentence_index": 1}, format="json").data
    assert narrowed["erasing"] == ["Noted."] and narrowed["entries_deleted"] == []
    assert alice.post(url, {"sentence_index": 1}, format="json").status_code == 202
    assert Page.objects.get(seq=2).agent_response == "" and "quokka" in Page.objects.get(seq=2).user_input


@pytest.mark.django_db
def test_erasing_an_entry_takes_its_words_out_of_the_admins_log(memory, alice_space, settings, admin_client):
    """After a staff edit in the admin and the owner's erase, the admin's log still named the words
    ("user_knowledge alarm: The alarm code is ..."), in every database dump."""
    _weak_memory(alice_space, settings)
    fact = LongTermEntry.objects.get(value__icontains="quokka")
    page = admin_client.get(f"/admin/memory_engine/longtermentry/{fact.pk}/change/")
    assert page.status_code == 200
    form = {"value": fact.value + " (checked by staff)"}
    for inline in page.context["inline_admin_formsets"]:  # the versions' formset, as the page sends it
        formset = inline.formset
        form.update({formset.management_form.add_prefix(k): v for k, v in formset.management_form.initial.items()})
        for row in formset.forms:
            form.update({row.add_prefix(k): v for k, v in row.initial.items() if v is not None})
            form[row.add_prefix("id")] = row.instance.pk
    edited = admin_client.post(f"/admin/memory_engine/longtermentry/{fact.pk}/change/", form, follow=True)
    assert edited.status_code == 200 and "was changed successfully" in edited.content.decode()
    from django.contrib.admin.models import LogEntry

    assert any("quokka" in (line.object_repr + line.change_message).lower() for line in LogEntry.objects.all())
    erased = client_for("alice").post(SPACE.format(user="alice") + f"knowledge/{fact.pk}/erase/")
    assert erased.status_code == 200
    assert not [line for line in LogEntry.objects.all() if "quokka" in (line.object_repr + line.change_message).lower()]


@pytest.mark.django_db
def test_an_entry_erased_while_another_request_changes_it_is_a_conflict_not_a_server_error(
    memory, alice_space, settings
):
    """Erase at the same moment as an edit, delete or revert of the same entry: the loser read the entry
    before the erase and failed with LongTermEntry.DoesNotExist (500), 4 of 4 times."""
    from memory_engine.errors import EntryNotActive
    from memory_engine.services import curation

    weak = _weak_memory(alice_space, settings)
    fact = LongTermEntry.objects.get(value__icontains="quokka")
    version = fact.versions.first()
    read_before = [LongTermEntry.objects.get(pk=fact.pk) for _ in range(3)]
    weak.erase_entry(user_id="alice", assistant_id="helper", entry_id=fact.pk)
    changes = [
        lambda entry: curation.entry_edit(entry=entry, value="Something else", actor="owner"),
        lambda entry: curation.entry_delete(entry=entry, actor="owner"),
        lambda entry: curation.entry_revert(entry=entry, version=version, actor="owner"),
    ]
    for change, stale in zip(changes, read_before, strict=True):
        with pytest.raises(EntryNotActive, match="erased"):
            change(stale)


@pytest.mark.django_db
def test_the_python_class_previews_and_erases_one_sentence_by_its_index(memory, alice_space, settings):
    weak = _weak_memory(alice_space, settings)
    turn = Page.objects.get(seq=3)
    where = {"user_id": "alice", "assistant_id": "helper", "page_id": turn.pk}
    with pytest.raises(ValueError, match="whole sentence"):
        weak.erase_turn(**where, sentence="radiology")
    preview = weak.erase_preview(**where, index=0)
    assert preview["erasing"] == [TOLD[2][0]] and _rows_holding(("radiology",))
    assert weak.erase_turn(**where, index=0) >= 1
    assert _rows_holding(("radiology",)) == [] and Page.objects.get(seq=3).agent_response == "Lovely."
