"""Choosing retrieval settings by leave-one-conversation-out: the folds (bench/loo.py) and tune_locomo."""

import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from bench.loo import Score, best_setting, held_out_mean, leave_one_out
from bench.management.commands.tune_locomo import label, parse_grid
from tests.integration.test_evaluation import SAMPLE

TABLE = {
    "s1": {"A": Score(8, 10), "B": Score(5, 10), "C": Score(1, 10)},
    "s2": {"A": Score(6, 10), "B": Score(6, 10), "C": Score(9, 10)},
}


def test_each_conversation_is_scored_with_the_setting_best_on_the_others():
    folds = {fold.held_out: fold for fold in leave_one_out(TABLE)}
    assert (folds["A"].chosen, folds["A"].chosen_on_others, folds["A"].held_out_score) == ("s2", 0.75, 0.6)
    assert (folds["B"].chosen, folds["B"].held_out_score) == ("s2", 0.6)
    # Left out, C's own strong showing for s2 cannot choose s2: on A and B, s1 is better (13/20 vs 12/20).
    assert (folds["C"].chosen, folds["C"].chosen_on_others, folds["C"].held_out_score) == ("s1", 0.65, 0.1)
    assert held_out_mean(TABLE, list(folds.values())) == pytest.approx(13 / 30)
    assert best_setting(TABLE, ["A", "B", "C"]) == "s2"


def test_leave_one_out_needs_two_conversations():
    with pytest.raises(ValueError):
        leave_one_out({"s1": {"A": Score(1, 1)}})


@pytest.fixture
def two_conversations(tmp_path):
    second = json.loads(json.dumps(SAMPLE)) | {"sample_id": "conv-t2"}
    second["conversation"]["session_2"][0]["text"] = "I swam across the lake near Geneva last week!"
    second["qa"][1] = {"question": "Where did Ann swim?", "answer": "Geneva", "evidence": ["D2:1"], "category": 4}
    path = tmp_path / "two.json"
    path.write_text(json.dumps([SAMPLE, second]), encoding="utf-8")
    return path


@pytest.mark.django_db(transaction=True)
def test_tune_locomo_scores_every_setting_as_the_evaluation_does(two_conversations, tmp_path, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "STM_CAPACITY": 2}
    out = tmp_path / "tune"
    call_command(
        "tune_locomo",
        "--file",
        str(two_conversations),
        "--no-llm",
        "--k",
        "5",
        "--out",
        str(out),
        "--grid",
        "RETRIEVAL_LEXICAL_WEIGHT=0,1",
        "--grid",
        "RETRIEVAL_IGNORE_NAMES=false",
    )
    tuned = json.loads((out / "tune.json").read_text())
    assert set(tuned["recall"]) == {"LEXICAL_WEIGHT=0.0 IGNORE_NAMES=False", "LEXICAL_WEIGHT=1.0 IGNORE_NAMES=False"}
    assert tuned["questions"] == {"conv-t1": 3, "conv-t2": 3}
    assert [fold["held_out"] for fold in tuned["folds"]] == ["conv-t1", "conv-t2"]
    assert "Held out, pooled by question" in (out / "tune.md").read_text()
    assert "| LEXICAL_WEIGHT=1.0 IGNORE_NAMES=False |" in (out / "tune.md").read_text().split("pooled over")[-1]

    for weight in (0.0, 1.0):  # each setting's figure is evaluate_locomo's under that setting
        settings.MEMORYOS = {**settings.MEMORYOS, "RETRIEVAL_LEXICAL_WEIGHT": weight, "RETRIEVAL_IGNORE_NAMES": False}
        evaluated = tmp_path / f"eval-{weight}"
        call_command("evaluate_locomo", "--file", str(two_conversations), "--no-llm", "--out", str(evaluated))
        samples = json.loads((evaluated / "locomo.json").read_text())["samples"]
        setting = f"LEXICAL_WEIGHT={weight} IGNORE_NAMES=False"
        for sample in samples:
            recalls = [_recall_at(q, 5) for q in _scored(sample)]
            assert tuned["recall"][setting][sample["sample_id"]] == pytest.approx(sum(recalls) / len(recalls))
        asked = [q for sample in samples for q in _scored(sample)]
        for k in (5, 10, 25):  # pooled over both conversations, per category and for all four
            assert tuned["by_category"][setting][f"all@{k}"] == pytest.approx(
                sum(_recall_at(q, k) for q in asked) / len(asked)
            )
            for category in {q["category"] for q in asked}:
                mine = [_recall_at(q, k) for q in asked if q["category"] == category]
                assert tuned["by_category"][setting][f"{category}@{k}"] == pytest.approx(sum(mine) / len(mine))


def _scored(sample: dict) -> list[dict]:
    return [q for q in sample["questions"] if q["category"] in (1, 2, 3, 4) and q["evidence"]]


def _recall_at(question: dict, k: int) -> float:
    top = list(dict.fromkeys(question["ranked"]["MemoryOS"]))[:k]
    return len(set(question["evidence"]) & set(top)) / len(set(question["evidence"]))


def test_one_at_a_time_is_the_settings_as_they_are_then_each_value_changed_alone():
    grid = ["RETRIEVAL_DATES=false", "RETRIEVAL_CHAIN_WEIGHT=0,0.3"]
    assert parse_grid(grid, one_at_a_time=True) == [
        (),
        (("RETRIEVAL_DATES", False),),
        (("RETRIEVAL_CHAIN_WEIGHT", 0.0),),
        (("RETRIEVAL_CHAIN_WEIGHT", 0.3),),
    ]
    assert len(parse_grid(grid)) == 2  # every combination: one value of one times two of the other
    assert [label(c) for c in parse_grid(grid, one_at_a_time=True)][:2] == ["as set", "DATES=False"]


@pytest.mark.parametrize(
    "grid, message",
    [
        ("STM_CAPACITY=3,7", "cannot tune 'STM_CAPACITY'"),
        ("RETRIEVAL_CHAIN_WEIGHT=high", "bad value"),
        ("RETRIEVAL_IGNORE_NAMES=maybe", "bad value"),
        ("RETRIEVAL_CHAIN_WEIGHT=", "no values"),
    ],
)
def test_tune_locomo_refuses_a_setting_it_cannot_tune_or_a_bad_value(grid, message, tmp_path):
    with pytest.raises(CommandError, match=message):
        call_command("tune_locomo", "--grid", grid, "--out", str(tmp_path))
