"""LoCoMo's metrics (Maharana et al., ACL 2024), as /work/shared/data/locomo/README.md describes them.

Answer F1 is LoCoMo's own: normalise (drop commas, lower-case, strip ASCII punctuation, drop a / an / the
/ and, collapse spaces), Porter-stem every token, token F1 with multiset overlap; category 1 splits both
sides on "," and averages, over gold parts, the best F1 against any predicted part; category 3 cuts the
gold at the first ";"; category 5 scores 1 when the prediction says the answer was not mentioned.
BLEU-1 (used by later papers, not by LoCoMo) is unigram precision with brevity penalty and smoothing
method 1, over lower-cased word and punctuation tokens. Evidence recall@k is the product's
(services/comparison.py), so an experiment's comparison page scores recall as this evaluation does. All
functions are pure.
"""

import re
import string
from collections import Counter
from functools import lru_cache

from nltk.stem import PorterStemmer
from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu

from memory_engine.services.comparison import evidence_recall  # recall@k, scored the same in the playground

__all__ = ["answer_f1", "bleu1", "evidence_recall", "locomo_answer_score", "normalize_answer", "token_f1"]

_PUNCTUATION = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the|and)\b")
_STEMMER = PorterStemmer()
_NOT_MENTIONED = ("not mentioned", "no information available")


@lru_cache(maxsize=65536)
def _stem(word: str) -> str:
    return _STEMMER.stem(word)


def normalize_answer(text: str) -> str:
    """LoCoMo's normalisation, before stemming: "The Cat, and a dog!" -> "cat dog"."""
    text = text.replace(",", "").lower()
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def _tokens(text: str) -> list[str]:
    return [_stem(word) for word in normalize_answer(text).split()]


def token_f1(prediction: str, gold: str) -> float:
    """Token F1 of stemmed, normalised tokens with multiset overlap; 0 when either side is empty."""
    predicted, wanted = _tokens(prediction), _tokens(gold)
    same = sum((Counter(predicted) & Counter(wanted)).values())
    if same == 0:
        return 0.0
    precision, recall = same / len(predicted), same / len(wanted)
    return 2 * precision * recall / (precision + recall)


def answer_f1(prediction: str, gold: str, category: int) -> float:
    """LoCoMo's F1 for one answer of a category 1-4 question."""
    if category == 1:
        predictions = [p.strip() for p in prediction.split(",")]
        golds = [g.strip() for g in gold.split(",")]
        return sum(max(token_f1(p, g) for p in predictions) for g in golds) / len(golds)
    if category == 3:
        gold = gold.split(";")[0].strip()
    return token_f1(prediction, gold)


def locomo_answer_score(prediction: str, gold: str, category: int) -> float:
    """LoCoMo's score for any category: F1 for 1-4, the not-mentioned check for 5 (adversarial)."""
    if category == 5:
        said = prediction.lower()
        return 1.0 if any(phrase in said for phrase in _NOT_MENTIONED) else 0.0
    return answer_f1(prediction, gold, category)


_BLEU_TOKEN = re.compile(r"\w+|[^\w\s]")


def bleu1(prediction: str, gold: str) -> float:
    """BLEU-1 of the prediction against one reference: lower-cased word and punctuation tokens."""
    predicted = _BLEU_TOKEN.findall(prediction.lower())
    reference = _BLEU_TOKEN.findall(gold.lower())
    if not predicted or not reference:
        return 0.0
    return float(
        sentence_bleu([reference], predicted, weights=(1, 0, 0, 0), smoothing_function=SmoothingFunction().method1)
    )
