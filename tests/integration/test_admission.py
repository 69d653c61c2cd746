"""A web process works on at most WEB_REQUESTS_AT_ONCE requests; the others wait their turn, and one that
waits too long is answered 503 (memory_engine/admission.py). The production stack's side of it (gunicorn,
a chat waiting on the LLM giving its place up) is in tests/system/test_production.py."""

import threading

import pytest

from memory_engine import admission

pytestmark = pytest.mark.django_db


def hold_a_place(current: admission.Gate):
    """Take a place in another thread and keep it until the returned event is set."""
    taken, done = threading.Event(), threading.Event()

    def holder():
        assert current.enter(timeout=5)
        taken.set()
        done.wait(30)
        current.leave()

    thread = threading.Thread(target=holder)
    thread.start()
    assert taken.wait(30)
    return done, thread


def test_a_request_that_waits_too_long_for_a_place_is_answered_503_and_the_health_check_is_not_held(client, settings):
    settings.WEB_REQUESTS_AT_ONCE = 1
    settings.WEB_QUEUE_TIMEOUT_SECONDS = 0.2
    current = admission.gate()
    done, thread = hold_a_place(current)
    try:
        answer = client.get("/api/v1/users/")
        assert answer.status_code == 503
        assert answer["Retry-After"] == "5" and "busy" in answer.json()["detail"]
        assert client.get("/healthz").status_code in (200, 503)  # answered, not held: its own checks decide
        assert current.stats.turned_away == 1 and current.stats.working == 1
    finally:
        done.set()
        thread.join()
    assert client.get("/api/v1/users/").status_code == 401  # a place is free again: the API's own answer
    assert current.stats.working == 0 and current.stats.most_working == 1


def test_a_request_waiting_elsewhere_lends_its_place_and_takes_one_back():
    current = admission.Gate(1)
    assert current.enter(timeout=1)
    admission._gate = current
    try:
        with admission.waiting_elsewhere():
            assert not current.holds()
            done, thread = hold_a_place(current)  # another request gets in meanwhile
            done.set()
            thread.join()
        assert current.holds() and current.stats.gave_way == 1
        current.leave()
    finally:
        admission._gate = None
    with admission.waiting_elsewhere():  # outside a request: nothing to give up
        assert not current.holds()
    assert current.stats.admitted == 3 and current.stats.working == 0


def test_a_request_holding_its_place_past_the_stuck_limit_fails_the_health_check(client, settings):
    """A thread at work for ever (a 171-byte file whose branches loop, walked naively) must not keep a
    process's places while /healthz answers 200: the health check names it."""
    import time

    settings.WEB_STUCK_SECONDS = 0.2
    current = admission.gate()
    done, thread = hold_a_place(current)
    try:
        time.sleep(0.5)
        stuck = client.get("/healthz")
        assert stuck.status_code == 503
        assert stuck.json()["checks"]["requests"] == "failing (StuckRequest)"
    finally:
        done.set()
        thread.join()
    assert client.get("/healthz").json()["checks"]["requests"] == "ok"
