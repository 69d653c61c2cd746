"""bench_knowledge_kept (bench/knowledge_kept.py): what a promotion keeps with no LLM, sampled and scored."""

import json
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from bench import knowledge_kept


def test_what_is_kept_is_the_persons_statements_and_values_never_the_reply():
    pages = [
        knowledge_kept._page("I live in Porto, in Portugal. Can you help me?", "I hope these ideas help! I'm an AI."),
        knowledge_kept._page("ok", "Last week I won my second tournament!"),
    ]
    kept = knowledge_kept.kept(pages)
    assert [(e["kind"], e["text"]) for e in kept] == [
        ("user", "I live in Porto, in Portugal."),
        ("profile", "location: Porto"),
    ]


def test_a_labelled_sample_is_scored_against_what_is_kept_now(tmp_path):
    drawn = knowledge_kept.sample(seed=3)
    assert drawn and len({e["id"] for e in drawn}) == len(drawn)
    assert {e["kind"] for e in drawn} >= {"user", "profile"}
    # label one kept entry a fact, one not, and one entry no longer kept (a reply) a fact
    user = next(e for e in drawn if e["kind"] == "user")
    profile = next(e for e in drawn if e["kind"] == "profile")
    gone = {**user, "kind": "reply", "text": "Last week I won my second tournament!"}
    labelled = [{**user, "fact": True}, {**profile, "fact": False}, {**gone, "fact": True}]
    scored = knowledge_kept.scored(labelled)
    assert scored["rows"][("all", "all")] == {"labelled": 3, "kept": 2, "facts kept": 1, "facts lost": 1}
    assert scored["lost"] == [labelled[2]] and scored["kept, not facts"] == [labelled[1]]

    path = tmp_path / "labelled.json"
    path.write_text(json.dumps({"entries": labelled}))
    out = StringIO()
    call_command("bench_knowledge_kept", "--labelled", str(path), stdout=out)
    assert "| all | all | 3 | 2 | 1 (50.0%) | 1 |" in out.getvalue()


def test_the_command_needs_something_to_do():
    with pytest.raises(CommandError, match="--sample"):
        call_command("bench_knowledge_kept")
