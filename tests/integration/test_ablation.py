"""The ideas' measurement (bench/ablation.py, manage.py ablate_locomo): packing, leave-one-out, the command."""

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bench import ablation
from tests.integration.test_tuning import two_conversations  # noqa: F401 (a fixture: two tiny LoCoMo conversations)


def conversation(sample_id: str, tokens: list[int], short_tokens: int = 0) -> ablation.Conversation:
    n = len(tokens)
    return ablation.Conversation(
        sample_id=sample_id,
        seq=np.arange(1, n + 1),
        session=np.ones(n, dtype=int),
        tokens=np.array(tokens),
        turn_tokens=np.array([[t // 2, t - t // 2] for t in tokens]),
        turns=[(f"D{i}:1", f"D{i}:2") for i in range(n)],
        vectors=np.eye(n),
        short_tokens=short_tokens,
        short_turns=frozenset({"S:1"}) if short_tokens else frozenset(),
    )


def question(evidence: set[str], dense: list[float], category: int = 4) -> ablation.Question:
    n = len(dense)
    return ablation.Question(
        text="q",
        category=category,
        evidence=frozenset(evidence),
        vector=np.zeros(n),
        dense=np.array(dense),
        bm25={ablation.BM25_SHAPES[0]: np.zeros(n)},
        bm25_undated=np.zeros(n),
        turn_dense=np.zeros((n, 2)),
        turn_bm25=np.zeros((n, 2)),
        named=None,
    )


def test_a_context_is_packed_short_term_first_and_a_later_shorter_page_still_fits():
    c = conversation("c", [50, 400, 30], short_tokens=600)
    q = question({"D2:1", "S:1", "D1:1"}, [0.9, 0.5, 0.1])
    shown = ablation.ranked(c, q, {"chain_weight": 0.0})
    scores = ablation.score_question(c, q, shown, True, budgets=(1000, 1100))
    assert scores.recall == pytest.approx(2 / 3)  # the first 10 turns: every page's, not short-term's
    assert scores.shown[1000] == pytest.approx(2 / 3) and scores.tokens[1000] == 680  # 600 + 50 + 30: page 1 left out
    assert scores.shown[1100] == pytest.approx(1.0) and scores.tokens[1100] == 1080
    without = ablation.score_question(c, q, shown, False, budgets=(100,))
    assert without.shown[100] == pytest.approx(1 / 3) and without.tokens[100] == 80


def test_the_ceiling_shows_the_evidence_pages_first_whatever_the_scores():
    c = conversation("c", [40, 40, 40, 40])
    q = question({"D3:2"}, [0.9, 0.8, 0.7, 0.0])
    assert [page for page, _, _ in ablation.ceiling(c, q, {})][0] == 3
    assert [page for page, _, _ in ablation.ranked(c, q, {"chain_weight": 0.0})][0] == 0


def test_a_setting_is_chosen_on_the_other_conversations_and_scored_on_the_one_left_out():
    def prefer(c, q, s):  # setting "first" ranks page 0 first, "last" page 1
        return ablation.whole(c, [0, 1] if s["pick"] == "first" else [1, 0])

    one, two, three = (conversation(name, [1000, 1000]) for name in "abc")  # a context of 1,500 shows one page
    one.questions = [question({"D0:1"}, [0, 0])]  # "first" is right here ...
    two.questions = [question({"D0:1"}, [0, 0])]  # ... and here
    three.questions = [question({"D1:1"}, [0, 0])]  # "last" is right only here
    idea = ablation.Idea("pick", prefer, ({"pick": "first"}, {"pick": "last"}))
    result = ablation.measure([one, two, three], idea)
    assert result.chosen == ["pick=first", "pick=first", "pick=first"]  # "last" never wins on the other two
    # Held out, conversation "c" is scored with "first", which leaves its evidence out of the context.
    assert result.pooled.n == 3 and result.pooled.shown[1500] == pytest.approx(2.0)
    assert result.pooled.recall == pytest.approx(3.0) and result.pooled.tokens[1500] == 3 * 1000


@pytest.mark.django_db(transaction=True)
def test_the_command_measures_every_idea_and_reuses_the_spaces_it_left(two_conversations, tmp_path, settings):  # noqa: F811
    settings.MEMORYOS = {**settings.MEMORYOS, "STM_CAPACITY": 2}
    with pytest.raises(CommandError, match="no space for conv-t1"):
        call_command("ablate_locomo", "--file", str(two_conversations), "--reuse", "--out", str(tmp_path / "r"))
    call_command("ablate_locomo", "--file", str(two_conversations), "--out", str(tmp_path / "a"))
    table = (tmp_path / "a" / "ablation.md").read_text()
    rows = {line.split(" | ")[0].strip("| "): line for line in table.splitlines() if line.startswith("| ")}
    for idea in ablation.ideas(10, 20):
        assert idea.name in rows
    # Three questions with evidence a conversation; the tiny pages all fit, and the ceiling finds everything.
    assert rows["ceiling: the evidence's pages first"].split(" | ")[1:5] == ["1.000"] * 4
    assert "| short-term | " in table and "Conversations: conv-t1, conv-t2." in table
    call_command("ablate_locomo", "--file", str(two_conversations), "--reuse", "--out", str(tmp_path / "b"))
    again = (tmp_path / "b" / "ablation.md").read_text()
    assert again.split("\n`manage.py")[0] == table.split("\n`manage.py")[0]
