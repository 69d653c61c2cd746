"""Training the learnt reader (bench/asking.py) on a few small sets: each set left out in turn is read by a
reader trained on the others, and the threshold kept turns away few enough of the questions."""

import json

import numpy as np

from bench import asking as training

ASKS = [
    "what's my cat called again?", "when is my sister's birthday?", "which city do I live in?",
    "what did I say my boss's name was?", "remind me what car I drive", "how old is my son now?",
    "what's my gym locker number?", "who's my dentist again?", "what time is my flight on Friday?",
    "where does my brother work?",
]  # fmt: skip
TALK = [
    "what's a good recipe for a rainy day?", "how are you today?", "any tips for sleeping better?",
    "the weather is awful here lol", "can you explain how tides work?", "tell me a joke about cats",
    "what should I wear to a summer wedding?", "thanks, that helps a lot", "is it normal to feel tired in winter?",
    "write a short poem about the sea",
]  # fmt: skip


def _write_set(folder, name, asks, talk):
    turns = [{"ask": text, "expect": ["x"]} for text in asks] + [{"say": text} for text in talk]
    conversation = {"id": name, "sessions": [{"days_after_previous": 0, "turns": turns}]}
    (folder / f"chat_{name}.json").write_text(json.dumps({"conversations": [conversation]}))


def test_each_set_is_read_by_a_reader_trained_on_the_others_and_a_threshold_is_kept(tmp_path):
    _write_set(tmp_path, "one", ASKS[:5], TALK[:5])
    _write_set(tmp_path, "two", ASKS[5:], TALK[5:])
    (tmp_path / "intents.json").write_text(json.dumps({"messages": [{"message": "my name?", "kind": "memory"}]}))

    measured, reader = training.train(tmp_path)

    assert measured["questions read as such"] == sum(map(training.overrulable, ASKS))
    assert set(measured["by threshold"]) == set(training.THRESHOLDS)
    assert reader is not None and reader.threshold in training.THRESHOLDS
    assert reader.probability(np.asarray(training.get_embedder().encode(["what's my dog called?"])[0])) > 0.5
