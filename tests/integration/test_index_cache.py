"""The indexes a process holds: a least-recently-used cache bounded in bytes, and a lock per space, so that
one space's cold load never holds up another's requests."""

import threading
import tracemalloc

import pytest
from django.db import connection

from memory_engine.store import index
from memory_engine.store.index_cache import MIB
from memory_engine.store.lexical import BM25Index
from tests.memory_helpers import CAT_TALK, COOKING_TALK, add_turns

pytestmark = pytest.mark.django_db(transaction=True)

PEOPLE = ("alice", "bob", "charlie")


@pytest.fixture
def spaces(memory):
    """Three spaces of the same size, their turns in mid-term, none of their indexes in memory."""
    held = {}
    for person in PEOPLE:
        space = memory.space(user_id=person, assistant_id="helper")
        space.stm_capacity, space.heat_threshold = 1, 1000
        space.save()
        add_turns(memory, CAT_TALK + COOKING_TALK, user=person)
        held[person] = space
    index.forget_all()
    return held


def pages_found(memory, person: str) -> list[int]:
    result = memory.retrieve(user_id=person, assistant_id="helper", query="Milo the cat", count_hits=False)
    return [item.id for item in result.pages]


def in_thread(work):
    """Run `work` in a thread of its own (with its own database connection); the thread and its outcome."""
    outcome = {}

    def run():
        try:
            outcome["value"] = work()
        except Exception as exc:  # the test looks at it
            outcome["error"] = exc
        finally:
            connection.close()

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


def test_beyond_its_bound_the_cache_drops_the_least_recently_used_space_and_reads_it_again(memory, spaces, settings):
    first = pages_found(memory, "alice")
    one_space = index.cache_stats().bytes
    assert one_space > 0
    settings.MEMORYOS = {**settings.MEMORYOS, "INDEX_CACHE_MB": 2.5 * one_space / MIB}

    pages_found(memory, "bob")
    pages_found(memory, "charlie")  # three spaces do not fit: alice's, used least recently, goes
    stats = index.cache_stats()
    assert (stats.spaces, stats.evictions) == (2, 1)
    assert stats.bytes <= 2.5 * one_space

    misses = stats.misses
    assert pages_found(memory, "alice") == first and first  # read again from its files, the same answer
    assert index.cache_stats().misses > misses
    assert index.cache_stats().spaces == 2


def test_without_a_bound_every_space_stays(memory, spaces, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "INDEX_CACHE_MB": 0}
    for person in PEOPLE:
        pages_found(memory, person)
    hits = index.cache_stats().hits
    for person in PEOPLE:
        pages_found(memory, person)
    stats = index.cache_stats()
    assert (stats.spaces, stats.evictions, stats.limit_bytes) == (3, 0, 0)
    assert stats.hits > hits and stats.hit_rate > 0.5


def test_while_one_space_is_loading_another_space_is_served(memory, spaces):
    """A load holds its space's lock: here the test holds alice's, as a slow cold load would, and bob's
    retrieval completes meanwhile; alice's waits for the load and then completes."""
    pages_found(memory, "alice")
    expected_bob = pages_found(memory, "bob")
    index.forget_all()
    loading = threading.Event()
    release = threading.Event()

    def slow_load_of_alice():
        with index.space_lock(spaces["alice"].pk):
            loading.set()
            release.wait(600)

    holder, _ = in_thread(slow_load_of_alice)
    assert loading.wait(60)
    try:
        waiting_for_alice, alice = in_thread(lambda: pages_found(memory, "alice"))
        bob_thread, bob = in_thread(lambda: pages_found(memory, "bob"))
        bob_thread.join(120)  # generous: only a lock shared with alice's load could keep it waiting
        assert not bob_thread.is_alive(), "bob's retrieval waited for alice's load"
        assert bob == {"value": expected_bob}
        assert waiting_for_alice.is_alive()  # alice's own request waits for her load
    finally:
        release.set()
        holder.join(60)
    waiting_for_alice.join(600)
    assert alice["value"] and "error" not in alice


def test_two_requests_for_one_cold_space_load_it_once(memory, spaces):
    pages_found(memory, "alice")  # its files now exist
    index.forget_all()
    pages_found(memory, "alice")
    one_cold_request = index.cache_stats().misses
    assert one_cold_request > 0

    index.forget_all()
    start = threading.Barrier(2)
    threads = [in_thread(lambda: (start.wait(60), pages_found(memory, "alice"))[1]) for _ in range(2)]
    for thread, _ in threads:
        thread.join(600)
    results = [outcome["value"] for _, outcome in threads]
    assert results[0] == results[1] and results[0]
    assert index.cache_stats().misses == one_cold_request  # the second found the first's load done


def test_the_lexical_index_estimates_its_memory_within_a_third():
    words = [f"word{i}" for i in range(3000)]
    tracemalloc.start()
    try:
        lexical = BM25Index()
        for doc in range(4000):
            lexical.add(doc, " ".join(words[(doc * 7 + j * 13) % 3000] for j in range(20)))
        measured = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert 0.67 * measured <= lexical.nbytes() <= 1.5 * measured, (lexical.nbytes(), measured)


def test_staff_see_what_a_process_holds_and_nobody_else_does(memory, spaces, client, django_user_model):
    pages_found(memory, "alice")
    assert client.get("/ops/process/").status_code == 403
    django_user_model.objects.create_user("ann", password="pw-ann-12345")
    client.login(username="ann", password="pw-ann-12345")
    assert client.get("/ops/process/").status_code == 403
    django_user_model.objects.create_user("sam", password="pw-sam-12345", is_staff=True)
    client.login(username="sam", password="pw-sam-12345")
    answer = client.get("/ops/process/").json()
    cache = answer["index_cache"]
    assert answer["rss_bytes"] > 50 * MIB
    assert cache["spaces"] == 1 and cache["bytes"] == index.cache_stats().bytes > 0
    assert cache["misses"] == cache["loads_kept"] > 0 and 0 < cache["load_ms_median"] <= cache["load_ms_p95"]
