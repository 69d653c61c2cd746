"""The defects of the reference implementation (shared/docs/MEMORYOS.md), each shown fixed.

Covered in other modules:
- a corrupt index file loaded as empty memory:
  test_index.py::test_a_corrupt_file_is_rebuilt_not_read_as_empty_memory
- one page stored in two sessions: test_mid_term.py::test_the_database_refuses_a_page_in_two_tiers_at_once
- a session summary never refreshed:
  test_mid_term.py::test_a_session_summary_keywords_and_embedding_are_refreshed_when_pages_merge_in
- recency in practice constant: test_mid_term.py::test_recency_uses_the_real_time_since_the_last_visit
- only the hottest session checked for promotion:
  test_long_term.py::test_every_hot_session_is_promoted_and_an_analysed_hot_one_blocks_none
- the profile one blob, LLM error text stored: test_long_term.py::test_the_profile_is_never_one_blob_replaced_wholesale,
  test_long_term.py::test_a_malformed_llm_answer_is_never_stored
- knowledge FIFO without dedup or contradictions:
  test_long_term.py::test_a_near_duplicate_fact_is_merged_not_added_again,
  test_long_term.py::test_a_contradicting_fact_supersedes_the_older_one_which_stays_in_history
- assistant knowledge shared across users: test_long_term.py::test_assistant_knowledge_never_leaks_between_users
"""

from datetime import timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memory_engine.engine.short_term import page_store
from memory_engine.interfaces.memoryos import MemoryOS
from memory_engine.models import Page
from memory_engine.store import index
from tests.memory_helpers import CAT_TALK, add_turns, days_ago, nothing_extracted, write_concurrently


def store_queries(space) -> int:
    with CaptureQueriesContext(connection) as queries:
        page_store(space=space, user_input="Another turn", agent_response="Noted.")
    return len(queries)


def test_storing_a_turn_costs_the_same_however_long_the_history(memory, alice_space, fake_llm, tmp_path):
    """Reference: every add rewrote JSON files holding the whole history (O(n) per turn)."""
    fake_llm.responder = nothing_extracted
    alice_space.stm_capacity = 2
    alice_space.save()
    early = store_queries(alice_space)
    add_turns(memory, CAT_TALK * 8)
    files_before = {p: p.stat().st_mtime_ns for p in (tmp_path / "indexes").rglob("*")}
    late = store_queries(alice_space)
    assert late == early <= 5
    assert {p: p.stat().st_mtime_ns for p in (tmp_path / "indexes").rglob("*")} == files_before


def test_continuity_and_the_thread_summary_survive_a_restart(memory, alice_space):
    """Reference: the continuity pointer lived in process memory and was lost on restart."""
    alice_space.stm_capacity = 1
    alice_space.heat_threshold = 1000
    alice_space.save()
    add_turns(memory, CAT_TALK[:2], start=days_ago(1))
    index.forget_all()  # a new process: nothing cached
    restarted = MemoryOS()
    add_turns(
        restarted,
        CAT_TALK[2:] + [("ok", "ok")],
        start=days_ago(1) + timedelta(minutes=4),
    )
    pages = list(Page.objects.filter(tier=Page.Tier.MID).order_by("seq"))
    assert [p.continues_previous for p in pages] == [False, True, True]
    assert len({p.session_id for p in pages}) == 1
    assert "Milo" in pages[-1].thread_summary


@pytest.mark.django_db(transaction=True)
def test_concurrent_writers_store_every_turn_once_in_order(fake_llm):
    """Reference: no locking across processes; one library instance per user."""
    memory = MemoryOS(consolidate=False)
    for user in ("alice", "bob"):
        memory.create_user(user)
    memory.create_assistant("helper")
    turns_each = 15

    writers = [("alice", 1), ("alice", 2), ("alice", 3), ("bob", 1), ("bob", 2)]
    errors = write_concurrently(memory, writers, turns_each)
    assert errors == []
    for user, count in (("alice", 3), ("bob", 2)):
        rows = list(Page.objects.filter(space__user__external_id=user).order_by("seq").values_list("seq", "user_input"))
        assert [seq for seq, _ in rows] == list(range(1, count * turns_each + 1))
        for writer in range(1, count + 1):
            mine = [text for _, text in rows if text.startswith(f"{user} w{writer} ")]
            assert mine == [f"{user} w{writer} turn {i}" for i in range(turns_each)]
