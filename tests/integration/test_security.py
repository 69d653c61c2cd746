"""What a hostile account, a crash or a reset would find, each attack run against the service: another
account's data stays out of reach, a crash or a reset loses and leaks nothing."""

import asyncio
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import threading
import time
from datetime import timedelta
from io import StringIO
from pathlib import Path
from urllib.parse import urlsplit

import httpx2
import numpy as np
import pytest
from asgiref.sync import async_to_sync
from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from rest_framework.test import APIClient
from rest_framework.throttling import SimpleRateThrottle

from bench.fake_llm_server import held, reply
from memory_engine.errors import EntryNotActive, MemoryInputError, UserHeldByAccount
from memory_engine.interfaces import signin
from memory_engine.interfaces.mcp_server import build_server
from memory_engine.interfaces.memoryos import MemoryOS
from memory_engine.models import (
    ApiToken,
    BackgroundJob,
    ConsolidationRun,
    ImportJob,
    LongTermEntry,
    MemoryUser,
    OwnerChange,
    Page,
)
from memory_engine.services import curation
from memory_engine.services.conversation import turn_add
from memory_engine.services.dispatch import RUN_BACKGROUND_JOB, RUN_IMPORT, send
from memory_engine.services.export import space_export
from memory_engine.services.imports import import_create
from memory_engine.services.tokens import token_create
from memory_engine.store import index
from memory_engine.store.embeddings import from_bytes
from tests.api_helpers import SPACE, client_for
from tests.integration.test_mcp import http_session
from tests.memory_helpers import CAT_TALK, COOKING_TALK, add_turns, extraction, nothing_extracted
from tests.processes import ROOT, RedisServer, mcp_http_server, wait_for, wait_until


@pytest.fixture
def nurse(alice_space):
    return curation.profile_entry_add(space=alice_space, attribute="occupation", value="nurse", actor="test")


def test_an_edit_of_an_entry_deleted_meanwhile_is_refused_and_changes_nothing(nurse):
    seen = LongTermEntry.objects.get(pk=nurse.pk)  # an editor's request read it while it was active
    curation.entry_delete(entry=nurse, actor="someone else", cause="admin")

    with pytest.raises(EntryNotActive, match="deleted"):
        curation.entry_edit(entry=seen, value="surgeon", actor="editor")

    stored = LongTermEntry.objects.get(pk=nurse.pk)
    assert (stored.status, stored.value) == ("deleted", "nurse")
    assert [v.after for v in stored.versions.order_by("at", "pk")] == ["nurse", None]


def test_the_api_answers_409_to_an_edit_of_a_deleted_entry(nurse):
    api = client_for("alice")
    url = SPACE.format(user="alice") + f"profile/{nurse.pk}/"
    assert api.delete(url).status_code == 200

    answer = api.patch(url, {"value": "surgeon"}, format="json")

    assert answer.status_code == 409 and "deleted" in answer.data["detail"]
    assert LongTermEntry.objects.get(pk=nurse.pk).value == "nurse"


def test_a_token_in_steady_use_writes_its_last_use_once_a_minute(memory):
    api = client_for("alice")
    token = ApiToken.objects.get(memory_user__external_id="alice")

    def writes_of_the_token_row() -> int:
        with CaptureQueriesContext(connection) as queries:
            assert api.get("/api/v1/users/alice/").status_code == 200
        return sum(q["sql"].startswith("UPDATE") and "api" in q["sql"].lower() for q in queries.captured_queries)

    assert writes_of_the_token_row() == 1  # first use
    first = ApiToken.objects.get(pk=token.pk).last_used_at
    assert [writes_of_the_token_row() for _ in range(3)] == [0, 0, 0]
    assert ApiToken.objects.get(pk=token.pk).last_used_at == first
    ApiToken.objects.filter(pk=token.pk).update(last_used_at=first - timedelta(minutes=2))
    assert writes_of_the_token_row() == 1  # a minute on: recorded again


# --- Ownership of memory-user ids ----------------------------------------------------------------------


def _account_client(username: str):
    account = get_user_model().objects.create_user(username, password=f"pw-{username}-12345")
    client = APIClient()
    client.force_authenticate(account)
    return account, client


def test_an_account_cannot_claim_an_id_the_operator_will_use(memory):
    _, mallory = _account_client("mallory")
    made = mallory.post("/api/v1/users/", {"user_id": "carol"}, format="json")
    assert made.status_code == 201
    call_command("api_token", "create", "carol", stdout=StringIO(), stderr=StringIO())
    carol = MemoryUser.objects.get(external_id="carol")
    assert carol.owner is None  # the operator's carol, not the account's
    memory.create_assistant("helper")
    memory.add_memory(user_id="carol", assistant_id="helper", user_input="My PIN is 4411.", agent_response="Ok.")
    seen = [u["user_id"] for u in mallory.get("/api/v1/users/").data["results"]]
    assert "carol" not in seen
    assert mallory.get("/api/v1/users/carol/export/").status_code == 404


def test_two_accounts_may_each_name_a_memory_user_the_same(memory):
    _, ann = _account_client("ann")
    _, bo = _account_client("bo")
    first = ann.post("/api/v1/users/", {"user_id": "me"}, format="json")
    second = bo.post("/api/v1/users/", {"user_id": "me"}, format="json")
    assert first.status_code == second.status_code == 201
    assert first.data["user_id"] != second.data["user_id"]
    assert [u["user_id"] for u in ann.get("/api/v1/users/").data["results"]] == [first.data["user_id"]]
    again = ann.post("/api/v1/users/", {"user_id": "me"}, format="json")
    assert again.status_code == 400 and "user_id" in again.data


@pytest.fixture
def squatted(memory):
    """An id an account took before ids were namespaced: a row that an upgrade leaves as it was."""
    account = get_user_model().objects.create_user("mallory", password="pw-mallory-12345")
    return MemoryUser.objects.create(external_id="carol", owner=account)


def test_the_operator_is_told_that_an_id_belongs_to_an_account_and_nothing_is_issued(squatted):
    with pytest.raises(CommandError, match="mallory"):
        call_command("api_token", "create", "carol", stdout=StringIO(), stderr=StringIO())
    assert not ApiToken.objects.filter(memory_user=squatted).exists()
    with pytest.raises(UserHeldByAccount, match="mallory"):
        MemoryOS().create_user("carol")


def test_an_operator_who_means_it_takes_an_id_over_and_that_is_recorded(squatted):
    out = StringIO()
    call_command("api_token", "create", "carol", "--take-over", stdout=out, stderr=StringIO())
    squatted.refresh_from_db()
    assert squatted.owner is None
    assert ApiToken.objects.filter(memory_user=squatted).count() == 1
    change = OwnerChange.objects.get(user=squatted)
    assert change.previous_owner == "mallory" and change.owner is None and "api_token" in change.by


# --- MCP: the API's limits, and an explicit user over stdio ----------------------------------------------


def test_over_stdio_the_server_refuses_to_start_without_a_memory_user(server_env):
    env = {**os.environ, **server_env, "MEMORYOS_MCP_USER_ID": ""}
    command = [sys.executable, "manage.py", "mcp_server"]
    ran = subprocess.run(command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=300)
    assert ran.returncode != 0 and "--user" in ran.stderr.decode()


def _initialize(url: str, secret: str, padding: str = "") -> httpx2.Response:
    params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
    if padding:
        params["_meta"] = {"padding": padding}
    return httpx2.post(
        url,
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
        headers={"Authorization": f"Bearer {secret}", "Accept": "application/json, text/event-stream"},
        timeout=120,
    )


@pytest.mark.django_db(transaction=True)
def test_over_http_a_body_over_the_api_limit_or_nested_too_deep_is_refused(memory, server_env, tmp_path):
    _, secret = token_create(memory_user=MemoryUser.objects.get(external_id="alice"))
    env = {**server_env, "MEMORYOS_API_MAX_BODY_BYTES": "60000"}
    with mcp_http_server(env, tmp_path / "mcp.log") as url:
        assert _initialize(url, secret).status_code == 200
        assert _initialize(url, secret, padding="x" * 70_000).status_code == 413
        nested = httpx2.post(
            url,
            content="[" * 25_000 + "]" * 25_000,
            headers={
                "Authorization": f"Bearer {secret}",
                "Accept": "application/json, text/event-stream",
                "Content-Type": "application/json",
            },
            timeout=120,
        )
        assert 400 <= nested.status_code < 500


@pytest.mark.django_db(transaction=True)
def test_over_http_a_connection_that_sends_no_request_is_closed(memory, server_env, tmp_path):
    """The MCP server ran on uvicorn's defaults: a connection that never sent a request stayed open for ever,
    and enough of them refused everyone (interfaces/connections.py bounds them as on the web role)."""
    with mcp_http_server({**server_env, "WEB_HEADER_TIMEOUT_SECONDS": "2"}, tmp_path / "mcp.log") as url:
        address = urlsplit(url)
        with socket.create_connection((address.hostname, address.port), timeout=120) as silent:
            assert silent.recv(1) == b""  # closed by the server


@pytest.mark.django_db(transaction=True)
def test_over_http_the_api_rate_limit_applies_per_caller(memory, server_env, tmp_path):
    _, alice = token_create(memory_user=MemoryUser.objects.get(external_id="alice"))
    _, bob = token_create(memory_user=MemoryUser.objects.get(external_id="bob"))
    with mcp_http_server({**server_env, "MEMORYOS_API_RATE": "3/min"}, tmp_path / "mcp.log") as url:
        answers = [_initialize(url, alice) for _ in range(5)]
        assert [a.status_code for a in answers] == [200, 200, 200, 429, 429]
        assert int(answers[-1].headers["Retry-After"]) > 0
        assert _initialize(url, bob).status_code == 200  # another caller has its own count


# --- Rates: one count per account, at every door -------------------------------------------------------


@pytest.fixture
def account(memory):
    """dora's account, holding alice's and bob's memory (as if it had made them); charlie has no account."""
    dora = get_user_model().objects.create_user("dora", password="pw-dora-12345")
    MemoryUser.objects.filter(external_id__in=["alice", "bob"]).update(owner=dora)
    return dora


@pytest.fixture
def shared_counts(tmp_path, settings):
    """A Redis of the test's own for the rate counts, shared by this process (REST, the admin) and an MCP
    server's (its CACHE_URL), as in production."""
    server = RedisServer(tmp_path)
    server.start()
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": server.url}}
    yield server.url
    server.stop()


def _profile(space, **values: str) -> list[int]:
    """Profile entries of these values (distinct words: an erase takes its words from every entry)."""
    return [
        curation.profile_entry_add(space=space, attribute=attribute, value=value, actor="test").pk
        for attribute, value in values.items()
    ]


def _rates(monkeypatch, general: str, heavy: str) -> dict:
    """These rates for this process's doors; the environment that gives them to an MCP server's."""
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", {"api": general, "chat": heavy})
    return {"MEMORYOS_API_RATE": general, "MEMORYOS_API_CHAT_RATE": heavy}


@pytest.mark.django_db(transaction=True)
def test_over_http_the_tokens_of_one_account_share_its_count(account, server_env, tmp_path):
    """An account with two tokens had each token's rate; with fifty, fifty times it."""
    _, alices = token_create(memory_user=MemoryUser.objects.get(external_id="alice"))
    _, bobs = token_create(memory_user=MemoryUser.objects.get(external_id="bob"))
    _, another_of_alices = token_create(memory_user=MemoryUser.objects.get(external_id="alice"))
    _, charlies = token_create(memory_user=MemoryUser.objects.get(external_id="charlie"))
    with mcp_http_server({**server_env, "MEMORYOS_API_RATE": "3/min"}, tmp_path / "mcp.log") as url:
        codes = [_initialize(url, secret).status_code for secret in (alices, bobs, another_of_alices, bobs, alices)]
        assert codes == [200, 200, 200, 429, 429]
        assert _initialize(url, charlies).status_code == 200  # no account: a count of his own


@pytest.mark.django_db(transaction=True)
def test_an_accounts_mcp_and_rest_calls_share_one_count(account, server_env, shared_counts, tmp_path, monkeypatch):
    env = {**server_env, **_rates(monkeypatch, "4/min", "4/min"), "CACHE_URL": shared_counts}
    _, secret = token_create(memory_user=MemoryUser.objects.get(external_id="alice"))
    rest = client_for("bob")
    with mcp_http_server(env, tmp_path / "mcp.log") as url:
        assert [rest.get("/api/v1/users/bob/").status_code for _ in range(2)] == [200, 200]
        assert [_initialize(url, secret).status_code for _ in range(3)] == [200, 200, 429]
        assert rest.get("/api/v1/users/bob/").status_code == 429


@pytest.mark.django_db(transaction=True)
def test_over_http_erase_entry_counts_against_the_heavy_rate_shared_with_rest(
    account, alice_space, server_env, shared_counts, tmp_path, monkeypatch
):
    """MCP's erase_entry (turns rewritten, tables vacuumed) was held only to the general rate, where REST's
    erase is held to the chat rate."""
    env = {**server_env, **_rates(monkeypatch, "100/min", "2/min"), "CACHE_URL": shared_counts}
    entries = _profile(alice_space, city="Porto", pet="a cat", job="nurse", sport="rowing")
    _, secret = token_create(memory_user=MemoryUser.objects.get(external_id="alice"))
    rest = client_for("alice")

    async def erase(session, entry):
        return await session.call_tool("erase_entry", {"entry_id": entry})

    async def erase_then_list(session):
        return await erase(session, entries[2]), await session.call_tool("list_profile_entries", {})

    with mcp_http_server(env, tmp_path / "mcp.log") as url:
        assert not asyncio.run(http_session(url, secret, lambda session: erase(session, entries[0]))).is_error
        assert rest.post(SPACE.format(user="alice") + f"profile/{entries[1]}/erase/").status_code == 200
        refused, listed = asyncio.run(http_session(url, secret, erase_then_list))
        assert refused.is_error and "throttled" in refused.content[0].text
        assert not listed.is_error and "sport" in str(listed.content)  # a light call still passes
        assert rest.post(SPACE.format(user="alice") + f"profile/{entries[3]}/erase/").status_code == 429
    assert sorted(LongTermEntry.objects.filter(space=alice_space).values_list("pk", flat=True)) == entries[2:]


@pytest.mark.django_db
def test_an_admin_erase_over_the_staff_accounts_heavy_rate_is_refused_with_a_message(
    alice_space, admin_client, monkeypatch
):
    _rates(monkeypatch, "100/min", "2/min")
    entries = _profile(alice_space, city="Porto", pet="a cat", job="nurse")
    changelist = "/admin/memory_engine/longtermentry/"

    def erase(chosen):
        form = {"action": "erase_selected", "_selected_action": chosen, "post": "yes"}
        return admin_client.post(changelist, form, follow=True)

    refused = erase(entries)  # three erases: one over the rate
    assert refused.status_code == 200 and "Nothing was done" in refused.content.decode()
    assert LongTermEntry.objects.filter(pk__in=entries).count() == 3
    assert "Erased 2 entries" in erase(entries[:2]).content.decode()
    again = erase(entries[2:])
    assert again.status_code == 200 and "Nothing was done" in again.content.decode()
    assert list(LongTermEntry.objects.filter(pk__in=entries).values_list("pk", flat=True)) == entries[2:]


# --- Imports: each turn stored once, never stuck ----------------------------------------------------


def _transcript(count: int, history: int = 0) -> list[dict]:
    """`count` turns of talk; each `history` another (the same turns imported twice are stored once)."""
    talk = CAT_TALK + COOKING_TALK
    return [
        {"user_input": talk[i % len(talk)][0], "agent_response": f"({history}.{i}) {talk[i % len(talk)][1]}"}
        for i in range(count)
    ]


def _import_runs_ended(*workers) -> int:
    logs = "".join(w.log.read_text() for w in workers)
    return len(re.findall(r"run_import\[[^\]]+\] (?:succeeded|raised|failed)", logs))


def _import_runs_received(*workers) -> int:
    logs = "".join(w.log.read_text() for w in workers)
    return len(re.findall(r"run_import\[[^\]]+\] received", logs))


def _every_import_run_ended(first, *others) -> bool:
    """The first worker's held run has ended, and so has every run either worker took, a part that
    re-queued the rest of the job included (a busy machine splits a job into more parts)."""
    return _import_runs_ended(first) >= 1 and _import_runs_received(first, *others) == _import_runs_ended(
        first, *others
    )


def _import_progress():
    return tuple(ImportJob.objects.values_list("status", "done")), Page.objects.count()


def _extraction_calls(fake_llm) -> int:
    return sum("response_format" in r for r in list(fake_llm.requests))


@pytest.mark.django_db(transaction=True)
def test_two_workers_running_one_import_at_once_store_each_turn_once(memory, hot_space, fake_llm, start_worker):
    gate = threading.Event()
    fake_llm.responder = lambda request: held(gate, extraction()) if "response_format" in request else reply("Hi")
    # Parts of one chunk of two turns each: the job goes back to the queue after every part, as a slow
    # machine's would.
    patient = {
        "MEMORYOS_LLM_TIMEOUT_SECONDS": "600",
        "MEMORYOS_CONSOLIDATION_LEASE_SECONDS": "600",
        "MEMORYOS_IMPORT_CHUNK_SECONDS": "0",
        "MEMORYOS_INGEST_CHUNK_TURNS": "2",
    }
    first, second = start_worker("w1", **patient), start_worker("w2", **patient)
    job = import_create(space=hot_space, turns=_transcript(12), source="t")
    send(RUN_IMPORT, [job.pk])
    # The first worker stops in a promotion's LLM call, the job part done. The same job is delivered
    # again (as after a visibility timeout), and the second worker runs it to the end meanwhile.
    wait_for(lambda: _extraction_calls(fake_llm), progress=_import_progress, what="the first worker's LLM call")
    send(RUN_IMPORT, [job.pk])
    wait_for(
        lambda: ImportJob.objects.get(pk=job.pk).status == "succeeded",
        progress=_import_progress,
        what="the second delivery to finish the job",
    )
    gate.set()
    wait_for(lambda: _every_import_run_ended(first, second), progress=_import_progress, what="every run to end")
    stored = list(Page.objects.filter(space=hot_space).order_by("seq").values_list("agent_response", flat=True))
    assert stored == [t["agent_response"] for t in job.turns]
    assert ImportJob.objects.get(pk=job.pk).done == 12


@pytest.mark.django_db(transaction=True)
def test_an_import_started_while_the_broker_is_down_runs_when_it_is_back(
    memory, alice_space, fake_llm, broker, start_worker
):
    fake_llm.responder = nothing_extracted
    broker.stop()
    answer = client_for("alice").post(
        SPACE.format(user="alice") + "imports/", {"transcript": _transcript(4)}, format="json"
    )
    assert answer.status_code == 202 and answer.data["status"] == "queued"
    broker.start()
    start_worker()  # its start-up sweep finds the job that could not be sent
    wait_for(
        lambda: ImportJob.objects.get(pk=answer.data["id"]).status == "succeeded",
        progress=_import_progress,
        what="the import to run once the broker is back",
    )
    assert Page.objects.filter(space=alice_space).count() == 4


@pytest.mark.django_db(transaction=True)
def test_an_import_whose_worker_died_is_taken_up_by_the_sweep(memory, alice_space, fake_llm, broker, start_worker):
    fake_llm.responder = nothing_extracted
    job = import_create(space=alice_space, turns=_transcript(3), source="t")
    ImportJob.objects.filter(pk=job.pk).update(status="running")  # a worker took it, then died
    start_worker(MEMORYOS_IMPORT_STALL_SECONDS="1", MEMORYOS_SWEEP_SECONDS="2")
    wait_for(
        lambda: ImportJob.objects.get(pk=job.pk).status == "succeeded",
        progress=_import_progress,
        what="the sweep to take the import up",
    )
    assert Page.objects.filter(space=alice_space).count() == 3


@pytest.mark.django_db(transaction=True)
def test_another_accounts_imports_do_not_hold_up_a_chat_turns_consolidation(
    memory, alice_space, bob_space, fake_llm, start_worker
):
    """Three long imports queued by one account, then a chat turn of another's: its consolidation is done
    while the imports are under way, not after them (bulk work has its own queue and runs in chunks)."""
    fake_llm.responder = nothing_extracted
    jobs = [import_create(space=alice_space, turns=_transcript(150, n), source="flood") for n in range(3)]
    for job in jobs:
        send(RUN_IMPORT, [job.pk])
    start_worker(MEMORYOS_IMPORT_CHUNK_SECONDS="1")
    ids = [job.pk for job in jobs]
    wait_for(
        lambda: ImportJob.objects.filter(pk__in=ids, done__gt=0).exists(),
        progress=_import_progress,
        what="the imports to start",
    )
    bob_space.stm_capacity = 1
    bob_space.save()
    for said in ("I keep bees on my roof.", "The hives face south."):
        turn_add(space=bob_space, user_input=said, agent_response="Lovely.")
    run = wait_for(
        lambda: ConsolidationRun.objects.filter(space=bob_space, finished_at__isnull=False).first(),
        progress=_import_progress,
        what="bob's consolidation",
    )
    wait_for(
        lambda: ImportJob.objects.filter(pk__in=ids, status="succeeded").count() == 3,
        progress=_import_progress,
        what="the imports to finish",
    )
    last_import = max(ImportJob.objects.filter(pk__in=ids).values_list("finished_at", flat=True))
    assert run.finished_at < last_import, "bob's consolidation waited for alice's imports"
    assert Page.objects.filter(space=alice_space).count() == 450


def _many_pages_export(space, count: int) -> dict:
    """The space's export with `count` pages more in its first page's session (each embedded again by a
    restore): the space has a mid-term page first."""
    document = json.loads(json.dumps(space_export(space=space)))
    last = max(p["seq"] for p in document["pages"])
    first = next(p for p in document["pages"] if p["tier"] == "mid")
    for number in range(1, count + 1):
        page = {**first, "id": 10**6 + number, "seq": last + number}
        page["user_input"] = f"On day {number} I repotted plant number {number} and watered the fern."
        document["pages"].append(page)
    return document


@pytest.mark.django_db(transaction=True)
def test_another_accounts_restore_does_not_hold_up_a_chat_turns_consolidation(
    memory, alice_space, bob_space, fake_llm, start_worker, settings
):
    """A restore once held the only worker for 407 s, and another account's consolidation waited for it. It
    runs a part at a time: a chat turn's consolidation comes between two parts."""
    from memory_engine.services.background import restore_create
    from memory_engine.services.consolidation import ConsolidationRequest, run_consolidation

    fake_llm.responder = nothing_extracted
    alice_space.stm_capacity = 1
    alice_space.save()
    for said in ("I grow ferns.", "And a lemon tree."):
        memory.add_memory(user_id="alice", assistant_id="helper", user_input=said, agent_response="Nice.")
    run_consolidation(ConsolidationRequest(alice_space.pk))  # here: the first page into a session
    charlie_space = memory.space(user_id="charlie", assistant_id="helper")
    job = restore_create(space=charlie_space, document=_many_pages_export(alice_space, 3000))
    send(RUN_BACKGROUND_JOB, [job.pk])
    start_worker(MEMORYOS_IMPORT_CHUNK_SECONDS="0")  # a part is one batch of texts embedded
    wait_for(
        lambda: (BackgroundJob.objects.get(pk=job.pk).result or {}).get("done"),
        progress=_background_progress,
        what="the restore to start",
    )
    bob_space.stm_capacity = 1
    bob_space.save()
    settings.MEMORYOS = {**settings.MEMORYOS, "CONSOLIDATION_DELAY_SECONDS": 0}  # bob's job sent at once
    for said in ("I keep bees on my roof.", "The hives face south."):
        turn_add(space=bob_space, user_input=said, agent_response="Lovely.")
    run = wait_for(
        lambda: ConsolidationRun.objects.filter(space=bob_space, finished_at__isnull=False).first(),
        progress=_background_progress,
        what="bob's consolidation",
    )
    restored = wait_for(
        lambda: BackgroundJob.objects.filter(pk=job.pk, status__in=["succeeded", "failed"]).first(),
        progress=_background_progress,
        what="the restore to end",
    )
    assert restored.status == "succeeded", restored.error
    assert run.finished_at < restored.finished_at, "bob's consolidation waited for the restore"
    assert Page.objects.filter(space=charlie_space).count() == 3002


def _background_progress():
    return tuple(BackgroundJob.objects.values_list("kind", "status", "error")), Page.objects.count()


@pytest.mark.django_db(transaction=True)
def test_restores_and_comparisons_run_in_the_worker_one_at_a_time_per_account(
    memory, alice_space, fake_llm, broker, start_worker
):
    """A restore (200 pages held a request for 29 s) and a comparison answer 202 at once with a job that a
    worker does; an account has one such job unfinished at a time, and another account is not held back."""
    fake_llm.responder = nothing_extracted
    turns = CAT_TALK + COOKING_TALK
    add_turns(memory, turns)  # celery mode, no worker yet: the turns are stored, nothing runs
    document = space_export(space=alice_space)
    alice, bob = client_for("alice"), client_for("bob")
    notes = SPACE.format(user="alice").replace("helper", "notes")
    made = alice.post(notes + "restore/", {"export": document}, format="json")
    assert made.status_code == 202 and made.data["status"] == "queued", made.data
    alices_notes = Page.objects.filter(space__user__external_id="alice", space__assistant__external_id="notes")
    assert not alices_notes.exists()  # the request restored nothing
    second = alice.post(notes.replace("notes", "diary") + "restore/", {"export": document}, format="json")
    assert second.status_code == 429 and "still running" in second.data["detail"]
    bobs = SPACE.format(user="bob").replace("helper", "notes")
    assert bob.post(bobs + "restore/", {"export": document}, format="json").status_code == 202  # not held back

    start_worker()
    job = wait_for(
        lambda: (answer := alice.get(f"{notes}jobs/{made.data['id']}/").data)["status"] == "succeeded" and answer,
        progress=_background_progress,
        what="alice's restore",
    )
    assert job["result"]["pages"] == len(turns) == alices_notes.count()
    assert "export" not in BackgroundJob.objects.get(pk=made.data["id"]).request

    experiment = memory.fork(user_id="alice", assistant_id="helper", name="hotter", parameters={"heat_threshold": 2})
    compare_url = SPACE.format(user="alice") + f"experiments/{experiment.pk}/compare/"
    asked = alice.post(compare_url, {"questions": ["What is my cat called?"], "k": 5}, format="json")
    assert asked.status_code == 202, asked.data
    compared = wait_for(
        lambda: (
            (answer := alice.get(SPACE.format(user="alice") + f"jobs/{asked.data['id']}/").data)["status"]
            in ("succeeded", "failed")
            and answer
        ),
        progress=_background_progress,
        what="alice's comparison",
    )
    assert compared["status"] == "succeeded", compared["error"]
    assert compared["result"]["probes"][0]["question"] == "What is my cat called?"
    assert compared["result"]["k"] == 5 and compared["result"]["source"]["turns"] == len(turns)


def test_an_account_may_have_only_a_few_imports_unfinished(memory, alice_space, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "MAX_UNFINISHED_IMPORTS": 2, "CONSOLIDATION": "celery"}
    api = client_for("alice")
    url = SPACE.format(user="alice") + "imports/"
    for _ in range(2):  # queued, not run: the broker here is not answering
        ImportJob.objects.create(space=alice_space, source="t", turns=[], total=3)
    refused = api.post(url, {"transcript": _transcript(3)}, format="json")
    assert refused.status_code == 429 and "at most 2 imports" in refused.data["detail"]
    assert ImportJob.objects.filter(space=alice_space).count() == 2
    turn_add(space=alice_space, user_input="I keep bees.", agent_response="Lovely.", consolidate=False)
    refused_fork = api.post(SPACE.format(user="alice") + "experiments/", {"name": "more"}, format="json")
    assert refused_fork.status_code == 429 and "at most 2 imports" in refused_fork.data["detail"]
    ImportJob.objects.filter(space=alice_space).update(status="succeeded")
    assert api.post(url, {"transcript": _transcript(3)}, format="json").status_code == 202


# --- Secure by default -----------------------------------------------------------------------------------


def _manage(*args: str, env: dict) -> subprocess.CompletedProcess:
    """manage.py in its own process with `env` instead of this process's Django settings."""
    drop = {"DEBUG", "SECRET_KEY", "MEMORYOS_HTTPS", "ALLOWED_HOSTS"}
    base = {k: v for k, v in os.environ.items() if k not in drop}
    command = [sys.executable, "manage.py", *args]
    return subprocess.run(command, cwd=ROOT, env={**base, **env}, capture_output=True, text=True, timeout=300)


def test_debug_is_off_by_default_and_then_a_missing_or_known_secret_key_stops_the_process():
    for key in ("", "dev-only-insecure-key-change-me", "change-me-in-production"):
        refused = _manage("check", env={"SECRET_KEY": key})
        assert refused.returncode != 0 and "SECRET_KEY must be set" in refused.stderr, key
    key = secrets.token_urlsafe(50)
    shown = _manage(
        "shell", "-v0", "-c", "from django.conf import settings; print(settings.DEBUG)", env={"SECRET_KEY": key}
    )
    assert shown.stdout.strip() == "False", shown.stderr


def test_the_documented_production_environment_passes_the_deploy_check_at_warning_level():
    lines = (ROOT / "docs" / "production.env").read_text().splitlines()
    env = dict(line.split("=", 1) for line in lines if line.strip() and not line.startswith("#"))
    assert env["DEBUG"] == "false" and env["SECRET_KEY"] == ""  # the operator fills the key in
    env["SECRET_KEY"] = secrets.token_urlsafe(50)
    checked = _manage("check", "--deploy", "--fail-level", "WARNING", env=env)
    assert checked.returncode == 0, checked.stderr


# --- Index identity: a file serves only the space that wrote it --------------------------------------


def test_an_index_folder_left_from_another_database_is_never_served(memory, alice_space, bob_space):
    """After a reset or a restore, a space may get the number of an old space whose index folder is still
    on disk. Here bob's space is given alice's folder, as if it had her number: his retrieval must show
    his own memory only, never her pages."""
    for space in (alice_space, bob_space):
        space.stm_capacity, space.heat_threshold = 1, 1000
        space.save()
    add_turns(memory, CAT_TALK, user="alice")
    add_turns(memory, COOKING_TALK + COOKING_TALK, user="bob")  # more writes: bob's version is higher
    alice_space.refresh_from_db()
    bob_space.refresh_from_db()
    assert bob_space.vector_version >= alice_space.vector_version
    index.dense_index(alice_space, "pages")  # writes alice's file
    index.forget_space(bob_space.pk, delete_files=True)
    shutil.copytree(index.index_dir(alice_space.pk), index.index_dir(bob_space.pk))
    index.forget_all()  # a fresh process
    found = memory.retrieve(user_id="bob", assistant_id="helper", query="Milo the cat", count_hits=False)
    bobs = set(Page.objects.filter(space=bob_space, tier="mid").values_list("pk", flat=True))
    assert found.pages and {item.id for item in found.pages} <= set(bob_space.pages.values_list("pk", flat=True))
    held = index.dense_index(bob_space, "pages")
    assert {i for i, _ in held.search(held.faiss.reconstruct(max(bobs)), 100)} == bobs  # all of his, none of hers


def test_rows_named_by_an_index_are_loaded_only_from_its_own_space(memory, alice_space, bob_space):
    """Defence in depth: even an index that held another space's row id could not show that row."""
    secret = curation.knowledge_entry_add(
        space=alice_space, kind="user_knowledge", topic="health", fact="Alice takes insulin daily", actor="test"
    )
    curation.knowledge_entry_add(
        space=bob_space, kind="user_knowledge", topic="food", fact="Bob likes curry", actor="test"
    )
    held = index.dense_index(bob_space, "user_knowledge")
    held.add([secret.pk], np.vstack([from_bytes(secret.embedding, held.dim)]))
    found = memory.retrieve(user_id="bob", assistant_id="helper", query="Who takes insulin?", count_hits=False)
    assert found.user_knowledge and all(item.id != secret.pk for item in found.user_knowledge)


# --- Sign-in attempts and token lifetimes ------------------------------------------------------------


@pytest.mark.parametrize("url", ["/accounts/login/", "/admin/login/"])
def test_sign_in_attempts_are_limited_then_even_the_right_password_waits(client, db, url):
    get_user_model().objects.create_user("vic", password="pw-vic-right-1", is_staff=True)
    for _ in range(5):
        wrong = client.post(url, {"username": "vic", "password": "guess"})
        assert "_auth_user_id" not in client.session and wrong.status_code == 200
    refused = client.post(url, {"username": "vic", "password": "pw-vic-right-1"})
    assert "_auth_user_id" not in client.session
    assert "Too many failed sign-ins" in refused.content.decode()


def test_after_the_wait_the_right_password_works_again(client, db, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "SIGNIN_FIRST_DELAY_SECONDS": 1}
    get_user_model().objects.create_user("wes", password="pw-wes-right-1")
    for _ in range(5):
        client.post("/accounts/login/", {"username": "wes", "password": "guess"})
    time.sleep(1.5)  # the wait is one second here; waiting longer only makes the test slower
    client.post("/accounts/login/", {"username": "wes", "password": "pw-wes-right-1"})
    assert client.session.get("_auth_user_id")


def test_guessing_a_victims_password_slows_the_guesser_not_the_victim(client, db, settings):
    get_user_model().objects.create_user("VictimLock", password="pw-victim-right-1")
    guesser = {"REMOTE_ADDR": "203.0.113.9"}
    for _ in range(20):  # the username folds as Django folds it: case and spaces
        client.post("/accounts/login/", {"username": "victimlock ", "password": "guess"}, **guesser)
    refused = client.post("/accounts/login/", {"username": "VictimLock", "password": "pw-victim-right-1"}, **guesser)
    assert "Too many failed sign-ins" in refused.content.decode() and "_auth_user_id" not in client.session
    client.post(
        "/accounts/login/", {"username": "VictimLock", "password": "pw-victim-right-1"}, REMOTE_ADDR="198.51.100.7"
    )
    assert client.session.get("_auth_user_id")


def _sign_up(client, username: str, **extra):
    password = "pw-" + username + "-Right-19"
    return client.post(
        "/accounts/signup/", {"username": username, "password1": password, "password2": password}, **extra
    )


def test_sign_up_is_limited_per_address_and_the_operator_can_close_it(client, db, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "SIGNUPS_PER_ADDRESS": 3}
    for number in range(3):
        assert _sign_up(client, f"spammer{number}", REMOTE_ADDR="203.0.113.5").status_code == 302
        client.logout()
    refused = _sign_up(client, "spammer3", REMOTE_ADDR="203.0.113.5")
    assert refused.status_code == 429 and "Too many accounts" in refused.content.decode()
    assert _sign_up(client, "neighbour", REMOTE_ADDR="198.51.100.8").status_code == 302  # another address
    client.logout()
    assert not get_user_model().objects.filter(username="spammer3").exists()

    settings.MEMORYOS = {**settings.MEMORYOS, "SIGNUP_OPEN": False}
    closed = _sign_up(client, "latecomer", REMOTE_ADDR="192.0.2.1")
    assert closed.status_code == 403 and "Sign-up is closed" in closed.content.decode()
    assert not get_user_model().objects.filter(username="latecomer").exists()
    assert 'href="/accounts/signup/"' not in client.get("/accounts/login/").content.decode()


def test_the_wait_grows_with_each_failure_up_to_a_limit():
    waits = [signin.delay_after(n, free=5, first=2.0, cap=900.0) for n in range(4, 16)]
    assert waits[:2] == [0.0, 2.0] and waits[2:5] == [4.0, 8.0, 16.0] and waits[-1] == 900.0
    assert signin.delay_after(10**6, free=5, first=2.0, cap=900.0) == 900.0


def test_a_token_made_to_expire_stops_working_then(memory):
    out = StringIO()
    call_command("api_token", "create", "alice", "--expires-in-days", "30", stdout=out, stderr=StringIO())
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {out.getvalue().strip()}")
    assert api.get("/api/v1/users/alice/").status_code == 200
    ApiToken.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    assert api.get("/api/v1/users/alice/").status_code == 401


@pytest.mark.django_db(transaction=True)
def test_what_the_mcp_fuzz_run_found_is_refused_not_a_crash(memory, alice_space):
    """Found by tests/integration/test_mcp_fuzz.py: a lone surrogate in an assistant id reached the database, and one
    in a style hint was echoed back, and neither can be encoded: crashes instead of refusals."""
    server = build_server(user_id="alice", assistant_id="helper")
    calls = [
        ("get_user_profile", {"assistant_id": "\ud800"}, "is not valid"),
        ("get_user_profile", {"assistant_id": "a\x00b"}, "is not valid"),
        ("get_user_profile", {"assistant_id": "x" * 500}, "is not valid"),
        ("retrieve_memory", {"query": "cats", "style_hint": "\ud800"}, "style_hint is not valid unicode"),
        ("retrieve_memory", {"query": "cats", "relationship_with_user": "f" * 201}, "the limit is 200"),
    ]
    for tool, arguments, says in calls:
        with pytest.raises(ToolError) as refused:
            async_to_sync(server.call_tool)(tool, arguments)
        assert not isinstance(refused.value, UnexpectedToolError) and says in str(refused.value), arguments
    with pytest.raises(MemoryInputError, match="is not valid"):
        memory.space(user_id="\ud800", assistant_id="helper")


# --- Deleted memory leaves no words on disk -------------------------------------------------------------

SECRET_WORDS = ("quokka", "zanzibarian", "pin-4471")


def _files_holding(folder: Path, words=SECRET_WORDS) -> list[str]:
    held = []
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes().lower()
            held += [f"{path.name}: {word}" for word in words if word.encode() in data]
    return held


@pytest.mark.django_db(transaction=True)
def test_a_deleted_users_words_leave_the_database_and_every_processs_index_folder(memory, server_env, tmp_path):
    """Deleted over REST, a user's words were still in the MCP process's index folder (pages.bm25) and in
    the SQLite file's free pages. Now every process prunes the folders of deleted spaces, and SQLite
    overwrites what it deletes (secure_delete) and empties its log after a deletion."""
    user = MemoryUser.objects.get(external_id="alice")
    _, secret = token_create(memory_user=user, name="mcp")
    told = "My bank pin-4471 is kept by my quokka, a zanzibarian one."
    for number in range(12):  # beyond short-term's capacity: pages reach the indexes
        memory.add_memory(user_id="alice", assistant_id="helper", user_input=f"{told} ({number})", agent_response="Ok.")
    env = {**server_env, "MEMORYOS_INDEX_PRUNE_SECONDS": "1"}
    mcp_indexes = Path(server_env["MEMORYOS_INDEX_DIR"])
    with mcp_http_server(env, tmp_path / "mcp.log") as url:

        async def search(session):
            return await session.call_tool("retrieve_memory", {"query": "Who keeps my bank pin?"})

        found = asyncio.run(http_session(url, secret, search))
        assert "quokka" in found.content[0].text
        assert _files_holding(mcp_indexes), "the MCP process indexed the words"
        assert client_for("alice").delete("/api/v1/users/alice/").status_code == 204
        wait_until(lambda: not _files_holding(mcp_indexes), timeout=120, what="the MCP process to prune")
    assert not _files_holding(Path(settings.MEMORYOS["INDEX_DIR"]))  # this process's own
    if connection.vendor == "sqlite":
        database = Path(connection.settings_dict["NAME"])
        files = [path for path in database.parent.glob(database.name + "*") if path.is_file()]
        held = [f"{p.name}: {w}" for p in files for w in SECRET_WORDS if w.encode() in p.read_bytes().lower()]
        assert held == [], held


def test_an_address_over_its_sign_up_limit_hears_429_with_or_without_a_form_token(db, settings):
    """The refusal came after the CSRF check: a POST without a token heard 403, not the documented 429.
    A sign-up under the limit still needs its token."""
    from django.test import Client

    settings.MEMORYOS = {**settings.MEMORYOS, "SIGNUPS_PER_ADDRESS": 1}
    browser = Client(enforce_csrf_checks=True)
    assert _sign_up(browser, "tokenless", REMOTE_ADDR="203.0.113.9").status_code == 403  # no token: CSRF
    page = browser.get("/accounts/signup/", REMOTE_ADDR="203.0.113.9").content.decode()
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    made = browser.post(
        "/accounts/signup/",
        {
            "username": "first",
            "password1": "pw-first-Right-19",
            "password2": "pw-first-Right-19",
            "csrfmiddlewaretoken": token,
        },
        REMOTE_ADDR="203.0.113.9",
    )
    assert made.status_code == 302
    refused = _sign_up(Client(enforce_csrf_checks=True), "second", REMOTE_ADDR="203.0.113.9")
    assert refused.status_code == 429 and "Too many accounts" in refused.content.decode()


def test_pages_carry_a_content_security_policy_and_no_password_reset_door(client, db):
    page = client.get("/accounts/login/")
    assert (
        "script-src 'self'" in page["Content-Security-Policy"]
        and "frame-ancestors 'none'" in page["Content-Security-Policy"]
    )
    assert client.get("/accounts/password_reset/").status_code == 404  # no mail is sent: no reset by mail


def test_the_page_showing_a_new_tokens_secret_is_never_cached(client, memory):
    from django.contrib.auth.models import User

    account = User.objects.create_user("tess", password="pw-tess-long-1")
    memory.create_user("tess-notes")
    MemoryUser.objects.filter(external_id="tess-notes").update(owner=account)
    client.force_login(account)
    made = client.post("/accounts/tokens/", {"user_id": "tess-notes", "name": "cli"})
    assert made.status_code == 201 and "no-store" in made["Cache-Control"]
