"""The page-text benchmark (bench/page_text.py) on one LoCoMo conversation: each way of embedding a page
is searched for the same questions, and the embedding cost is measured at two lengths."""

import pytest

from bench.page_text import _start, _tokens, measure, report
from memory_engine.config import memory_settings
from memory_engine.formats.locomo import iter_pages, load_samples


@pytest.fixture(scope="module")
def figures() -> dict:
    """What `manage.py bench_page_text --conversations 1` measures and reports (half a minute a run)."""
    return measure(conversations=1)


def test_one_conversation_is_searched_three_ways_for_the_same_questions(figures):
    assert figures["pages"] == len(list(iter_pages(load_samples(memory_settings().locomo_file)[0])))
    assert figures["questions"] > 50 and figures["pages_past_the_window"] == 0
    recalls = list(figures["recall"].values())
    assert len(recalls) == 3 and all(0 < share < 1 for share in recalls)
    assert len(set(recalls)) > 1  # the reply changes what is found
    short, window = figures["texts_a_second"].values()
    assert short > window > 0  # a text at the window costs more than a short one


def test_a_reply_is_cut_to_its_first_tokens_and_a_short_one_kept_whole():
    assert _start("short reply", 32) == "short reply"
    cut = _start(" ".join(["memory"] * 100), 32)
    assert _tokens(cut) == 32 + 2  # with the model's two special tokens


def test_the_report_prints_a_row_for_each_way(figures):
    printed = report(figures)
    assert "| the person's words alone |" in printed and "texts a second at 256 tokens" in printed
