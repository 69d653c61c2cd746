"""Bringing a file to import through REST: checked whole and listed, the chosen conversations stored turn by
turn with their own times, facts stored as knowledge with where they came from, nothing stored twice, and a
bad file refused with where it differs, nothing kept."""

import contextlib
import io
import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.core.cache import cache

from memory_engine.models import EntryVersion, ImportedKey, ImportedTurn, ImportJob, ImportUpload, LongTermEntry, Page
from memory_engine.services.imports import import_run
from tests.api_helpers import client_for
from tests.memory_helpers import nothing_extracted
from tests.processes import wait_until

DATA = Path(__file__).parents[1] / "data" / "imports"
SPACE = "/api/v1/users/alice/spaces/helper/"


@pytest.fixture
def alice(memory, fake_llm, settings, tmp_path):
    cache.clear()
    fake_llm.responder = nothing_extracted
    settings.MEMORYOS = {**settings.MEMORYOS, "IMPORT_DIR": tmp_path / "imports"}
    return client_for("alice")


def upload(client, name: str, content: bytes | None = None, space: str = SPACE):
    """Bring the file; the answer, or, for one a worker checks in the background (202), the upload once its
    check is over, as a client polls it."""
    body = content if content is not None else (DATA / name).read_bytes()
    answer = client.post(f"{space}imports/files/?name={name}", body, content_type="application/octet-stream")
    if answer.status_code != 202:
        return answer
    assert answer.data["status"] == "checking", answer.data
    path = f"{space}imports/files/{answer.data['id']}/"
    return wait_until(
        lambda: (now := client.get(path)).data["status"] != "checking" and now, timeout=300, what="a check"
    )


def kept_files(settings) -> list[Path]:
    folder = Path(settings.MEMORYOS["IMPORT_DIR"])
    return sorted(folder.iterdir()) if folder.exists() else []


def test_a_chatgpt_export_is_listed_and_the_chosen_conversation_stored_with_its_own_times(alice, alice_space):
    listed = upload(alice, "chatgpt-conversations.json")
    assert listed.status_code == 201, listed.data
    assert (listed.data["format"], listed.data["label"], listed.data["turns"]) == ("chatgpt", "a ChatGPT export", 5)
    assert [(c["key"], c["title"], c["turns"]) for c in listed.data["conversations"]] == [
        ("c-pets", "Pets and plans", 3),
        ("c-dinner", "Dinner", 2),
        ("c-empty", "Empty chat", 0),
    ]
    assert alice.get(f"{SPACE}imports/files/{listed.data['id']}/").data["conversations"][1]["key"] == "c-dinner"
    job = alice.post(f"{SPACE}imports/", {"upload": listed.data["id"], "conversations": ["c-pets"]}, format="json")
    assert job.status_code == 202
    assert (job.data["status"], job.data["done"], job.data["total"]) == ("succeeded", 3, 3)  # inline here
    assert job.data["source"] == "chatgpt-conversations.json (a ChatGPT export)"
    pages = list(Page.objects.filter(space=alice_space).order_by("seq"))
    assert [p.user_input for p in pages] == [
        "I have a cat called Pepper, she is three",
        "Here is her photo\n[image]",
        "We are moving to Lisbon in June",
    ]
    assert pages[0].timestamp == datetime(2024, 5, 1, 10, 0, 20, tzinfo=UTC)  # when it was said, not now
    assert pages[0].meta["imported"] == {"format": "chatgpt", "conversation": "c-pets", "title": "Pets and plans"}


def test_the_same_file_imported_again_stores_nothing_twice(alice, alice_space):
    first = upload(alice, "chatgpt-conversations.json").data["id"]
    alice.post(f"{SPACE}imports/", {"upload": first}, format="json")
    assert Page.objects.filter(space=alice_space).count() == 5
    again = upload(alice, "chatgpt-conversations.json").data["id"]
    job = alice.post(f"{SPACE}imports/", {"upload": again}, format="json")
    assert (job.data["status"], job.data["done"], job.data["skipped"]) == ("succeeded", 5, 5)
    assert Page.objects.filter(space=alice_space).count() == 5


def test_claude_and_plain_messages_are_imported_whole(alice, alice_space):
    for name, turns in (("claude-conversations.json", 2), ("messages.jsonl", 2), ("messages-one.json", 2)):
        listed = upload(alice, name)
        assert listed.status_code == 201 and listed.data["turns"] == turns
        job = alice.post(f"{SPACE}imports/", {"upload": listed.data["id"]}, format="json")
        assert (job.data["status"], job.data["done"]) == ("succeeded", turns)
    said = list(Page.objects.filter(space=alice_space).order_by("seq").values_list("user_input", flat=True))
    assert said[0] == "My tomatoes are a variety called Sungold" and "I play the cello" in said


def test_a_file_opening_with_a_byte_order_mark_is_imported_as_if_it_were_not_there(alice, alice_space):
    """Windows editors write UTF-8 with a byte-order mark first ("utf-8-sig"): such a file, or a zip holding
    one, was refused as broken JSON."""
    marked = b"\xef\xbb\xbf" + (DATA / "chatgpt-conversations.json").read_bytes()
    zipped = io.BytesIO()
    with zipfile.ZipFile(zipped, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("export/conversations.json", marked)
    for name, body in (("conversations.json", marked), ("export.zip", zipped.getvalue())):
        listed = upload(alice, name, body)
        assert listed.status_code == 201, listed.data
        assert (listed.data["format"], listed.data["turns"]) == ("chatgpt", 5)
    job = alice.post(f"{SPACE}imports/", {"upload": listed.data["id"], "conversations": ["c-pets"]}, format="json")
    assert (job.data["status"], job.data["done"]) == ("succeeded", 3)
    pages = Page.objects.filter(space=alice_space).order_by("seq")
    assert pages.first().user_input == "I have a cat called Pepper, she is three"


def test_memories_become_knowledge_that_says_where_it_came_from(alice, alice_space):
    listed = upload(alice, "mem0-memories.json")
    assert (listed.data["format"], listed.data["facts"], listed.data["conversations"]) == ("memories", 2, [])
    job = alice.post(f"{SPACE}imports/", {"upload": listed.data["id"]}, format="json")
    assert (job.data["status"], job.data["done"]) == ("succeeded", 2)
    assert not Page.objects.filter(space=alice_space).exists()  # facts, not turns
    entries = LongTermEntry.objects.filter(space=alice_space, kind=LongTermEntry.Kind.USER_KNOWLEDGE)
    assert sorted(e.value for e in entries) == ["Has a cat named Pepper", "Is vegetarian"]
    history = EntryVersion.objects.get(entry__value="Has a cat named Pepper")
    assert history.cause == EntryVersion.Cause.IMPORTED
    assert history.actor == "mem0-memories.json (memories of another memory system), memory f-2"
    assert history.at == datetime(2024, 4, 2, 18, 0, tzinfo=UTC)
    again = upload(alice, "mem0-memories.json").data["id"]
    job = alice.post(f"{SPACE}imports/", {"upload": again}, format="json")
    assert (job.data["done"], job.data["skipped"], entries.count()) == (2, 2, 2)


def test_each_part_of_an_import_stores_a_chunk_however_slow_and_the_next_goes_on_from_there(
    alice, alice_space, settings
):
    """A part whose time is up before it starts still stores one chunk of turns (a file whose reading took
    longer than a part once stored nothing, for ever), and the next reads on from where it stopped."""
    settings.MEMORYOS = {**settings.MEMORYOS, "INGEST_CHUNK_TURNS": 2}
    listed = upload(alice, "chatgpt-conversations.json").data["id"]
    alice.post(f"{SPACE}imports/", {"upload": listed, "conversations": ["c-dinner"]}, format="json")  # inline
    job = ImportJob.objects.create(
        space=alice_space, source="again", turns=[], upload_id=listed, chosen=None, total=5, status="running"
    )
    for stored in (2, 4):
        assert import_run(job.pk, seconds=0) is False
        job.refresh_from_db()
        assert job.done == stored and job.offset > 0
    assert import_run(job.pk, seconds=0) is True
    job.refresh_from_db()
    assert (job.status, job.done, job.skipped) == ("succeeded", 5, 2)  # c-dinner's two were stored before
    assert Page.objects.filter(space=alice_space).count() == 5
    assert sorted(ImportedTurn.objects.filter(job=job).values_list("number", flat=True)) == [0, 1, 2, 3, 4]


def test_the_python_class_uploads_a_file_and_imports_the_conversations_chosen(
    alice, memory, alice_space, bob_space, tmp_path
):
    from memory_engine.errors import MemoryInputError, UnknownEntry

    upload = memory.upload_file(user_id="alice", assistant_id="helper", path=DATA / "claude-conversations.json")
    keys = list(upload.conversations.order_by("place").values_list("key", flat=True))
    assert (upload.format, keys) == ("claude", ["k-1", "k-2"])
    job = memory.import_upload(upload, conversations=["k-1"])
    assert (job.status, job.done, job.total) == ("succeeded", 2, 2)
    # The class answers the import as REST gives it (documents.ImportJobCard), then and later.
    over_rest = alice.get(f"{SPACE}imports/{job.id}/")
    assert over_rest.status_code == 200 and json.loads(over_rest.content) == job.payload()
    assert memory.import_status(user_id="alice", assistant_id="helper", job_id=job.id) == job
    with pytest.raises(UnknownEntry, match="no import"):
        memory.import_status(user_id="bob", assistant_id="helper", job_id=job.id)
    assert Page.objects.filter(space=alice_space, user_input__contains="Sungold").count() == 1
    broken = tmp_path / "broken.json"
    broken.write_text('[{"chat_messages": "none"}]')
    with pytest.raises(MemoryInputError, match="conversation 1: a Claude conversation is an object with a list"):
        memory.upload_file(user_id="alice", assistant_id="helper", path=broken)


@pytest.mark.parametrize(
    ("content", "status", "message"),
    [
        (b"", 400, "the file is empty"),
        (b"name,age\nAna,3\n", 400, "the file is not JSON"),
        (b'[{"chat_messages": [{"sender": "robot"}]}]', 400, "conversation 1, message 1: a message's sender"),
        (b'[{"mapping": {}, "title": "x"}]', 400, "with nothing to import in it"),
        (b'[{"conversation": {}, "qa": [], "sample_id": "x"}]', 400, "LoCoMo samples are imported by their sample id"),
        (b"[" + b'{"role": "user", "content": "hi"},' * 40 + b"]", 413, "the limit is 1000"),
        (b"[" * 100 + b"]" * 100, 400, "the JSON is nested more than 64 deep"),
    ],
)
def test_a_bad_file_is_refused_saying_where_and_nothing_is_kept(alice, settings, content, status, message):
    settings.MEMORYOS = {**settings.MEMORYOS, "MAX_IMPORT_BYTES": 1000}
    answer = upload(alice, "upload.json", content)
    assert answer.status_code == status and message in str(answer.data)
    assert not ImportUpload.objects.exists() and kept_files(settings) == []


def test_a_file_name_too_long_is_bad_input_not_a_body_too_large(alice, settings):
    """A 300-character ?name= answered 413, which says the body was too large."""
    answer = upload(alice, "n" * 300, (DATA / "messages-one.json").read_bytes())
    assert answer.status_code == 400 and "the file's name is 300 characters long" in answer.data["detail"]
    assert not ImportUpload.objects.exists() and kept_files(settings) == []


def test_a_body_with_no_length_is_cut_off_at_the_limit_as_it_streams(alice, alice_space, settings):
    from memory_engine.errors import InputTooLarge
    from memory_engine.services.uploads import upload_receive

    settings.MEMORYOS = {**settings.MEMORYOS, "MAX_IMPORT_BYTES": 1000}
    endless = (b'{"role": "user", "content": "hi"},' for _ in range(10**9))
    with pytest.raises(InputTooLarge, match="at most 1,000 bytes"):
        upload_receive(space=alice_space, chunks=endless, name="endless.json")
    assert not ImportUpload.objects.exists() and kept_files(settings) == []


def test_a_choice_the_file_does_not_hold_and_another_users_upload_are_refused(alice, alice_space, bob_space):
    listed = upload(alice, "chatgpt-conversations.json").data["id"]
    unknown = alice.post(f"{SPACE}imports/", {"upload": listed, "conversations": ["c-none"]}, format="json")
    assert unknown.status_code == 400 and "no conversation 'c-none'" in str(unknown.data)
    empty = alice.post(f"{SPACE}imports/", {"upload": listed, "conversations": ["c-empty"]}, format="json")
    assert empty.status_code == 400 and "no turn to import" in str(empty.data)
    loose = alice.post(f"{SPACE}imports/", {"conversations": ["c-pets"], "locomo_sample": "conv-26"}, format="json")
    assert loose.status_code == 400 and "chosen from an upload" in str(loose.data)
    bob = client_for("bob")
    bobs = upload(bob, "chatgpt-conversations.json", space="/api/v1/users/bob/spaces/helper/").data["id"]
    assert alice.post(f"{SPACE}imports/", {"upload": bobs}, format="json").status_code == 404
    assert alice.get(f"{SPACE}imports/files/{bobs}/").status_code == 404
    assert not ImportJob.objects.exists() and not Page.objects.exists()


def test_a_file_is_deleted_a_day_after_it_came_unless_an_import_is_reading_it(
    alice, alice_space, settings, django_capture_on_commit_callbacks
):
    from datetime import timedelta

    from django.utils import timezone

    from memory_engine.services.uploads import upload_path, uploads_expire

    files = (json.dumps([{"role": "user", "content": f"I play the cello, take {n}"}]).encode() for n in range(3))
    done, reading, fresh = (upload(alice, "messages-one.json", content).data["id"] for content in files)
    alice.post(f"{SPACE}imports/", {"upload": done}, format="json")  # finished (inline)
    job = alice.post(f"{SPACE}imports/", {"upload": reading}, format="json").data
    ImportJob.objects.filter(pk=job["id"]).update(status="running")  # as if a worker were on it
    ImportUpload.objects.filter(pk__in=[done, reading]).update(created_at=timezone.now() - timedelta(days=2))
    kept = {pk: upload_path(ImportUpload.objects.get(pk=pk)) for pk in (done, reading, fresh)}
    with django_capture_on_commit_callbacks(execute=True):  # the files go once the deletion commits
        assert uploads_expire() == 1
    assert set(ImportUpload.objects.values_list("pk", flat=True)) == {reading, fresh}
    assert [pk for pk, path in kept.items() if path.exists()] == [reading, fresh]
    assert ImportJob.objects.filter(upload=None, source__startswith="messages-one.json").count() == 1  # its record kept


# --- With a real worker ---------------------------------------------------------------------------


def ended(job_id: int) -> ImportJob | None:
    job = ImportJob.objects.get(pk=job_id)
    return job if job.status in ("succeeded", "failed") else None


@pytest.mark.django_db(transaction=True)  # the job is sent to the worker once its transaction commits
def test_each_format_is_imported_through_rest_by_a_real_worker(alice, alice_space, settings, start_worker):
    start_worker(MEMORYOS_IMPORT_DIR=str(settings.MEMORYOS["IMPORT_DIR"]))
    expected = {
        "chatgpt-conversations.json": 5,
        "claude-conversations.json": 2,
        "messages.jsonl": 2,
        "messages-one.json": 2,
        "mem0-memories.json": 2,
    }
    for name, turns in expected.items():
        listed = upload(alice, name).data
        job = alice.post(f"{SPACE}imports/", {"upload": listed["id"]}, format="json").data
        assert job["status"] == "queued"  # the request only recorded it: a worker does the work
        wait_until(lambda job=job: ended(job["id"]), timeout=300, what=f"the worker to import {name}")
        done = alice.get(f"{SPACE}imports/{job['id']}/").data
        assert (done["status"], done["done"], done["total"]) == ("succeeded", turns, turns), done
    said = set(Page.objects.filter(space=alice_space).values_list("user_input", flat=True))
    assert len(said) == 11 and {"We are moving to Lisbon in June", "I play the cello"} <= said
    imported = EntryVersion.objects.filter(entry__space=alice_space, cause=EntryVersion.Cause.IMPORTED)
    assert sorted(imported.values_list("entry__value", flat=True)) == ["Has a cat named Pepper", "Is vegetarian"]


@pytest.mark.django_db(transaction=True)
def test_a_worker_killed_in_the_middle_of_a_file_leaves_the_rest_to_the_next_and_nothing_twice(
    alice, alice_space, settings, start_worker, tmp_path
):
    from bench.imports import write_export

    folder = str(settings.MEMORYOS["IMPORT_DIR"])
    export = tmp_path / "conversations.json"
    made = write_export(export, 0.1)
    chunks = {"MEMORYOS_INGEST_CHUNK_TURNS": "4"}  # a chunk is stored whole or not at all
    first = start_worker("w1", MEMORYOS_IMPORT_DIR=folder, **chunks)
    listed = upload(alice, "conversations.json", export.read_bytes()).data
    job = alice.post(f"{SPACE}imports/", {"upload": listed["id"]}, format="json").data
    wait_until(lambda: ImportJob.objects.get(pk=job["id"]).done >= 10, timeout=300, what="ten turns stored")
    first.kill()
    stopped = ImportJob.objects.get(pk=job["id"])
    assert stopped.status == "running" and stopped.done < made["turns"]
    start_worker("w2", MEMORYOS_IMPORT_DIR=folder, MEMORYOS_IMPORT_STALL_SECONDS="0", **chunks)  # its start-up sweep
    wait_until(lambda: ended(job["id"]), timeout=600, what="the second worker to finish the import")
    finished = ImportJob.objects.get(pk=job["id"])
    assert (finished.status, finished.done, finished.skipped) == ("succeeded", made["turns"], 0)
    pages = Page.objects.filter(space=alice_space)
    assert pages.count() == made["turns"] == ImportedKey.objects.filter(space=alice_space).count()
    assert pages.values("user_input", "timestamp").distinct().count() == made["turns"]  # none stored twice


# A file whose check takes seconds (5 on an idle machine): 800,000 tiny messages.
LONG = (
    b"["
    + b'{"role":"user","content":"hi"},{"role":"assistant","content":"yo"},' * 400_000
    + b'{"role":"user","content":"end"}]'
)


@pytest.mark.django_db(transaction=True)
def test_a_file_is_checked_in_the_background_one_at_a_time_for_an_account(alice, settings, start_worker):
    """A file's check held a web request, and one of its process's few places, for its whole run (387-467 s
    under load): other accounts' requests waited and got 503. The request now answers 202 once the file has
    arrived, a worker has it checked, and the upload is polled; an account has one check at once (the next
    refused before its body is read), and the site one check running (another account's file is taken and
    waits its turn: six at once tripled a chatting account's reply time)."""
    start_worker(MEMORYOS_IMPORT_DIR=str(settings.MEMORYOS["IMPORT_DIR"]))
    bob = client_for("bob")
    first = alice.post(f"{SPACE}imports/files/?name=long.json", LONG, content_type="application/octet-stream")
    assert first.status_code == 202 and first.data["status"] == "checking", first.data
    second = upload(alice, "messages-one.json")
    assert second.status_code == 429 and "being checked" in second.data["detail"], second.data
    beside = upload(bob, "messages-one.json", space="/api/v1/users/bob/spaces/helper/")
    assert beside.data["status"] == "ready", beside.data
    path = f"{SPACE}imports/files/{first.data['id']}/"
    assert alice.get(path).data["status"] == "ready"  # bob's small file was checked after it, in its turn
    over = wait_until(lambda: (now := alice.get(path).data)["status"] != "checking" and now, timeout=600, what="it")
    assert (over["status"], over["turns"], over["format"]) == ("ready", 400_001, "messages"), over
    assert upload(alice, "messages-one.json").data["status"] == "ready"


def checks_running(stem: str) -> list[int]:
    """The processes checking the upload whose files are named `stem` (file_check.py), wherever started."""
    found = []
    for process in Path("/proc").iterdir():
        with contextlib.suppress(OSError):
            if process.name.isdigit() and stem.encode() in (process / "cmdline").read_bytes():
                found.append(int(process.name))
    return found


@pytest.mark.django_db(transaction=True)
def test_a_file_deleted_while_it_is_checked_stops_its_check_and_frees_the_accounts_place(alice, settings, start_worker):
    """Deleting a file being checked left its check running on, and freed the account's place for another:
    bringing and deleting files one after another ran as many checks at once as the account liked."""
    start_worker(MEMORYOS_IMPORT_DIR=str(settings.MEMORYOS["IMPORT_DIR"]))
    first = alice.post(f"{SPACE}imports/files/?name=long.json", LONG, content_type="application/octet-stream")
    assert first.status_code == 202, first.data
    stem = Path(ImportUpload.objects.get(pk=first.data["id"]).path).stem
    wait_until(lambda: checks_running(stem), timeout=300, interval=0.05, what="its check to start")
    assert alice.delete(f"{SPACE}imports/files/{first.data['id']}/").status_code == 204
    wait_until(lambda: not checks_running(stem), timeout=300, what="its check to end")
    assert not [p for p in kept_files(settings) if p.stem == stem]
    assert upload(alice, "messages-one.json").data["status"] == "ready"


@pytest.mark.django_db(transaction=True)
def test_a_file_refused_in_the_background_says_why_and_is_checked_again_when_brought_again(
    alice, settings, start_worker
):
    start_worker(MEMORYOS_IMPORT_DIR=str(settings.MEMORYOS["IMPORT_DIR"]))
    broken = b'[{"role": "user", "content": "I keep bees"}, {"role": "user"'
    refused = upload(alice, "broken.json", broken).data
    assert refused["status"] == "refused" and refused["refusal"] == "format" and refused["error"], refused
    assert refused["kept_bytes"] == 0 and [p.suffix for p in kept_files(settings)] == []
    chosen = alice.post(f"{SPACE}imports/", {"upload": refused["id"]}, format="json")
    assert chosen.status_code == 400 and "refused" in chosen.data["detail"]
    again = upload(alice, "broken.json", broken).data
    assert again["status"] == "refused" and again["id"] != refused["id"]
    assert list(ImportUpload.objects.values_list("pk", flat=True)) == [again["id"]]
