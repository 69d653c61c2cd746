import numpy as np

from memory_engine.store.embeddings import RecentVectors


def test_many_texts_are_encoded_once_in_one_call_and_kept_in_their_order():
    calls = []

    def encode(texts):
        calls.append(list(texts))
        return np.array([[float(len(text)), 1.0] for text in texts])

    kept = RecentVectors(size=3)
    first = kept.get_many(["ab", "abc", "ab"], encode)
    assert calls == [["ab", "abc"]]  # a text asked twice is encoded once
    assert first[:, 0].tolist() == [2.0, 3.0, 2.0]
    again = kept.get_many(["abc", "a"], encode)
    assert calls[-1] == ["a"] and again[:, 0].tolist() == [3.0, 1.0]
    kept.get_many(["abcd"], encode)  # a fourth text: the least recently used ("ab") goes
    kept.get_many(["ab"], encode)
    assert calls[-1] == ["ab"]
    assert kept.get_many([], encode).shape[0] == 0
