"""Promotion to long-term memory: profile entries with history, knowledge without duplicates."""

import pytest

from bench.fake_llm_server import reply, reply_json, status
from memory_engine.engine import long_term
from memory_engine.engine.updater import ConsolidationReport, promote_hot_sessions
from memory_engine.models import EntryVersion, HeatEvent, LongTermEntry, MidTermSession, Page
from memory_engine.services import curation
from tests.memory_helpers import CAT_TALK, COOKING_TALK, add_turns, days_ago, extraction, nothing_extracted

Kind = LongTermEntry.Kind


def feed_cat_talk(memory, fake_llm, *answers):
    fake_llm.script(*answers)
    fake_llm.responder = nothing_extracted
    return add_turns(memory, CAT_TALK + [("ok", "ok")])


def test_a_hot_session_is_promoted_with_provenance_and_its_counters_reset(memory, hot_space, fake_llm):
    pages = feed_cat_talk(
        memory,
        fake_llm,
        extraction(
            profile=[("occupation", "nurse", 1)],
            user_facts=[("user's cat name", "The user has a cat named Milo", 1)],
            assistant_knowledge=[("cats and tables", "Cats do like pushing things off tables", 3)],
        ),
    )
    profile = LongTermEntry.objects.get(kind=Kind.PROFILE)
    assert (profile.key, profile.value) == ("occupation", "nurse")
    assert list(profile.source_pages.all()) == [pages[0]]
    fact = LongTermEntry.objects.get(kind=Kind.USER_KNOWLEDGE)
    assert list(fact.source_pages.all()) == [pages[0]]
    said = LongTermEntry.objects.get(kind=Kind.ASSISTANT_KNOWLEDGE)
    assert list(said.source_pages.all()) == [pages[2]]
    session = MidTermSession.objects.get()
    assert (session.n_visit, session.l_interaction) == (0, 0)
    assert session.promoted_at is not None
    assert HeatEvent.objects.filter(session=session, cause=HeatEvent.Cause.PROMOTED).exists()
    assert not Page.objects.filter(tier=Page.Tier.MID, analyzed=False).exists()
    version = EntryVersion.objects.get(entry=profile)
    assert (version.before, version.after, version.cause, version.actor) == (
        None,
        "nurse",
        "consolidation",
        "consolidation",
    )
    assert list(version.source_pages.all()) == [pages[0]]


def test_the_extraction_call_sees_the_pages_and_asks_for_a_json_schema(memory, hot_space, fake_llm):
    feed_cat_talk(memory, fake_llm, extraction())
    body = fake_llm.requests[0]
    assert body["response_format"]["type"] == "json_schema"
    prompt = " ".join(m["content"] for m in body["messages"])
    assert "Milo knocked my coffee" in prompt


def test_a_cold_session_is_not_promoted(memory, alice_space, fake_llm):
    alice_space.stm_capacity = 1
    alice_space.save()  # the paper's threshold 5: three pages make heat ~4
    add_turns(memory, CAT_TALK + [("ok", "ok")])
    assert fake_llm.requests == []
    assert not LongTermEntry.objects.exists()


def test_every_hot_session_is_promoted_and_an_analysed_hot_one_blocks_none(memory, hot_space, fake_llm):
    """Reference defect: only the single hottest session was checked, so a hot session with nothing left
    to analyse blocked all others."""
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK, start=days_ago(5))
    add_turns(memory, COOKING_TALK + [("ok", "ok")], start=days_ago(2))
    cat, cooking = MidTermSession.objects.order_by("pk")
    # Make the already-analysed cat session by far the hottest.
    MidTermSession.objects.filter(pk=cat.pk).update(n_visit=50)
    Page.objects.filter(session=cooking).update(analyzed=False)
    MidTermSession.objects.filter(pk=cooking.pk).update(l_interaction=3)
    fake_llm.requests.clear()
    report = ConsolidationReport()
    promote_hot_sessions(hot_space, now=days_ago(0), llm=memory.llm, report=report)
    assert report.sessions_promoted == 1
    assert len(fake_llm.requests) == 1
    assert "curry" in " ".join(m["content"] for m in fake_llm.requests[0]["messages"])


def test_an_llm_outage_stores_nothing_and_the_pages_wait_for_the_next_run(memory, hot_space, fake_llm):
    fake_llm.script(status(500), status(500))
    add_turns(memory, CAT_TALK + [("ok", "ok")])
    assert not LongTermEntry.objects.exists()
    assert Page.objects.filter(tier=Page.Tier.MID, analyzed=False).count() == 3
    fake_llm.script(extraction(profile=[("occupation", "nurse", 1)]))
    report = memory.consolidate(user_id="alice", assistant_id="helper")
    assert report.sessions_promoted == 1
    assert LongTermEntry.objects.get().value == "nurse"


@pytest.mark.parametrize(
    "bad_answer",
    [
        reply("Error: the model is overloaded"),
        reply('{"profile": [{"attribute": "occupation", "value": "nurse"'),
        reply_json({"profile": "nurse"}),
    ],
    ids=["error-text", "truncated-json", "wrong-shape"],
)
def test_a_malformed_llm_answer_is_never_stored(memory, hot_space, fake_llm, bad_answer):
    fake_llm.script(bad_answer, bad_answer)
    add_turns(memory, CAT_TALK + [("ok", "ok")])
    assert not LongTermEntry.objects.exists()
    assert Page.objects.filter(tier=Page.Tier.MID, analyzed=False).count() == 3


def test_invented_or_error_like_items_are_rejected_and_grounded_ones_kept(memory, hot_space, fake_llm):
    feed_cat_talk(
        memory,
        fake_llm,
        extraction(
            profile=[
                ("occupation", "astronaut", 1),
                ("pets", "cat named Milo", 1),
                ("hobbies", "Error: none", 2),
            ],
            user_facts=[("user's car", "The user drives a red Ferrari", 2)],
        ),
    )
    assert long_term.user_profile(hot_space) == {"pets": "cat named Milo"}
    assert not LongTermEntry.objects.filter(kind=Kind.USER_KNOWLEDGE).exists()


def test_a_wrongly_cited_page_is_corrected_to_the_page_that_says_it(memory, hot_space, fake_llm):
    pages = feed_cat_talk(memory, fake_llm, extraction(profile=[("occupation", "nurse", 3)]))
    assert list(LongTermEntry.objects.get().source_pages.all()) == [pages[0]]


def test_force_mid_term_analysis_promotes_cold_sessions(memory, alice_space, fake_llm):
    alice_space.stm_capacity = 1
    alice_space.save()
    add_turns(memory, CAT_TALK + [("ok", "ok")])
    fake_llm.script(extraction(profile=[("occupation", "nurse", 1)]))
    report = memory.force_mid_term_analysis(user_id="alice", assistant_id="helper")
    assert report.sessions_promoted == 1
    assert memory.get_user_profile(user_id="alice", assistant_id="helper") == {"occupation": "nurse"}


# --- Profile entries and their history ---------------------------------------------------------


def _pages(space, n):
    from memory_engine.engine.short_term import page_store

    return [page_store(space=space, user_input=f"turn {i}", agent_response="") for i in range(n)]


def test_a_single_valued_attribute_takes_the_new_value_and_keeps_the_old_in_history(alice_space):
    p1, p2 = _pages(alice_space, 2)
    now = days_ago(0)
    long_term.profile_set(
        alice_space,
        attribute="location",
        value="Boston",
        pages=[p1],
        cause="consolidation",
        actor="t",
        now=now,
    )
    entry = long_term.profile_set(
        alice_space,
        attribute="location",
        value="Lisbon",
        pages=[p2],
        cause="consolidation",
        actor="t",
        now=now,
    )
    assert entry.value == "Lisbon"
    assert LongTermEntry.objects.filter(kind=Kind.PROFILE).count() == 1
    history = [(v.before, v.after) for v in entry.versions.all()]
    assert history == [(None, "Boston"), ("Boston", "Lisbon")]
    assert set(entry.source_pages.all()) == {p1, p2}


def test_a_multi_valued_attribute_collects_values_and_ignores_repeats(alice_space):
    p1, p2, p3 = _pages(alice_space, 3)
    now = days_ago(0)
    for value, page in (("painting", p1), ("hiking", p2), ("Painting", p3)):
        entry = long_term.profile_set(
            alice_space,
            attribute="hobbies",
            value=value,
            pages=[page],
            cause="consolidation",
            actor="t",
            now=now,
        )
    assert entry.value == "painting; hiking"
    assert [v.cause for v in entry.versions.all()] == ["consolidation", "consolidation", "merged"]
    assert p3 in entry.source_pages.all()


def test_the_profile_is_never_one_blob_replaced_wholesale(alice_space):
    p1, p2 = _pages(alice_space, 2)
    now = days_ago(0)
    long_term.profile_set(
        alice_space,
        attribute="occupation",
        value="nurse",
        pages=[p1],
        cause="consolidation",
        actor="t",
        now=now,
    )
    long_term.profile_set(
        alice_space, attribute="pets", value="a cat", pages=[p2], cause="consolidation", actor="t", now=now
    )
    assert long_term.user_profile(alice_space) == {"occupation": "nurse", "pets": "a cat"}


# --- Knowledge: duplicates, contradictions, capacity, isolation ------------------------------------


def test_a_near_duplicate_fact_is_merged_not_added_again(memory, hot_space, fake_llm):
    feed_cat_talk(
        memory,
        fake_llm,
        extraction(
            user_facts=[
                ("user's cat", "The user has a cat named Milo", 1),
                ("user's cat", "The user has a cat called Milo", 2),
            ]
        ),
    )
    entry = LongTermEntry.objects.get(kind=Kind.USER_KNOWLEDGE)
    assert entry.status == "active"
    assert entry.versions.filter(cause="merged").count() == 1


def test_a_contradicting_fact_supersedes_the_older_one_which_stays_in_history(alice_space):
    p1, p2 = _pages(alice_space, 2)
    from memory_engine.store.embeddings import get_embedder

    embed = get_embedder().encode_one
    now = days_ago(0)
    old = long_term.knowledge_add(
        alice_space,
        kind=Kind.USER_KNOWLEDGE,
        topic="user's job",
        fact="Alice works as a nurse at the city hospital",
        vector=embed("Alice works as a nurse at the city hospital"),
        pages=[p1],
        cause="consolidation",
        actor="t",
        now=now,
        version=1,
    )
    new = long_term.knowledge_add(
        alice_space,
        kind=Kind.USER_KNOWLEDGE,
        topic="user's job",
        fact="Alice quit nursing and now teaches yoga",
        vector=embed("Alice quit nursing and now teaches yoga"),
        pages=[p2],
        cause="consolidation",
        actor="t",
        now=now,
        version=2,
    )
    old.refresh_from_db()
    assert (old.status, old.superseded_by) == ("superseded", new)
    assert new.status == "active"
    assert old.versions.last().cause == "superseded"


def test_a_turn_whose_fact_was_corrected_twice_is_replaced_by_the_newest_value(alice_space):
    p1, p2, p3, p4 = _pages(alice_space, 4)
    from memory_engine.store.embeddings import get_embedder

    embed = get_embedder().encode_one

    def told(fact: str, page, version: int):
        return long_term.knowledge_add(
            alice_space, kind=Kind.USER_KNOWLEDGE, topic="the party's day", fact=fact, vector=embed(fact),
            pages=[page], cause="consolidation", actor="t", now=days_ago(0), version=version,
        )  # fmt: skip

    told("The party is on Saturday the 12th", p1, 1)
    told("The party moved to Sunday the 13th", p2, 2)
    newest = told("The party moved again, to Monday the 14th", p3, 3)
    assert long_term.replaced_on({p1.pk, p2.pk, p3.pk, p4.pk}) == {p1.pk: newest, p2.pk: newest}


def test_knowledge_beyond_capacity_evicts_the_least_used(alice_space):
    alice_space.knowledge_capacity = 2
    alice_space.save()
    pages = _pages(alice_space, 3)
    from memory_engine.store.embeddings import get_embedder

    facts = ["Alice plays the cello", "Alice grows tomatoes on her balcony", "Alice is learning Portuguese"]
    vectors = get_embedder().encode(facts)
    entries = [
        long_term.knowledge_add(
            alice_space,
            kind=Kind.USER_KNOWLEDGE,
            topic=f"topic {i}",
            fact=f,
            vector=v,
            pages=[p],
            cause="consolidation",
            actor="t",
            now=days_ago(0),
            version=1,
        )
        for i, (f, v, p) in enumerate(zip(facts, vectors, pages, strict=True))
    ]
    LongTermEntry.objects.filter(pk__in=[entries[0].pk, entries[2].pk]).update(hits=3)
    assert (
        long_term.knowledge_enforce_capacity(
            alice_space, kind=Kind.USER_KNOWLEDGE, actor="t", now=days_ago(0), version=2
        )
        == 1
    )
    assert LongTermEntry.objects.get(pk=entries[1].pk).status == "evicted"


def test_assistant_knowledge_never_leaks_between_users(memory, alice_space, bob_space, fake_llm):
    """Reference defect: assistant knowledge was keyed by assistant only, shared by all its users."""
    for space in (alice_space, bob_space):
        space.stm_capacity = 1
        space.heat_threshold = 3.5
        space.save()
    fake_llm.script(extraction(assistant_knowledge=[("cats and tables", "Cats do like pushing things off tables", 3)]))
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK + [("ok", "ok")], user="alice")
    assert memory.get_knowledge(user_id="alice", assistant_id="helper", kind=Kind.ASSISTANT_KNOWLEDGE)
    assert memory.get_knowledge(user_id="bob", assistant_id="helper", kind=Kind.ASSISTANT_KNOWLEDGE) == []
    result = memory.retrieve(user_id="bob", assistant_id="helper", query="cats pushing things off tables")
    assert result.assistant_knowledge == [] and result.pages == []


def test_an_edit_is_versioned_and_seen_by_retrieval_at_once(memory, hot_space, fake_llm):
    feed_cat_talk(memory, fake_llm, extraction(user_facts=[("user's cat", "The user has a cat named Milo", 1)]))
    entry = LongTermEntry.objects.get(kind=Kind.USER_KNOWLEDGE)
    memory.retrieve(user_id="alice", assistant_id="helper", query="cat")  # indexes are now cached
    curation.entry_edit(entry=entry, value="The user has a tortoise named Sheldon", actor="admin:root", cause="admin")
    result = memory.retrieve(user_id="alice", assistant_id="helper", query="tortoise Sheldon")
    assert [i.text for i in result.user_knowledge] == ["The user has a tortoise named Sheldon"]
    last = entry.versions.last()
    assert (last.before, last.after, last.cause, last.actor) == (
        "The user has a cat named Milo",
        "The user has a tortoise named Sheldon",
        "admin",
        "admin:root",
    )


def test_a_deleted_entry_leaves_retrieval_but_keeps_its_history(memory, hot_space, fake_llm):
    feed_cat_talk(memory, fake_llm, extraction(user_facts=[("user's cat", "The user has a cat named Milo", 1)]))
    entry = LongTermEntry.objects.get(kind=Kind.USER_KNOWLEDGE)
    memory.retrieve(user_id="alice", assistant_id="helper", query="cat")
    curation.entry_delete(entry=entry, actor="admin:root", cause="admin")
    result = memory.retrieve(user_id="alice", assistant_id="helper", query="cat named Milo")
    assert result.user_knowledge == []
    assert entry.versions.last().after is None
