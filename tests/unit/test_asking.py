"""The learnt reader of questions about what the person said (engine/asking.py): its regression, and the
reader shipped beside it."""

import numpy as np

from bench.asking import fit
from memory_engine.engine import asking
from memory_engine.store.embeddings import BUNDLED_LABEL


def test_the_regression_tells_two_kinds_of_vector_apart_weighing_each_kind_alike():
    rng = np.random.default_rng(7)
    asks = rng.normal([1.0, 0.0, 0.0], 0.3, size=(20, 3))
    talk = rng.normal([0.0, 1.0, 0.0], 0.3, size=(200, 3))  # ten times as many: weighed as much, not more
    w, b = fit(np.vstack([asks, talk]), np.array([1] * 20 + [0] * 200))  # trained in bench/asking.py
    reader = asking.Reader("some-embedder", w, b, threshold=0.1)
    assert reader.probability(np.array([1.0, 0.0, 0.0])) > 0.9
    assert reader.small_talk(np.array([0.0, 1.0, 0.0]))
    assert not reader.small_talk(np.array([1.0, 0.0, 0.0]))


def test_the_reader_shipped_is_for_the_bundled_embedder_only():
    shipped = asking.reader()
    assert shipped is not None and shipped.label == BUNDLED_LABEL
    assert shipped.weights.shape == (384,) and 0 < shipped.threshold < 0.5
    assert asking.reader_for(BUNDLED_LABEL) is shipped
    assert asking.reader_for("another-embedder") is None  # another model's vectors: the rules alone


def test_with_no_file_there_is_no_reader(tmp_path):
    assert asking.reader(tmp_path / "missing.json") is None
