"""Short-term overflow into mid-term sessions: continuity, merging, summaries, heat, eviction."""

import math
from datetime import timedelta

import numpy as np
import pytest
from django.db import IntegrityError, transaction
from django.utils import timezone

from memory_engine.engine.heat import HeatParams, heat
from memory_engine.engine.mid_term import merge_score
from memory_engine.engine.updater import consolidate, continues_thread, eviction_order
from memory_engine.language.reading import split_sentences
from memory_engine.models import HeatEvent, MidTermSession, Page
from tests.memory_helpers import CAT_TALK, COOKING_TALK, add_turns, days_ago

TRAVEL_TALK = [
    ("I'm flying to Lisbon in June for a conference.", "Lisbon in June is lovely; try the pastel de nata."),
    ("My Lisbon hotel is near the Alfama district.", "Alfama has great views and fado bars."),
]


@pytest.fixture
def small_space(alice_space):
    alice_space.stm_capacity = 1
    alice_space.heat_threshold = 1000  # no promotion in these tests unless they lower it
    alice_space.save()
    return alice_space


def test_overflow_moves_the_oldest_pages_and_each_page_is_in_exactly_one_tier(memory, small_space):
    add_turns(memory, CAT_TALK)
    tiers = list(Page.objects.order_by("seq").values_list("seq", "tier", "session_id"))
    assert [t for _, t, _ in tiers] == ["mid", "mid", "short"]
    assert tiers[2][2] is None and tiers[0][2] is not None


def test_the_database_refuses_a_page_in_two_tiers_at_once(memory, small_space):
    add_turns(memory, CAT_TALK)
    session = MidTermSession.objects.first()
    short = Page.objects.get(tier=Page.Tier.SHORT)
    with pytest.raises(IntegrityError), transaction.atomic():
        Page.objects.filter(pk=short.pk).update(session=session)


def test_continuity_is_decided_without_an_llm_and_kept_in_the_database(memory, small_space, fake_llm):
    add_turns(memory, CAT_TALK, start=days_ago(5))
    add_turns(memory, TRAVEL_TALK, start=days_ago(2))
    pages = list(Page.objects.filter(tier=Page.Tier.MID).order_by("seq"))
    assert [p.continues_previous for p in pages] == [False, True, True, False]
    assert fake_llm.requests == []  # moving to mid-term made no LLM call
    assert "Milo" in pages[1].thread_summary


def test_continuity_needs_closeness_in_time_and_topic_or_strong_similarity(settings):
    assert continues_thread(60, 0.3)
    assert not continues_thread(60, 0.05)  # soon after, but off topic
    assert not continues_thread(86400, 0.3)  # on topic, but a day later
    assert not continues_thread(86400, 0.9)  # a topic coming back later is for the merge rule


def test_unrelated_topics_open_separate_sessions(memory, small_space):
    add_turns(memory, CAT_TALK, start=days_ago(6))
    add_turns(memory, COOKING_TALK, start=days_ago(4))
    add_turns(memory, TRAVEL_TALK + [("bye", "bye")], start=days_ago(2))
    sessions = list(MidTermSession.objects.order_by("pk"))
    assert len(sessions) == 3
    assert all(len({p.session_id for p in Page.objects.filter(session=s)}) == 1 for s in sessions)


def test_a_returning_topic_merges_into_its_session_when_the_score_reaches_theta(memory, small_space):
    add_turns(memory, CAT_TALK[:2], start=days_ago(6))
    add_turns(memory, COOKING_TALK, start=days_ago(4))
    returning = [
        (
            "My cat Milo still sleeps on my nursing scrubs.",
            "Cats love warm clothes that smell of their owner.",
        ),
        ("ok", "ok"),
    ]
    add_turns(memory, returning, start=days_ago(1))
    cat_session = Page.objects.get(seq=1).session
    assert Page.objects.get(seq=6).session_id == cat_session.pk
    assert cat_session.pages.count() == 3
    assert MidTermSession.objects.count() == 2


def test_the_merge_score_is_cosine_plus_keyword_jaccard():
    a = np.array([1.0, 0.0], dtype=np.float32)
    b = np.array([0.6, 0.8], dtype=np.float32)
    assert merge_score(a, ["milo", "cat"], b, ["cat", "bed"]) == pytest.approx(0.6 + 1 / 3)


def test_a_high_theta_never_merges(memory, small_space):
    small_space.merge_theta = 10.0
    small_space.save()
    add_turns(memory, CAT_TALK[:2], start=days_ago(6))
    add_turns(memory, [CAT_TALK[2], ("ok", "ok")], start=days_ago(1))
    assert Page.objects.get(seq=3).session_id != Page.objects.get(seq=1).session_id


def test_a_session_summary_keywords_and_embedding_are_refreshed_when_pages_merge_in(memory, small_space):
    add_turns(memory, CAT_TALK[:1] + [("ok", "ok")], start=days_ago(6))
    session = MidTermSession.objects.get()
    before = (session.summary, list(session.keywords), bytes(session.embedding))
    add_turns(memory, CAT_TALK[1:] + [("ok", "ok")], start=days_ago(6) + timedelta(minutes=10))
    session.refresh_from_db()
    assert session.pages.count() >= 3
    assert (session.summary, session.keywords, bytes(session.embedding)) != before
    assert {"milo", "cat"} <= set(session.keywords)
    assert "Milo" in session.summary


def test_summaries_are_built_from_the_conversation_itself(memory, small_space):
    add_turns(memory, COOKING_TALK + [("ok", "ok")])
    session = MidTermSession.objects.get()
    said = " ".join(f"{p.user_input} {p.agent_response}" for p in session.pages.all())
    sentences = split_sentences(session.summary.replace("…", ""))
    assert sentences
    for sentence in sentences:
        assert sentence in said


def test_heat_changes_are_recorded_as_a_timeline(memory, small_space):
    add_turns(memory, CAT_TALK + [("ok", "ok")])
    session = MidTermSession.objects.get()
    events = list(HeatEvent.objects.filter(session=session))
    assert events[0].cause == HeatEvent.Cause.CREATED
    assert [e.l_interaction for e in events] == list(range(1, len(events) + 1))
    assert events[-1].heat == pytest.approx(session.heat)


def test_recency_uses_the_real_time_since_the_last_visit(memory, small_space):
    add_turns(memory, CAT_TALK[:1] + [("ok", "ok")])
    session = MidTermSession.objects.get()
    session.last_visit_at = timezone.now() - timedelta(seconds=small_space.recency_mu_seconds)
    session.save()
    memory.retrieve(user_id="alice", assistant_id="helper", query="cat", count_hits=False)
    from memory_engine.engine.heat import heat_params
    from memory_engine.engine.mid_term import session_heat

    value = session_heat(session, heat_params(small_space), timezone.now())
    assert value == pytest.approx(session.n_visit + session.l_interaction + math.exp(-1), rel=1e-3)


def _sessions_with_heat(space, heats_and_visits):
    sessions = []
    for i, (n_visit, total_visits, age_days) in enumerate(heats_and_visits):
        sessions.append(
            MidTermSession.objects.create(
                space=space,
                summary=f"s{i}",
                keywords=[],
                embedding=b"",
                n_visit=n_visit,
                total_visits=total_visits,
                last_visit_at=days_ago(age_days),
            )
        )
    return sessions


def test_eviction_by_default_drops_the_coldest_session(small_space):
    hot, cold, warm = _sessions_with_heat(small_space, [(5, 1, 0), (0, 9, 300), (2, 0, 1)])
    assert eviction_order([hot, cold, warm], "heat", small_space, timezone.now())[0] == cold


def test_eviction_can_follow_the_reference_least_frequently_used_rule(small_space):
    hot, cold, warm = _sessions_with_heat(small_space, [(5, 1, 0), (0, 9, 300), (2, 0, 1)])
    assert eviction_order([hot, cold, warm], "lfu", small_space, timezone.now())[0] == warm


def test_sessions_over_capacity_are_evicted_and_their_pages_archived_not_deleted(memory, small_space):
    small_space.mtm_capacity = 1
    small_space.save()
    add_turns(memory, CAT_TALK, start=days_ago(6))
    add_turns(memory, TRAVEL_TALK + [("bye", "bye")], start=days_ago(1))
    assert MidTermSession.objects.filter(status="active").count() == 1
    evicted = MidTermSession.objects.filter(status="evicted").first()
    assert evicted.pages.count() > 0
    assert set(evicted.pages.values_list("tier", flat=True)) == {Page.Tier.ARCHIVED}
    assert HeatEvent.objects.filter(session=evicted, cause=HeatEvent.Cause.EVICTED).exists()
    result = memory.retrieve(user_id="alice", assistant_id="helper", query="Milo the cat")
    assert evicted.pk not in {p.provenance["session_id"] for p in result.pages}


def test_consolidating_twice_moves_nothing_twice(memory, small_space):
    memory.consolidate_after_add = False
    add_turns(memory, CAT_TALK + COOKING_TALK)
    first = consolidate(small_space)
    second = consolidate(small_space)
    assert first.pages_moved == 5 and second.pages_moved == 0
    assert Page.objects.filter(tier=Page.Tier.MID).count() == 5


def test_heat_matches_the_formula_for_the_recorded_counts(memory, small_space):
    add_turns(memory, CAT_TALK + [("ok", "ok")])
    event = HeatEvent.objects.last()
    params = HeatParams(mu_seconds=small_space.recency_mu_seconds)
    assert event.heat == pytest.approx(
        heat(n_visit=event.n_visit, l_interaction=event.l_interaction, seconds_since_visit=0, params=params),
        rel=1e-4,
    )


def test_a_session_with_nothing_worth_summarising_is_summed_up_in_the_words_said_without_a_label(memory, small_space):
    add_turns(memory, [("ok thanks", ""), ("ok", "")])
    session = MidTermSession.objects.get(space=small_space)
    assert session.summary == "ok thanks"  # not "User: ok thanks": memory holds no word nobody said
