"""What a prompt shows of the memory, piece by piece: a long page by the part that matches (engine/excerpt.py),
the conversation in progress (retriever.in_progress), BM25 scores of pages kept apart from the index, and
LongMemEval read as the evaluation reads it (formats/longmemeval.py, bench/longmemeval_run.py)."""

from datetime import UTC, datetime, timedelta

import pytest

from bench.longmemeval_run import ndcg, recall_all, recall_any, sessions_ranked
from memory_engine.engine.excerpt import cut_to_match, excerpt
from memory_engine.engine.retriever import in_progress
from memory_engine.formats.common import CUT_MARK
from memory_engine.formats.locomo import iter_pages, parse_session_datetime
from memory_engine.formats.longmemeval import as_sample, is_abstention, parse_date
from memory_engine.models import Page
from memory_engine.store.lexical import BM25Index

ADVICE = " ".join(f"General advice number {n} is to drink water." for n in range(30))


def test_a_page_that_fits_is_shown_whole():
    assert excerpt("dentist", "When is my dentist?", "Friday.", 400) == ("When is my dentist?", "Friday.")


def test_a_long_reply_is_cut_to_the_sentences_that_match_in_their_order_with_a_mark_where_some_were_left_out():
    reply = f"{ADVICE} Your dentist is on Friday at nine. {ADVICE}"
    said, shown = excerpt("When is my dentist appointment?", "Remind me of my dentist.", reply, 300)
    assert said == "Remind me of my dentist."
    assert shown == "… Your dentist is on Friday at nine. …"
    assert len(said) + len(shown) <= 300


def test_the_persons_words_come_first_and_a_reply_with_no_match_shows_its_opening():
    said = "I moved to Ghent last spring and I love it. " * 3
    kept, reply = excerpt("Where do I live?", said.strip(), ADVICE, 200)
    assert kept.startswith("I moved to Ghent") and reply.startswith("General advice number 0")
    assert len(kept) + len(reply) <= 200 + 4


def test_no_room_for_a_reply_shows_none_of_it():
    said = "My sister lives in Porto. " * 20
    kept, reply = excerpt("sister", said.strip(), ADVICE, 60)
    assert reply == "" and "Porto" in kept


def test_a_text_without_sentences_is_cut_at_the_limit():
    assert cut_to_match("x" * 500, {"x"}, 100) == "x" * 100 + " …"


def _page(minutes_ago: float, now: datetime) -> Page:
    return Page(timestamp=now - timedelta(minutes=minutes_ago))


def test_the_conversation_in_progress_runs_back_to_the_first_pause_longer_than_the_gap():
    now = datetime(2026, 12, 2, 12, tzinfo=UTC)
    pages = [_page(m, now) for m in (3000, 2990, 85, 50, 25, 5)]
    assert in_progress(pages, now, timedelta(minutes=30)) == pages[3:]
    assert in_progress(pages, now + timedelta(minutes=40), timedelta(minutes=30)) == []  # a new conversation
    assert in_progress(pages, now, timedelta(minutes=60)) == pages[2:]
    assert in_progress([], now, timedelta(minutes=30)) == []


def test_a_text_kept_apart_is_scored_with_the_indexs_statistics_as_search_would_rank_it():
    texts = {1: "my cat Milo sleeps", 2: "a cat naps", 3: "the weather is fine", 4: "coffee in the morning"}
    index = BM25Index()
    for doc_id, text in texts.items():
        index.add(doc_id, text)
    searched = dict(index.search("Milo the cat", 4))
    assert searched[1] > searched[2] > 0
    for doc_id in (1, 2):
        index.remove(doc_id)
    apart = index.score_texts("Milo the cat", {1: texts[1], 2: texts[2], 9: "nothing to do with it"})
    assert apart[1] > apart[2] > 0 and apart[9] == 0.0
    assert apart[1] == pytest.approx(searched[1], rel=0.2)  # the same formula; one document counted, not two


QUESTION = {
    "question_id": "q1_abs",
    "question_type": "single-session-user",
    "question": "Where does my sister live?",
    "answer": 42,
    "question_date": "2023/05/30 (Tue) 10:18",
    "haystack_dates": ["2023/05/20 (Sat) 16:31", "2023/05/02 (Tue) 09:05"],
    "haystack_session_ids": ["later", "earlier"],
    "haystack_sessions": [
        [{"role": "user", "content": "Plan my garden."}, {"role": "assistant", "content": "Sure."}],
        [
            {"role": "user", "content": "My sister lives in Porto.", "has_answer": True},
            {"role": "assistant", "content": "x" * 9000},
        ],
    ],
    "answer_session_ids": ["earlier"],
}


def test_a_longmemeval_question_is_read_as_a_locomo_sample_sessions_in_date_order_long_turns_cut():
    sample = as_sample(QUESTION)
    assert sample["session_ids"] == {1: "earlier", 2: "later"} and sample["answer_sessions"] == [1]
    assert sample["qa"] == [
        {
            "question": "Where does my sister live?",
            "answer": "42",
            "evidence": ["D1:1"],
            "category": "single-session-user",
        }
    ]
    assert sample["abstention"] and is_abstention(QUESTION)
    assert parse_date(QUESTION["question_date"]) == datetime(2023, 5, 30, 10, 18, tzinfo=UTC)
    conversation = sample["conversation"]
    assert parse_session_datetime(conversation["session_1_date_time"]) == datetime(2023, 5, 2, 9, 5, tzinfo=UTC)
    pages = list(iter_pages(sample))
    assert [page.dia_ids for page in pages] == [["D1:1", "D1:2"], ["D2:1", "D2:2"]]
    assert len(pages[0].agent_response) == 8000 and pages[0].agent_response.endswith(CUT_MARK)  # as an import cuts


def test_the_papers_figures_count_turns_and_sessions_as_it_does():
    ranked = ["D3:1", "D1:1", "D3:2", "D2:4"]
    assert sessions_ranked(ranked) == [3, 1, 2]
    assert recall_any(["D1:1", "D9:9"], ranked, 2) == 1.0 and recall_all(["D1:1", "D9:9"], ranked, 4) == 0.0
    assert recall_all(["D1:1", "D2:4"], ranked, 4) == 1.0 and recall_all(["D1:1", "D2:4"], ranked, 3) == 0.0
    assert ndcg(["D3:1"], ranked, 5) == 1.0
    assert ndcg(["D1:1"], ranked, 5) == pytest.approx(1 / 1.5849625, rel=1e-6)
    assert ndcg([], ranked, 5) == 0.0


def test_a_context_setting_is_scored_per_locomo_conversation_and_longmemeval_question_type():
    from bench.management.commands.choose_context import unit_scores

    curve = {"250": [240, 0], "1500": [1490, 2]}  # half the evidence on average over the two budgets
    locomo = {
        "samples": [
            {
                "sample_id": "conv-1",
                "questions": [
                    {"category": 1, "evidence": ["D1:1", "D1:2"], "curve": {"MemoryOS": curve}},
                    {"category": 5, "evidence": ["D1:1"], "curve": {"MemoryOS": curve}},  # adversarial: left out
                ],
            }
        ]
    }
    longmemeval = {
        "questions": [
            {
                "question_type": "multi-session",
                "abstention": False,
                "evidence": ["D1:1", "D2:1"],
                "curve": {"MemoryOS": curve},
            },
            {"question_type": "multi-session", "abstention": True, "evidence": ["D1:1"], "curve": {"MemoryOS": curve}},
        ]
    }
    units = unit_scores(locomo, longmemeval)
    assert {name: (score.n, score.mean) for name, score in units.items()} == {
        "locomo conv-1": (1, 0.5),
        "longmemeval multi-session": (1, 0.5),
    }
