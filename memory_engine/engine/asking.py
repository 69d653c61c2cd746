"""Whether a message asks about what the person said, learnt from examples.

The rules of language/intent.py read most messages well, but advice asked with the person's own words on the
way ("Rafael my brother plays bass, what helps with sore fingers the most?") reads like a question about them,
and recall then answers small talk with a quote. A small learnt reader catches many of those: a logistic
regression over the message's vector (the bundled embedder's, which recall computes anyway), trained on the
chat sets' questions about what was said ("ask" turns) and their small talk ("say" turns) by
`manage.py train_asking`, which also measures it leaving each set out in turn and writes WEIGHTS_FILE.

Recall reads a message the rules took for a question about the person as small talk when the reader gives it
less than the file's threshold (chosen by that measure: at most one question in a few hundred turned away).
The reader is used only with the embedder it was trained on (its label); with no file, or another embedder,
recall reads by the rules alone. Pure apart from reading the file once.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

WEIGHTS_FILE = Path(__file__).with_name("asking_weights.json")


@dataclass(frozen=True)
class Reader:
    """The learnt reader: `weights` and `bias` of the regression, for vectors of the embedder `label`;
    a message under `threshold` is small talk."""

    label: str
    weights: np.ndarray
    bias: float
    threshold: float

    def probability(self, vector: np.ndarray) -> float:
        """How likely the message whose vector this is asks about what the person said (0 to 1)."""
        return float(1.0 / (1.0 + np.exp(-(np.asarray(vector, dtype=np.float64) @ self.weights + self.bias))))

    def small_talk(self, vector: np.ndarray) -> bool:
        return self.probability(vector) < self.threshold

    def as_dict(self) -> dict:
        return {"label": self.label, "weights": self.weights.tolist(), "bias": self.bias, "threshold": self.threshold}


@cache
def reader(path: Path = WEIGHTS_FILE) -> Reader | None:
    """The reader kept in `path`, or None when there is none."""
    if not path.is_file():
        return None
    kept = json.loads(path.read_text())
    return Reader(kept["label"], np.asarray(kept["weights"], dtype=np.float64), float(kept["bias"]), kept["threshold"])


def reader_for(label: str | None) -> Reader | None:
    """The reader, when it was trained on the embedder `label`; else None."""
    found = reader()
    return found if found is not None and found.label == label else None
