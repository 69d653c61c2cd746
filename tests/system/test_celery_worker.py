"""Consolidation in real Celery worker processes, on a real Redis broker the tests start and stop.

Each worker has its own index folder (as a worker on another machine would), shares the test
database, and calls the scripted OpenAI-compatible server over HTTP.
"""

import os
import threading
import time

import pytest
from django.db.models import Count
from django.utils import timezone

from bench.fake_llm_server import held, reply, slow, status
from memory_engine.models import ConsolidationRun, LongTermEntry, Page
from memory_engine.services.consolidation import spaces_with_pending_work
from memory_engine.services.dispatch import enqueue
from memory_engine.store.embeddings import get_embedder
from tests.memory_helpers import CAT_TALK, COOKING_TALK, add_turns, extraction, write_concurrently
from tests.processes import wait_for

pytestmark = pytest.mark.django_db(transaction=True)


def answers(extract, chat=None):
    """A responder: structured (extraction) requests get `extract`, chat requests `chat`."""
    return lambda request: extract if "response_format" in request else (chat or reply("Hello!"))


def extraction_calls(fake_llm) -> int:
    return sum("response_format" in r for r in list(fake_llm.requests))


# For tests that hold an LLM call open until they have seen what they look for: no timeout, retry or
# lease expiry may fire meanwhile, however slow the machine.
PATIENT = {"MEMORYOS_LLM_TIMEOUT_SECONDS": "600", "MEMORYOS_CONSOLIDATION_LEASE_SECONDS": "600"}


def worker_progress(fake_llm) -> tuple:
    """What moves while workers consolidate: the runs and their attempts, the pages in each tier, the
    LLM requests made."""
    runs = tuple(ConsolidationRun.objects.order_by("pk").values_list("pk", "status", "attempts"))
    tiers = tuple(Page.objects.order_by("tier").values_list("tier").annotate(n=Count("pk")))
    return runs, tiers, len(fake_llm.requests)


def until(predicate, fake_llm, what: str):
    """Wait for what the test needs while the workers make progress (tests.processes.wait_for)."""
    return wait_for(predicate, progress=lambda: worker_progress(fake_llm), what=what)


def settled() -> bool:
    running = ConsolidationRun.objects.filter(status__in=["running", "retrying"]).exists()
    return not running and not spaces_with_pending_work()


def lease_run_out(space) -> bool:
    space.refresh_from_db()
    return space.consolidation_lease_until is not None and space.consolidation_lease_until < timezone.now()


def assert_every_page_once_in_one_tier(space, count):
    rows = list(Page.objects.filter(space=space).order_by("seq").values_list("seq", "tier", "session_id"))
    assert [seq for seq, _, _ in rows] == list(range(1, count + 1))
    for _, tier, session in rows:
        assert (tier == "short") == (session is None)


def test_a_turn_is_answered_while_consolidation_is_still_running(memory, hot_space, fake_llm, start_worker):
    gate = threading.Event()
    extract = held(gate, extraction(profile=[("occupation", "nurse", 1)]))
    fake_llm.responder = answers(extract, reply("Milo, I think."))
    worker = start_worker(**PATIENT)
    # The worker yields the CPU to this process, whose reply a person waits for (MEMORYOS_WORKER_NICE).
    assert os.getpriority(os.PRIO_PROCESS, worker.process.pid) == min(19, os.getpriority(os.PRIO_PROCESS, 0) + 10)
    get_embedder()  # a web process has its model loaded already
    add_turns(memory, CAT_TALK + [("ok", "ok")])
    until(lambda: extraction_calls(fake_llm) == 1, fake_llm, "the worker to call the LLM")
    held_since = time.monotonic()

    response = memory.get_response(user_id="alice", assistant_id="helper", query="What is my cat called?")
    assert response.text == "Milo, I think."
    assert ConsolidationRun.objects.filter(status="running").exists(), "the reply waited for consolidation"

    gate.set()
    held_for = time.monotonic() - held_since
    until(settled, fake_llm, "consolidation to finish")
    assert_every_page_once_in_one_tier(hot_space, 5)
    assert Page.objects.filter(tier="short").count() == 1
    assert LongTermEntry.objects.get(kind="profile").value == "nurse"
    run = ConsolidationRun.objects.filter(status="succeeded", sessions_promoted__gte=1).get()
    assert run.llm_calls >= 1 and run.duration_ms >= int(held_for * 1000)
    # This process has its own index files; the version stamped in the database tells it they are stale.
    found = memory.retrieve(user_id="alice", assistant_id="helper", query="Milo knocked my coffee", count_hits=False)
    assert "coffee" in found.pages[0].text


def test_a_worker_killed_mid_consolidation_loses_and_doubles_nothing(memory, hot_space, fake_llm, start_worker):
    fake_llm.responder = answers(held(threading.Event(), extraction()))  # never answered
    worker = start_worker("w1", MEMORYOS_LLM_TIMEOUT_SECONDS="600")
    add_turns(memory, CAT_TALK + COOKING_TALK + [("ok", "ok")])
    until(lambda: extraction_calls(fake_llm), fake_llm, "the worker to call the LLM")
    worker.kill()
    assert_every_page_once_in_one_tier(hot_space, 7)
    assert not LongTermEntry.objects.exists()

    fake_llm.responder = answers(extraction(user_facts=[("user's cat", "The user has a cat named Milo", 1)]))
    # The dead worker's lease on the space runs out (8 s here); a worker started before then would stand
    # aside, and the work would wait for the next periodic sweep (a minute).
    until(lambda: lease_run_out(hot_space), fake_llm, "the dead worker's lease to run out")
    start_worker("w2")  # its start-up sweep finds the work the dead worker left
    until(settled, fake_llm, "the restarted worker to finish the backlog")
    assert_every_page_once_in_one_tier(hot_space, 7)
    assert not Page.objects.filter(tier="mid", analyzed=False, session__heat__gte=3.5).exists()
    assert LongTermEntry.objects.filter(value="The user has a cat named Milo", status="active").count() == 1
    lost = ConsolidationRun.objects.get(error__contains="lost")
    assert lost.status == "failed"


def test_turns_are_stored_while_the_broker_is_down_and_consolidated_when_it_returns(
    memory, hot_space, fake_llm, broker, start_worker
):
    fake_llm.responder = answers(extraction())
    broker.stop()
    started = time.monotonic()
    add_turns(memory, CAT_TALK + [("ok", "ok")])
    assert time.monotonic() - started < 10
    assert Page.objects.filter(tier="short").count() == 4  # stored, not yet consolidated

    broker.start()
    start_worker()
    until(settled, fake_llm, "the backlog to be consolidated")
    assert Page.objects.filter(tier="short").count() == 1
    assert_every_page_once_in_one_tier(hot_space, 4)


@pytest.mark.parametrize(
    ("answer", "attempts"),
    [(status(500), 3), (slow(3, reply("late")), 3), (reply('{"profile": [{"attri'), 1)],
    ids=["server-error", "too-slow", "malformed-json"],
)
def test_a_failing_llm_leaves_a_failed_job_on_record_and_loses_nothing(
    memory, hot_space, fake_llm, start_worker, answer, attempts
):
    fake_llm.responder = answers(answer)
    start_worker()
    memory.consolidate_after_add = False
    add_turns(memory, CAT_TALK + [("ok", "ok")])
    for _ in range(4):  # the job, and duplicates of it
        enqueue(hot_space.pk)
    run = until(
        lambda: ConsolidationRun.objects.filter(status="failed").first(),
        fake_llm,
        "the job to fail",
    )
    assert run.attempts == attempts
    assert run.error
    time.sleep(1.5)  # duplicates of the job had their chance to run
    assert ConsolidationRun.objects.count() == 1  # they stood aside: one job, bounded attempts
    assert not LongTermEntry.objects.exists()
    assert Page.objects.filter(tier="mid", analyzed=False).count() == 3
    assert_every_page_once_in_one_tier(hot_space, 4)


def test_two_workers_never_share_a_space_but_work_on_two_spaces_at_once(
    memory, hot_space, bob_space, fake_llm, start_worker
):
    bob_space.stm_capacity, bob_space.heat_threshold = 1, 3.5
    bob_space.save()
    gate = threading.Event()
    fake_llm.responder = answers(held(gate, extraction()))
    start_worker("w1", **PATIENT)
    start_worker("w2", **PATIENT)
    memory.consolidate_after_add = False
    add_turns(memory, CAT_TALK + [("ok", "ok")], user="alice")
    add_turns(memory, COOKING_TALK + [("ok", "ok")], user="bob")
    for _ in range(3):  # duplicated messages for both spaces
        enqueue(hot_space.pk)
        enqueue(bob_space.pk)
    # Each worker runs one task at a time, and one job's LLM calls follow one another: two calls in
    # flight at once are two workers consolidating at once.
    until(lambda: extraction_calls(fake_llm) == 2, fake_llm, "both workers to be calling the LLM")
    gate.set()
    until(settled, fake_llm, "both spaces to be consolidated")

    runs = list(ConsolidationRun.objects.order_by("started_at"))
    by_space = {s: [r for r in runs if r.space_id == s] for s in (hot_space.pk, bob_space.pk)}
    for space_runs in by_space.values():
        assert space_runs and all(r.status == "succeeded" for r in space_runs)
        for earlier, later in zip(space_runs, space_runs[1:], strict=False):
            assert earlier.finished_at <= later.started_at  # never two at once on one space
    alice_run, bob_run = by_space[hot_space.pk][0], by_space[bob_space.pk][0]
    assert alice_run.started_at < bob_run.finished_at and bob_run.started_at < alice_run.finished_at


def test_concurrent_turns_while_a_worker_consolidates_are_each_stored_once_in_order(
    memory, hot_space, bob_space, fake_llm, start_worker
):
    bob_space.stm_capacity, bob_space.heat_threshold = 1, 3.5
    bob_space.save()
    fake_llm.responder = answers(extraction())
    start_worker()
    turns_each = 8

    writers = [("alice", 1), ("alice", 2), ("bob", 1), ("bob", 2)]
    errors = write_concurrently(memory, writers, turns_each)
    assert errors == []
    until(settled, fake_llm, "the worker to consolidate every turn")
    for target in (hot_space, bob_space):
        assert_every_page_once_in_one_tier(target, 2 * turns_each)
        texts = list(Page.objects.filter(space=target).order_by("seq").values_list("user_input", flat=True))
        for writer in (1, 2):
            mine = [t for t in texts if f" w{writer} " in t]
            assert mine == [f"{target.user.external_id} w{writer} turn {i}" for i in range(turns_each)]
        assert Page.objects.filter(space=target, tier="short").count() == 1


def test_turns_a_space_gets_while_its_job_waits_to_start_are_moved_by_that_one_job(
    memory, alice_space, bob_space, fake_llm, start_worker, settings
):
    """A stored turn's job starts MEMORYOS_CONSOLIDATION_DELAY_SECONDS later, and the space's turns
    until then send no job of their own: one job moves them all. Before, every turn sent a job that
    started at once, so turns a few tenths of a second apart were moved by a job each."""
    delay = 10  # far more than storing the turns takes, however busy the machine
    settings.MEMORYOS = {**settings.MEMORYOS, "CONSOLIDATION_DELAY_SECONDS": delay}
    for space in (alice_space, bob_space):
        space.stm_capacity, space.heat_threshold = 1, 1000.0  # no promotion: no LLM call
        space.save()
    fake_llm.responder = answers(extraction())
    start_worker()
    get_embedder()
    began = time.monotonic()
    for number in range(5):
        memory.add_memory(
            user_id="alice", assistant_id="helper", user_input=f"Kites, turn {number}.", agent_response="Nice."
        )
        time.sleep(0.3)  # before, the job of the turn before had time to run
    memory.add_memory(user_id="bob", assistant_id="helper", user_input="Boats.", agent_response="Nice.")
    memory.add_memory(user_id="bob", assistant_id="helper", user_input="More boats.", agent_response="Nice.")
    assert time.monotonic() - began < delay, "storing the turns outlasted the delay; the test proves nothing"
    until(settled, fake_llm, "the delayed jobs to consolidate the turns")

    for space, moved in ((alice_space, 4), (bob_space, 1)):
        runs = list(ConsolidationRun.objects.filter(space=space).values_list("status", "pages_moved"))
        assert runs == [("succeeded", moved)]
        assert Page.objects.filter(space=space, tier="short").count() == 1
    first = ConsolidationRun.objects.get(space=alice_space)
    assert (first.started_at - Page.objects.get(space=alice_space, seq=1).created_at).total_seconds() >= delay - 0.5

    # The window has passed: the next turn sends a job of its own, which moves the turn before it.
    memory.add_memory(user_id="alice", assistant_id="helper", user_input="Kites again.", agent_response="Nice.")
    until(
        lambda: ConsolidationRun.objects.filter(space=alice_space).count() == 2 and settled(), fake_llm, "the next job"
    )
    assert Page.objects.filter(space=alice_space, tier="mid").count() == 5
    assert_every_page_once_in_one_tier(alice_space, 6)
