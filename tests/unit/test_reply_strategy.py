"""How a turn is answered is chosen once, from the model answering (engine/reply_strategy.py), not by forks on
its kind wherever a reply is made."""

import ast
from pathlib import Path

import pytest

from memory_engine.engine.reply_strategy import BUNDLED, CAPABLE, NO_MODEL, strategy_for
from memory_engine.models import Page

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize(
    ("weak", "voice", "chosen"),
    [(False, "plain", CAPABLE), (False, "model", CAPABLE), (True, "plain", NO_MODEL), (True, "model", BUNDLED)],
)
def test_the_strategy_follows_the_model_and_the_offline_voice(settings, weak, voice, chosen):
    settings.MEMORYOS = {**settings.MEMORYOS, "OFFLINE_VOICE": voice}
    assert strategy_for(weak) is chosen


def test_each_strategy_says_what_a_models_reply_is_and_which_prompt_it_gets():
    assert (CAPABLE.compact, CAPABLE.model_source) == (False, Page.ReplySource.MODEL)
    assert (BUNDLED.compact, BUNDLED.model_source) == (True, Page.ReplySource.WEAK_MODEL)
    assert (NO_MODEL.compact, NO_MODEL.model_source) == (True, Page.ReplySource.WEAK_MODEL)


def weak_reads(source: str) -> int:
    """How many times `source` reads an LLM's `.weak`."""
    return sum(isinstance(node, ast.Attribute) and node.attr == "weak" for node in ast.walk(ast.parse(source)))


def test_the_models_kind_is_read_where_a_strategy_is_chosen_and_nowhere_else():
    assert weak_reads("if llm.weak:\n    x = other.weak\nweak = 1\n") == 2
    found = {
        str(path.relative_to(ROOT / "memory_engine")): count
        for path in sorted((ROOT / "memory_engine").rglob("*.py"))
        if (count := weak_reads(path.read_text()))
    }
    assert found == {
        "engine/llm_choice.py": 1,  # weak_model: a space's model, read without reaching it
        "engine/updater.py": 3,  # consolidation's own choice: a weak model's promotion reads facts by words
        "interfaces/memoryos.py": 1,  # the class's own LLM, when one is given, for the inspector
        "services/conversation.py": 1,  # a turn's strategy, chosen once
    }, "a new fork on the model's kind: choose it in engine/reply_strategy.py"
