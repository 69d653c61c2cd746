"""Training and measuring the learnt reader of engine/asking.py: the chat sets' questions about what was
said ("ask" turns) against their small talk ("say" turns), and the labelled messages of data/intents.json
("memory" against "none"). `manage.py train_asking` prints the measure and writes the reader.

The measure leaves each chat set out in turn: trained on the others, the reader reads the set left out, and
among the messages the rules (language/intent.py) take for questions about the person by their form (not a value
asked for by its words, which recall does not let the reader overrule) it counts the questions
it would turn away (a fact no longer looked for) and the small talk it would (a quote no longer given to it).
The threshold kept is the highest of THRESHOLDS that turns away at most MAX_ASKS_LOST of those questions.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from memory_engine.engine import asking
from memory_engine.language.intent import read
from memory_engine.store.embeddings import get_embedder, model_label

DATA = Path(__file__).resolve().parent / "data"
THRESHOLDS = (0.02, 0.05, 0.1, 0.15, 0.2, 0.3)
MAX_ASKS_LOST = 0.005


@dataclass
class Example:
    source: str  # the chat set, or "intents"
    text: str
    asks: bool
    # the rules read it as a question about the person (MEMORY or MAYBE) by its form: the reader may overrule
    ruled: bool


def examples(data: Path = DATA) -> list[Example]:
    found = []
    for path in sorted(data.glob("chat_*.json")):
        for conversation in json.loads(path.read_text())["conversations"]:
            for session in conversation["sessions"]:
                for turn in session["turns"]:
                    text = turn.get("ask") or turn["say"]
                    found.append(Example(path.stem, text, "ask" in turn, overrulable(text)))
    labels = {"memory": True, "none": False}
    for item in json.loads((data / "intents.json").read_text())["messages"]:
        if item["kind"] in labels:
            message = item["message"]
            found.append(Example("intents", message, labels[item["kind"]], overrulable(message)))
    return found


def overrulable(message: str) -> bool:
    """Whether the rules read `message` as a question about the person by its form, not as a value asked
    for by its words (which recall does not let the reader overrule)."""
    intent = read(message)
    return intent.kind is not None and not intent.asks_a_value


def fit(vectors: np.ndarray, asks: np.ndarray, *, l2: float = 1.0) -> tuple[np.ndarray, float]:
    """The weights and bias of a logistic regression telling `asks` (1) from the rest (0) by `vectors`, each
    class weighted as much as the other ("balanced"), with an L2 penalty of `l2` on the weights (scikit-learn's
    C is its inverse), solved to convergence. Deterministic."""
    if not 0 < np.mean(asks) < 1:
        raise ValueError("fit needs examples of both kinds")
    # Imported here: scikit-learn and SciPy take seconds to import, and every test process collects the
    # modules that import this one.
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=1.0 / l2, class_weight="balanced", max_iter=5000, tol=1e-8)
    model.fit(np.asarray(vectors, dtype=np.float64), np.asarray(asks, dtype=int))
    return model.coef_[0].astype(np.float64), float(model.intercept_[0])


def measure(found: list[Example], vectors: np.ndarray) -> dict:
    """Each chat set left out in turn: per threshold, the questions and the small talk read by the rules as
    questions that the reader would turn away, of how many."""
    asks = np.array([e.asks for e in found])
    sources = np.array([e.source for e in found])
    counts = {t: {"asks turned away": 0, "small talk turned away": 0} for t in THRESHOLDS}
    ruled_asks = ruled_talk = 0
    texts = np.array([" ".join(e.text.lower().split()) for e in found])
    for held in sorted(set(sources) - {"intents"}):
        out = sources == held
        # nothing of the set left out is learnt from: a labelled message that is also one of its turns neither
        train = ~out & ~np.isin(texts, texts[out])
        w, b = fit(vectors[train], asks[train])
        probabilities = 1.0 / (1.0 + np.exp(-(vectors[out] @ w + b)))
        for example, p in zip([e for e, o in zip(found, out, strict=True) if o], probabilities, strict=True):
            if not example.ruled:
                continue
            for threshold in THRESHOLDS:
                if p < threshold:
                    counts[threshold]["asks turned away" if example.asks else "small talk turned away"] += 1
        ruled_asks += sum(e.ruled and e.asks for e, o in zip(found, out, strict=True) if o)
        ruled_talk += sum(e.ruled and not e.asks for e, o in zip(found, out, strict=True) if o)
    return {"questions read as such": ruled_asks, "small talk read as questions": ruled_talk, "by threshold": counts}


def chosen_threshold(measured: dict) -> float | None:
    allowed = MAX_ASKS_LOST * measured["questions read as such"]
    fine = [t for t, c in measured["by threshold"].items() if c["asks turned away"] <= allowed]
    return max(fine) if fine else None


def train(data: Path = DATA) -> tuple[dict, asking.Reader | None]:
    """The measure, and the reader trained on every example with the chosen threshold (None when no
    threshold turns away few enough questions)."""
    found = examples(data)
    embedder = get_embedder()
    vectors = np.asarray(embedder.encode([e.text for e in found]), dtype=np.float64)
    measured = measure(found, vectors)
    threshold = chosen_threshold(measured)
    if threshold is None:
        return measured, None
    w, b = fit(vectors, np.array([e.asks for e in found]))
    return measured, asking.Reader(model_label(embedder), w, b, threshold)
