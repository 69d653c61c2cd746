"""Training the reranker (bench/reranker.py, manage.py train_reranker) on a small set: the pairs it learns from,
the int8 ONNX graph it writes and the record beside it, and the reranker engine/reranker.py loads from them."""

import json

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from bench import reranker as training
from memory_engine.engine.reranker import Reranker

CONVERSATION = {
    "id": "one",
    "sessions": [
        {
            "days_after_previous": 0,
            "turns": [
                {"say": "hi there, how is your day going?"},
                {"say": "My GP switched my blood pressure pills last week. I take warfarin every morning."},
                {"say": "We live in Porto these days, near the river."},
                {"say": "My sister Ana is visiting in June."},
                {"ask": "what's that blood thinner I'm on called?", "expect": ["warfarin"]},
                {"say": "We moved to Lisbon in the spring."},
                {"ask": "which city do we live in now?", "expect": ["lisbon"], "stale": ["porto"]},
                {"ask": "what's my blood type?", "not_told": True},
                {"say": "thanks, that helps a lot"},
            ],
        }
    ],
}


@pytest.fixture(scope="module")
def chat_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("sets")
    (folder / "chat_one.json").write_text(json.dumps({"conversations": [CONVERSATION]}))
    return folder


def test_a_question_learns_from_the_sentences_said_before_it(chat_folder):
    found = {q.text: q for q in training.questions(chat_folder / "chat_one.json")}

    thinner = found["what's that blood thinner I'm on called?"]
    assert sorted(thinner.candidates[i] for i in thinner.answers) == [
        "I take warfarin every morning.",  # the sentence, and its short message whole, as recall reads them
        "My GP switched my blood pressure pills last week. I take warfarin every morning.",
    ]
    city = found["which city do we live in now?"]
    assert [city.candidates[i] for i in city.answers] == ["We moved to Lisbon in the spring."]
    assert [city.candidates[i] for i in city.ignored] == ["We live in Porto these days, near the river."]
    assert not found["what's my blood type?"].answers and found["what's my blood type?"].asks
    assert not found["thanks, that helps a lot"].answers and not found["thanks, that helps a lot"].asks

    pairs = training.pairs(list(found.values()), seed=7)
    assert ("which city do we live in now?", "We live in Porto these days, near the river.", 0.0) not in pairs
    assert ("what's that blood thinner I'm on called?", "I take warfarin every morning.", 1.0) in pairs
    assert {label for text, _, label in pairs if text == "what's my blood type?"} == {0.0}


@pytest.fixture(scope="module")
def trained(chat_folder, tmp_path_factory):
    result = training.train([chat_folder / "chat_one.json"], epochs=1, log=lambda line: None)
    folder = training.export(result, tmp_path_factory.mktemp("reranker"))
    return result, folder


def test_the_written_graph_scores_as_the_trained_model_does(trained):
    import torch

    result, folder = trained
    question = "what's that blood thinner I'm on called?"
    sentences = ["I take warfarin every morning.", "My sister Ana is visiting in June.", "We moved to Lisbon."]
    feed = result.tokenizer([question] * 3, sentences, return_tensors="pt", padding=True)
    with torch.no_grad():
        expected = torch.sigmoid(result.model(**feed).logits.squeeze(-1)).numpy()

    scores = Reranker(folder).scores(question, sentences)

    assert scores.shape == (3,) and np.all((scores > 0) & (scores < 1))
    assert np.abs(scores - expected).max() < 0.05  # int8 weights: close to the float model, not equal
    assert Reranker(folder).scores(question, []).shape == (0,)


def test_the_record_says_what_it_was_trained_on_and_how(trained):
    _, folder = trained
    record = json.loads((folder / "reranker.json").read_text())
    assert record["sets"] == ["chat_one.json"] and record["seed"] == 7 and record["epochs"] == 1
    assert record["initialised from"] == "all-MiniLM-L6-v2 (bundled)"
    assert sorted(path.name for path in folder.iterdir()) == ["model.onnx", "reranker.json", "tokenizer.json"]


def test_the_command_refuses_a_set_it_does_not_know_and_leaving_every_set_out(chat_folder, tmp_path):
    with pytest.raises(CommandError, match="no such chat set: chat_two"):
        call_command("train_reranker", out=str(tmp_path / "r"), data=str(chat_folder), leave_out=["chat_two"])
    with pytest.raises(CommandError, match="nothing to train on"):
        call_command("train_reranker", out=str(tmp_path / "r"), data=str(chat_folder), leave_out=["chat_one"])
    with pytest.raises(CommandError, match="no chat sets"):
        call_command("train_reranker", out=str(tmp_path / "r"), data=str(tmp_path))
    assert not (tmp_path / "r").exists()
    (tmp_path / "a-file").write_text("")
    with pytest.raises(CommandError, match="is a file, not a folder"):
        call_command("train_reranker", out=str(tmp_path / "a-file"), data=str(chat_folder))


def test_with_the_setting_naming_the_folder_a_quoted_reply_carries_the_rerankers_score(trained, settings):
    from datetime import UTC, datetime

    from memory_engine.engine import recall
    from memory_engine.engine.reranker import get_reranker
    from memory_engine.language.intent import read

    assert get_reranker() is None  # off by default
    settings.MEMORYOS = {**settings.MEMORYOS, "RERANKER": str(trained[1])}
    reranker = get_reranker()
    assert isinstance(reranker, Reranker) and get_reranker() is reranker  # loaded once
    now = datetime(2026, 11, 20, tzinfo=UTC)
    said = [
        recall.Statement("I take warfarin every morning.", now, 1, 1),
        recall.Statement("My sister Ana is visiting in June.", now, 2, 2),
    ]

    reply = recall.respond(
        read("which pill do I take every morning?"), said, recall.get_embedder(), now, reranker=reranker
    )

    assert reply is not None and reply.quoted and all(0 < s.likelihood < 1 for s in reply.quoted)


def test_a_retrievals_pages_are_reranked_only_with_the_spaces_reranker_weight(trained, settings, memory, alice_space):
    from memory_engine.engine.retriever import retrieve
    from tests.memory_helpers import CAT_TALK, add_turns

    alice_space.stm_capacity = 1  # the turns move on to mid-term pages, which a retrieval ranks
    alice_space.save()
    add_turns(memory, CAT_TALK)
    settings.MEMORYOS = {**settings.MEMORYOS, "RERANKER": str(trained[1])}
    found = retrieve(alice_space, "what is my cat called?", count_hits=False)
    assert found.pages and not any("reranker" in item.scores for item in found.pages)  # weight 0: not reranked

    alice_space.reranker_weight = 0.5  # the space's parameter, as the chat page's form or a lab's fork sets it
    alice_space.save()
    found = retrieve(alice_space, "what is my cat called?", count_hits=False)
    assert found.pages and all(0 < item.scores["reranker"] < 1 for item in found.pages)
