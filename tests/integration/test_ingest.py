"""Ingestion (services.ingest): the one way a whole conversation goes in, for imports, the LoCoMo
evaluation and the scale benchmark; its counters are the sums of the consolidation runs on record."""

from datetime import timedelta

import pytest
from django.db.models import Sum

from bench.fake_llm_server import reply
from memory_engine.errors import InvalidTurn
from memory_engine.models import ConsolidationRun, LongTermEntry, Page
from memory_engine.services.ingest import IngestCounters, TurnIn, ingest, ingest_turn
from tests.memory_helpers import CAT_TALK, COOKING_TALK, days_ago, extraction

COUNTED = ["pages_moved", "sessions_promoted", "items_stored", "items_rejected", "llm_calls", "prompt_tokens"]


def turns(talk, start=None):
    start = start or days_ago(3)
    return [TurnIn(u, a, start + timedelta(minutes=2 * i), {"n": i}) for i, (u, a) in enumerate(talk)]


@pytest.mark.parametrize(("chunk", "progress"), [(1, [1, 2, 3, 4]), (3, [3, 4]), (128, [4])])
def test_a_conversation_is_stored_in_order_and_counted_once_in_one_place(hot_space, fake_llm, chunk, progress):
    fake_llm.responder = lambda request: extraction(
        profile=[("occupation", "nurse", 1), ("employer", "Acme Hospital", 1)]  # the second was never said
    )
    done = []
    counters = ingest(hot_space, turns(CAT_TALK + [("ok", "ok")]), chunk_turns=chunk, progress=done.append)

    assert done == progress and counters.turns == 4
    stored = Page.objects.filter(space=hot_space).order_by("seq")
    assert [p.user_input for p in stored] == [u for u, _ in CAT_TALK] + ["ok"]
    assert [p.meta for p in stored] == [{"n": i} for i in range(4)]
    assert LongTermEntry.objects.get(kind="profile").value == "nurse"
    runs = ConsolidationRun.objects.filter(space=hot_space)
    sums = runs.aggregate(**{name: Sum(name) for name in COUNTED})
    assert {name: getattr(counters, name) for name in COUNTED} == sums
    assert counters.llm_calls >= 1 and counters.items_stored >= 1 and counters.items_rejected >= 1
    assert len(counters.store_ms) == len(counters.add_ms) == len(progress)  # a time per chunk
    assert all(add >= store for store, add in zip(counters.store_ms, counters.add_ms, strict=True))


def test_a_failed_promotion_waits_out_the_cooldown_unless_the_ingestion_retries_at_once(hot_space, fake_llm):
    fake_llm.script(reply("{not json"), reply("{not json"))  # the first promotion fails
    fake_llm.responder = lambda request: extraction(profile=[("occupation", "nurse", 1)])
    counters = ingest(hot_space, turns(CAT_TALK + [("ok", "ok")]))
    asked = len(fake_llm.requests)
    assert len(counters.errors) == 1 and not LongTermEntry.objects.exists()

    later = ingest(hot_space, turns(COOKING_TALK, start=days_ago(2)))  # an import: the cooldown holds
    assert len(fake_llm.requests) == asked and not LongTermEntry.objects.exists()
    assert later.pages_moved == 3  # the moves that need no LLM went on

    counters = IngestCounters()
    ingest_turn(hot_space, TurnIn("one more", "ok", days_ago(1)), counters, retry_now=True)  # the evaluation
    assert counters.llm_calls >= 1 and LongTermEntry.objects.get(kind="profile").value == "nurse"


def test_a_bad_turn_stores_nothing_and_leaves_the_counters_alone(hot_space, fake_llm):
    counters = IngestCounters()
    with pytest.raises(InvalidTurn, match="empty"):
        ingest_turn(hot_space, TurnIn("", "", days_ago(1)), counters, with_store=lambda page: None)
    assert not Page.objects.exists() and counters.turns == 0 and counters.store_ms == []
