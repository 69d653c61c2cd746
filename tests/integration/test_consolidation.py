"""Consolidation jobs without a worker: the lease, pending work from the database, runs on record."""

from datetime import timedelta

import pytest
from django.utils import timezone

from bench.fake_llm_server import reply, status
from memory_engine.jobs.tasks import sweep_pending
from memory_engine.models import ConsolidationRun, LongTermEntry, MemorySpace, MidTermSession, Page
from memory_engine.services.consolidation import (
    ConsolidationRequest,
    LeaseLost,
    Outcome,
    claim_space,
    has_pending_work,
    release_space,
    renew_lease,
    retry_backoff,
    run_consolidation,
    spaces_with_pending_work,
)
from tests.memory_helpers import CAT_TALK, COOKING_TALK, add_turns, extraction


@pytest.fixture
def backlog(memory, hot_space):
    """Four stored turns in a space of short-term capacity 1 and a low heat threshold, not consolidated."""
    memory.consolidate_after_add = False
    add_turns(memory, CAT_TALK + [("ok", "ok")])
    return hot_space


def test_one_worker_at_a_time_holds_a_space(alice_space, settings):
    assert claim_space(alice_space.pk, "w1")
    assert not claim_space(alice_space.pk, "w2")
    release_space(alice_space.pk, "w1")
    assert claim_space(alice_space.pk, "w2")


def test_an_expired_lease_can_be_taken_over_and_its_holder_then_stops(alice_space):
    assert claim_space(alice_space.pk, "w1")
    MemorySpace.objects.filter(pk=alice_space.pk).update(consolidation_lease_until=timezone.now())
    assert claim_space(alice_space.pk, "w2")
    with pytest.raises(LeaseLost):
        renew_lease(alice_space.pk, "w1")
    renew_lease(alice_space.pk, "w2")


def test_pending_work_is_read_from_the_database(backlog, bob_space):
    assert has_pending_work(backlog)
    assert not has_pending_work(bob_space)
    assert spaces_with_pending_work() == [backlog.pk]


def test_each_rule_of_what_is_due_is_read_in_one_query(backlog, bob_space, django_assert_num_queries):
    with django_assert_num_queries(1):  # a job asks up to three times, and the worker's CPU is not free
        assert has_pending_work(backlog, promotion=False)  # short-term overflow
    run_consolidation(ConsolidationRequest(backlog.pk, promotion=False))  # the moves that need no LLM
    with django_assert_num_queries(1):
        assert not has_pending_work(backlog, promotion=False)
    with django_assert_num_queries(1):
        assert has_pending_work(backlog)  # its new session is hot, with pages never analysed
    MemorySpace.objects.filter(pk=backlog.pk).update(mtm_capacity=0)
    with django_assert_num_queries(1):
        assert has_pending_work(backlog, promotion=False)  # more sessions than mid-term holds
    with django_assert_num_queries(1):
        assert spaces_with_pending_work() == [backlog.pk]
    assert not has_pending_work(bob_space)


def test_a_run_is_recorded_with_what_it_did_and_cost(backlog, fake_llm):
    fake_llm.script(extraction(profile=[("occupation", "nurse", 1)]))
    outcome, run = run_consolidation(ConsolidationRequest(backlog.pk, task_id="t-1"))
    run.refresh_from_db()
    assert outcome == Outcome.DONE
    assert (run.status, run.kind, run.task_id, run.attempts) == ("succeeded", "consolidate", "t-1", 1)
    assert (run.pages_moved, run.sessions_promoted, run.items_stored, run.llm_calls) == (3, 1, 1, 1)
    assert run.prompt_tokens > 0 and run.completion_tokens > 0 and run.finished_at
    assert not has_pending_work(backlog)


def test_a_repeated_delivery_does_nothing_and_records_nothing(backlog, fake_llm):
    fake_llm.script(extraction())
    run_consolidation(ConsolidationRequest(backlog.pk, task_id="t-1"))
    requests = len(fake_llm.requests)
    assert run_consolidation(ConsolidationRequest(backlog.pk, task_id="t-1")) == (Outcome.NOTHING_TO_DO, None)
    assert run_consolidation(ConsolidationRequest(backlog.pk, task_id="t-2")) == (Outcome.NOTHING_TO_DO, None)
    assert ConsolidationRun.objects.count() == 1
    assert len(fake_llm.requests) == requests


def test_a_space_held_by_another_worker_is_left_alone(backlog, fake_llm):
    claim_space(backlog.pk, "someone-else")
    assert run_consolidation(ConsolidationRequest(backlog.pk)) == (Outcome.BUSY, None)
    assert Page.objects.filter(tier=Page.Tier.SHORT).count() == 4


def test_a_deleted_space_is_nothing_to_do(db):
    assert run_consolidation(ConsolidationRequest(123456)) == (Outcome.NOTHING_TO_DO, None)


def test_a_transient_llm_failure_asks_for_a_retry_and_keeps_the_pages_waiting(backlog, fake_llm):
    fake_llm.script(status(503), status(503))
    outcome, run = run_consolidation(ConsolidationRequest(backlog.pk, task_id="t-1", attempt=1, final_attempt=False))
    run.refresh_from_db()
    assert outcome == Outcome.RETRY
    assert run.status == "retrying"
    assert run.error
    assert Page.objects.filter(tier=Page.Tier.MID, analyzed=False).count() == 3
    fake_llm.script(extraction(profile=[("occupation", "nurse", 1)]))
    outcome, again = run_consolidation(ConsolidationRequest(backlog.pk, task_id="t-1", attempt=2, final_attempt=False))
    again.refresh_from_db()
    assert outcome == Outcome.DONE and again.pk == run.pk
    assert (again.status, again.attempts, again.error) == ("succeeded", 2, "")
    assert LongTermEntry.objects.get().value == "nurse"


def test_the_last_attempt_of_a_transient_failure_fails_the_job_visibly(backlog, fake_llm):
    fake_llm.script(status(503), status(503))
    outcome, run = run_consolidation(ConsolidationRequest(backlog.pk, task_id="t-1", attempt=4, final_attempt=True))
    run.refresh_from_db()
    assert outcome == Outcome.FAILED and run.status == "failed" and run.attempts == 4
    assert not LongTermEntry.objects.exists()


def test_a_malformed_answer_fails_at_once_without_retry_and_stores_no_text(backlog, fake_llm):
    fake_llm.script(reply("Error: I could not do that"), reply("{not json"))
    outcome, run = run_consolidation(ConsolidationRequest(backlog.pk, task_id="t-1", attempt=1, final_attempt=False))
    run.refresh_from_db()
    assert outcome == Outcome.FAILED and run.status == "failed"
    assert not LongTermEntry.objects.exists()
    assert Page.objects.filter(tier=Page.Tier.MID, analyzed=False).count() == 3


def test_a_run_left_running_by_a_lost_worker_is_marked_failed_by_the_next(backlog, fake_llm):
    lost = ConsolidationRun.objects.create(space=backlog, status="running", started_at=timezone.now())
    fake_llm.script(extraction())
    run_consolidation(ConsolidationRequest(backlog.pk))
    lost.refresh_from_db()
    assert lost.status == "failed" and "lost" in lost.error


def test_backoff_doubles_up_to_the_cap(settings):
    settings.MEMORYOS = {
        **settings.MEMORYOS,
        "CONSOLIDATION_RETRY_BASE_SECONDS": 10,
        "CONSOLIDATION_RETRY_CAP_SECONDS": 60,
    }
    assert [retry_backoff(n) for n in (1, 2, 3, 4, 5)] == [10, 20, 40, 60, 60]


def test_after_a_failed_job_promotion_waits_but_llm_free_moves_go_on(backlog, memory, fake_llm):
    fake_llm.script(reply("{not json"), reply("{not json"))
    assert run_consolidation(ConsolidationRequest(backlog.pk))[0] == Outcome.FAILED
    requests = len(fake_llm.requests)
    assert run_consolidation(ConsolidationRequest(backlog.pk)) == (
        Outcome.NOTHING_TO_DO,
        None,
    )  # only promotion was due
    add_turns(memory, COOKING_TALK, start=timezone.now())
    outcome, run = run_consolidation(ConsolidationRequest(backlog.pk))
    assert outcome == Outcome.DONE and run.pages_moved == 3
    assert len(fake_llm.requests) == requests  # the failing LLM was not asked again
    fake_llm.script(extraction(profile=[("occupation", "nurse", 1)]))
    assert memory.consolidate(user_id="alice", assistant_id="helper").sessions_promoted >= 1  # explicit retry


def test_a_retry_that_never_came_is_closed_as_failed_by_the_next_job(backlog, fake_llm, settings):
    long_ago = timezone.now() - timedelta(hours=1)
    stale = ConsolidationRun.objects.create(
        space=backlog, status="retrying", task_id="t-lost", started_at=long_ago, finished_at=long_ago
    )
    fake_llm.script(extraction())
    assert run_consolidation(ConsolidationRequest(backlog.pk, task_id="t-new"))[0] == Outcome.DONE
    stale.refresh_from_db()
    assert stale.status == "failed" and "never came" in stale.error


def test_a_retry_whose_work_another_job_did_closes_its_run(backlog, fake_llm):
    fake_llm.script(status(503), status(503))
    outcome, waiting = run_consolidation(
        ConsolidationRequest(backlog.pk, task_id="t-1", attempt=1, final_attempt=False)
    )
    assert outcome == Outcome.RETRY
    fake_llm.script(extraction(profile=[("occupation", "nurse", 1)]))
    forced, _ = run_consolidation(ConsolidationRequest(backlog.pk, task_id="a-1", kind=ConsolidationRun.Kind.ANALYSIS))
    assert forced == Outcome.DONE  # an admin's "analyse now" went ahead meanwhile

    assert (
        run_consolidation(ConsolidationRequest(backlog.pk, task_id="t-1", attempt=2, final_attempt=False))[0]
        == Outcome.NOTHING_TO_DO
    )
    waiting.refresh_from_db()
    assert waiting.status == "superseded" and waiting.finished_at is not None  # not "waiting to retry" forever
    assert waiting.error  # what went wrong on its attempt stays on record


def test_the_sweep_closes_a_retry_that_never_came_when_no_work_is_left(backlog, fake_llm):
    fake_llm.script(extraction())
    assert run_consolidation(ConsolidationRequest(backlog.pk, task_id="t-done"))[0] == Outcome.DONE
    long_ago = timezone.now() - timedelta(hours=1)
    stale = ConsolidationRun.objects.create(
        space=backlog, status="retrying", task_id="t-lost", started_at=long_ago, finished_at=long_ago
    )
    recent = ConsolidationRun.objects.create(
        space=backlog, status="retrying", task_id="t-soon", started_at=timezone.now(), finished_at=timezone.now()
    )
    assert sweep_pending() == 0  # nothing pending, nothing queued
    stale.refresh_from_db()
    recent.refresh_from_db()
    assert stale.status == "failed" and "never came" in stale.error
    assert recent.status == "retrying"  # its retry is still on its way


def test_a_session_stored_exactly_at_the_threshold_and_cooled_since_ends_idle(backlog, fake_llm):
    """Its stored heat said it was due; the time since its last visit had cooled it just below. The updater
    rightly left it, but what is due is read from the stored heat, so every sweep ran the space again, doing
    nothing ("consolidating..." for ever, a run a minute). Now the run stores the heat it found."""
    run_consolidation(ConsolidationRequest(backlog.pk, promotion=False))  # the pages into a session, unread
    session = (
        MidTermSession.objects.filter(space=backlog, pages__tier=Page.Tier.MID, pages__analyzed=False).distinct().get()
    )
    visited = timezone.now() - timedelta(hours=1)
    at_visit = session.n_visit + session.l_interaction + 1.0  # recency 1 at the visit (alpha = beta = gamma = 1)
    MidTermSession.objects.filter(pk=session.pk).update(last_visit_at=visited, heat=at_visit)
    MemorySpace.objects.filter(pk=backlog.pk).update(heat_threshold=at_visit)
    backlog.refresh_from_db()
    assert has_pending_work(backlog)  # the stored heat is at the threshold
    run_consolidation(ConsolidationRequest(backlog.pk))
    assert not has_pending_work(backlog) and spaces_with_pending_work() == []
    session.refresh_from_db()
    assert at_visit - 0.01 < session.heat < at_visit  # cooled by an hour of recency (mu 1e7 s)
    assert not Page.objects.filter(session=session, analyzed=True).exists()  # not promoted: it is not hot
    assert fake_llm.requests == []
