"""History in bulk (services.ingest): a chunk of turns stored in one transaction and consolidated in one
pass gives the memory the turn-by-turn path gives, within the differences stated here; an import ends with
its history in mid-term memory and what it taught shown."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from bench.synthetic_chat import synthetic_pages, synthetic_queries
from memory_engine.engine import updater
from memory_engine.engine.retriever import retrieve
from memory_engine.models import HeatEvent, LongTermEntry, MidTermSession, Page
from memory_engine.services.comparison import heat_by_turn
from memory_engine.services.ingest import TurnIn, ingest
from memory_engine.store.embeddings import get_embedder
from tests.memory_helpers import weak_offline_llm

START = datetime(2024, 1, 1, tzinfo=UTC)


def _history(count: int) -> list[TurnIn]:
    return [
        TurnIn(p.user_input, p.agent_response, START + timedelta(minutes=p.minutes)) for p in synthetic_pages(7, count)
    ]


def _memory(space) -> dict:
    sessions = {}
    for page in Page.objects.filter(space=space, tier=Page.Tier.MID).order_by("seq"):
        sessions.setdefault(page.session_id, set()).add(page.seq)
    return {
        "tiers": {tier: Page.objects.filter(space=space, tier=tier).count() for tier in Page.Tier.values},
        "sessions": [frozenset(seqs) for seqs in sessions.values()],
        "entries": set(LongTermEntry.objects.filter(space=space, status="active").values_list("kind", "key", "value")),
        "unanalysed": set(Page.objects.filter(space=space, analyzed=False).values_list("seq", flat=True)),
    }


@pytest.fixture
def two_spaces(memory, settings):
    weak_offline_llm(settings)  # the bundled model's class: promotion keeps the person's words, no call
    for user in ("turn-by-turn", "bulk"):
        memory.create_user(user)
    return memory.space(user_id="turn-by-turn", assistant_id="helper"), memory.space(
        user_id="bulk", assistant_id="helper"
    )


def test_a_history_in_bulk_makes_the_memory_turn_by_turn_makes_within_what_heat_leaves_waiting(two_spaces):
    one_by_one, bulk = two_spaces
    turns = _history(80)
    ingest(one_by_one, turns, chunk_turns=1, retry_now=True)
    counters = ingest(bulk, turns, chunk_turns=128, retry_now=True)
    before, after = _memory(one_by_one), _memory(bulk)

    assert counters.turns == 80 and after["tiers"] == before["tiers"] == {"short": 7, "mid": 73, "archived": 0}
    # Sessions: a run of turns that continue one another is matched by its first turn on both paths, so
    # they make the same sessions.
    assert sorted(map(sorted, after["sessions"])) == sorted(map(sorted, before["sessions"]))
    # Entries: all that turn by turn learnt; more only from turns it left unanalysed (a session's last few
    # turns, below the heat threshold until more come), which bulk reads in one promotion.
    assert before["entries"] <= after["entries"]
    learnt_more = after["entries"] - before["entries"]
    drawn_from = set(
        Page.objects.filter(space=bulk, entries__value__in=[v for _, _, v in learnt_more]).values_list("seq", flat=True)
    )
    assert drawn_from <= before["unanalysed"]
    # Heat: on both paths, a session's heat is its unanalysed turns plus recency (nobody retrieved yet),
    # below the threshold, or it would have been promoted.
    for space in two_spaces:
        for session in MidTermSession.objects.filter(space=space, status="active"):
            waiting = session.pages.filter(analyzed=False).count()
            assert session.l_interaction == waiting and session.n_visit == 0
            assert session.heat < space.heat_threshold or waiting == 0


def test_a_history_in_bulk_places_its_heat_at_the_turns_that_made_it_dated_as_the_history_dates_them(two_spaces):
    # An import consolidates 128 turns at a time, one wall-clock moment: its heat points all sat at one time
    # (and one "turns stored"), so a chart's lines read flat. Each point is now made by a turn, as turn by turn.
    one_by_one, bulk = two_spaces
    turns = _history(80)
    ingest(one_by_one, turns, chunk_turns=1, retry_now=True)
    ingest(bulk, turns, chunk_turns=128, retry_now=True)

    def points(space):
        rows = HeatEvent.objects.filter(space=space).select_related("session").order_by("turn", "pk")
        return [(e.turn, e.turn_at, e.cause, e.session.pages.order_by("seq").first().seq) for e in rows]

    made = points(bulk)
    assert len({turn for turn, *_ in made}) > 5  # not one moment
    # sessions begun at the same turns on both paths: each run of turns at its last (all its turns are in it
    # at once), turn by turn at its first
    begun = {first: turn for turn, _, cause, first in made if cause == "created"}
    assert set(begun) == {first for _, _, cause, first in points(one_by_one) if cause == "created"}
    assert all(
        Page.objects.get(space=bulk, seq=turn).session.pages.filter(seq=first).exists() for first, turn in begun.items()
    )
    by_seq = dict(Page.objects.filter(space=bulk).values_list("seq", "timestamp"))
    assert all(at == by_seq[turn] and at < datetime(2025, 1, 1, tzinfo=UTC) for turn, at, *_ in made)
    # a session's point is made by one of its own turns, or later ones (promoted after its last turn)
    assert all(turn >= first for turn, _, _, first in made)
    # the lab places them there too
    assert [p["turn"] for p in heat_by_turn(bulk)] == sorted(p["turn"] for p in heat_by_turn(bulk))
    assert len({p["turn"] for p in heat_by_turn(bulk)}) > 5


def test_hot_sessions_read_together_in_bounded_groups_learn_what_they_learn_all_at_once(two_spaces, monkeypatch):
    """A weak model's promotion reads its hot sessions' facts in groups of about READ_TOGETHER_PAGES pages
    (a lowered threshold can make a whole history hot at once); the size of a group changes nothing learnt."""
    all_at_once, in_groups = two_spaces
    turns = _history(80)
    ingest(all_at_once, turns, chunk_turns=128, retry_now=True)
    monkeypatch.setattr(updater, "READ_TOGETHER_PAGES", 2)  # nearly a session a group
    ingest(in_groups, turns, chunk_turns=128, retry_now=True)
    assert _memory(in_groups) == _memory(all_at_once) and _memory(in_groups)["entries"]


def test_a_history_in_bulk_finds_what_turn_by_turn_finds(two_spaces):
    one_by_one, bulk = two_spaces
    turns = _history(80)
    ingest(one_by_one, turns, chunk_turns=1, retry_now=True, promotion=False)
    ingest(bulk, turns, chunk_turns=128, retry_now=True, promotion=False)
    same = 0
    queries = synthetic_queries(7, 20)
    for query in queries:
        found = [
            [item.provenance["seq"] for item in retrieve(space, query, top_pages=5, count_hits=False).matched_pages]
            for space in two_spaces
        ]
        same += found[0] == found[1]
    assert same >= len(queries) - 2, same


def test_many_texts_are_encoded_on_every_core_as_one_at_a_time():
    texts = [turn.user_input + " " + turn.agent_response for turn in _history(100)]
    embedder = get_embedder()
    together = embedder.encode(texts)
    assert together.shape == (100, embedder.dim)
    for row in (0, 37, 99):
        assert np.allclose(together[row], embedder.encode_one(texts[row]), atol=1e-5)
