"""Extractive summaries: every summary is made of sentences that were actually said, never generated.

A small local LLM asked to summarise tends to invent details; a memory system that stores an invented
detail then "remembers" it forever. So page and thread summaries here only select and order real
sentences (and, when a single sentence is over the budget, cut it on a word boundary with "…").

Everything is pure and deterministic: the same input gives the same summary (cosines and gains are
rounded to 9 decimals before ranking, so float noise from a different BLAS is very unlikely to reorder
near-ties).

Selection is greedy coverage: a sentence is worth the summed weight of the content words it brings
(weights: how often each word recurs in the whole input), divided by the square root of its length so a
long sentence must earn its budget; once a word is in the summary its weight drops, so the next sentence
tends to cover another side of the topic. Sentences with fewer than four content words ("Yeah, that
sounds great!") are skipped whenever longer ones exist.
"""

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from memory_engine.language.keywords import content_tokens, jaccard
from memory_engine.language.reading import split_sentences

__all__ = ["extractive_summary", "thread_summary"]

ELLIPSIS = "…"
MIN_CONTENT_WORDS = 4
# A word already in the summary keeps this share of its weight: enough to prefer staying on topic over
# noise, not enough to pick a second sentence that says the same thing.
COVERED_WEIGHT = 0.3
# Weight of a word that occurs only once in a summary's input (see ``_term_weights``).
SINGLETON_WEIGHT = 0.1
# Sentences sharing this much of their content vocabulary with a chosen one count as repeats.
REDUNDANT_JACCARD = 0.5


class _Candidate:
    """A sentence that may go into a summary, with what the selection needs to know about it."""

    __slots__ = ("group", "order", "text", "tokens")

    def __init__(self, text: str, group: int, order: tuple[int, int]) -> None:
        self.text = text
        self.group = group  # which input text (or part) it came from
        self.order = order  # position in the original input, for output order and ties
        self.tokens = frozenset(content_tokens(text))


def _candidates(parts: Sequence[str]) -> list[_Candidate]:
    """Sentences of ``parts`` minus trivial ones and exact repeats, in input order."""
    found: list[_Candidate] = []
    seen: set[str] = set()
    for group, part in enumerate(parts):
        for position, sentence in enumerate(split_sentences(part)):
            key = sentence.casefold()
            if key in seen:
                continue
            seen.add(key)
            found.append(_Candidate(sentence, group, (group, position)))
    if not found:
        return []
    # "Where possible": with no sentence of four content words, keep the most contentful ones there are.
    floor = min(MIN_CONTENT_WORDS, max(len(candidate.tokens) for candidate in found))
    return [candidate for candidate in found if len(candidate.tokens) >= max(floor, 1)]


def _truncate(text: str, max_chars: int) -> str:
    """``text`` cut to at most ``max_chars`` characters on a word boundary, ending in "…" when cut."""
    if len(text) <= max_chars:
        return text
    if max_chars <= 0:
        return ""
    cut = text[: max_chars - 1]
    space = cut.rfind(" ")
    if space > 0:
        cut = cut[:space]
    return cut.rstrip(" ,;:-–—") + ELLIPSIS


class _Selection:
    """Greedy coverage selection of candidates under a character budget."""

    def __init__(self, weights: dict[str, float], max_chars: int) -> None:
        self.weights = weights
        self.max_chars = max_chars
        self.chosen: list[_Candidate] = []
        self.covered: set[str] = set()
        self.length = 0

    def gain(self, candidate: _Candidate) -> float:
        weights, covered = self.weights, self.covered
        value = sum(
            weights.get(token, 0.0) * (COVERED_WEIGHT if token in covered else 1.0) for token in candidate.tokens
        )
        return value / math.sqrt(len(candidate.text))

    def fits(self, candidate: _Candidate) -> bool:
        separator = 1 if self.chosen else 0
        return self.length + separator + len(candidate.text) <= self.max_chars

    def redundant(self, candidate: _Candidate) -> bool:
        return any(jaccard(candidate.tokens, other.tokens) >= REDUNDANT_JACCARD for other in self.chosen)

    def take(self, candidate: _Candidate) -> None:
        self.length += (1 if self.chosen else 0) + len(candidate.text)
        self.chosen.append(candidate)
        # Discounted once, not per mention: the theme words of the input stay worth more than asides.
        self.covered.update(candidate.tokens)

    def best(self, pool: list[_Candidate], *, prefer_late: bool = False) -> _Candidate | None:
        """The highest-gain candidate of ``pool`` that fits and is not a repeat (ties by input order)."""
        best: _Candidate | None = None
        best_key: tuple[float, tuple[int, int]] | None = None
        for candidate in pool:
            if candidate in self.chosen or not self.fits(candidate) or self.redundant(candidate):
                continue
            # Rounded so that float noise cannot decide between equally good sentences.
            gain = round(self.gain(candidate), 9)
            order = candidate.order
            key = (gain, order if prefer_late else (-order[0], -order[1]))
            if best_key is None or key > best_key:
                best, best_key = candidate, key
        return best

    def render(self, fallback: list[_Candidate]) -> str:
        if not self.chosen:
            # Nothing fits whole: cut the most informative sentence instead of returning nothing.
            if not fallback or self.max_chars <= 0:
                return ""
            top = max(
                fallback,
                key=lambda candidate: (round(self.gain(candidate), 9), [-i for i in candidate.order]),
            )
            return _truncate(top.text, self.max_chars)
        text = " ".join(candidate.text for candidate in sorted(self.chosen, key=lambda c: c.order))
        return _truncate(text, self.max_chars)


def _term_weights(parts: Sequence[str]) -> dict[str, float]:
    """Weight of each content word for a topic summary: its count in the whole input, minus one.

    A word said once says nothing about what the input is about; it keeps a token weight so that, in a
    text where every word is new, the more contentful sentence still wins.
    """
    counts = Counter(token for part in parts for token in content_tokens(part))
    return {token: count - 1 + SINGLETON_WEIGHT for token, count in counts.items()}


def extractive_summary(texts: list[str], vectors: np.ndarray | None, *, max_chars: int = 400) -> str:
    """A topic summary of ``texts`` made of their own most representative sentences, at most ``max_chars``.

    With ``vectors`` (one embedding row per text, L2-normalised; rows are re-normalised anyway), texts are
    ranked by cosine to the centroid of all rows, and sentences are taken round-robin from the texts in
    that order: the best sentence of the most central text, then of the next, and so on, a second
    sentence per text only once each has had its turn. Outlying texts (cosine more than one standard
    deviation below the mean: often an aside) are drawn from the same way only if budget remains after.
    Without vectors (or if the centroid is zero), the best-covering sentences are taken from anywhere.
    Sentences are added while any fits the budget; the chosen ones are output in their original order,
    joined by spaces. Returns "" for empty input or when no sentence has any content word.
    Pure and deterministic; raises ValueError if ``vectors`` does not have one row per text.
    """
    if max_chars <= 0:
        return ""
    candidates = _candidates(texts)
    if not candidates:
        return ""
    selection = _Selection(_term_weights(texts), max_chars)
    ranking = _rank_by_centrality(vectors, len(texts)) if vectors is not None else None
    if ranking is None:
        while (candidate := selection.best(candidates)) is not None:
            selection.take(candidate)
        return selection.render(candidates)

    by_text: dict[int, list[_Candidate]] = {}
    for candidate in candidates:
        by_text.setdefault(candidate.group, []).append(candidate)
    for group in ranking:
        added = True
        while added:
            added = False
            for text_index in group:
                candidate = selection.best(by_text.get(text_index, []))
                if candidate is not None:
                    selection.take(candidate)
                    added = True
    return selection.render(candidates)


def _rank_by_centrality(vectors: np.ndarray, count: int) -> list[list[int]] | None:
    """Text indexes by decreasing cosine to the centroid of ``vectors``, in two groups: the main texts,
    then the outliers (cosine more than one standard deviation below the mean). None if the centroid is
    zero.
    """
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.ndim != 2 or matrix.shape[0] != count:
        raise ValueError(f"vectors must have one row per text: expected ({count}, d), got {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    centroid = matrix.mean(axis=0)
    centroid_norm = float(np.linalg.norm(centroid))
    if not math.isfinite(centroid_norm) or centroid_norm == 0.0:
        return None
    cosines = [float(value) for value in np.round(matrix @ (centroid / centroid_norm), 9)]
    ranked = sorted(range(count), key=lambda i: (-cosines[i], i))
    mean = sum(cosines) / count
    spread = math.sqrt(sum((value - mean) ** 2 for value in cosines) / count)
    floor = round(mean - spread, 9)
    return [[i for i in ranked if cosines[i] >= floor], [i for i in ranked if cosines[i] < floor]]


def thread_summary(previous: str, new_text: str, *, max_chars: int = 300) -> str:
    """Update the running extractive summary of a thread: the most informative sentences of
    ``previous`` + ``new_text`` that fit in ``max_chars``, in their original order.

    Word weights are balanced between the two parts (each part's weights sum to one), so a long new
    exchange cannot crowd the thread's earlier topics out at once, and a short one still gets in; between
    equally good sentences the newer wins. A summary that already fits, updated with empty new text, comes
    back unchanged, so repeating an update with nothing new is harmless. Pure and deterministic.
    """
    if max_chars <= 0:
        return ""
    parts = [previous, new_text]
    candidates = _candidates(parts)
    if not candidates:
        return ""
    weights: dict[str, float] = {}
    for part in parts:
        counts = Counter(content_tokens(part))
        total = sum(counts.values())
        for token, count in counts.items():
            weights[token] = weights.get(token, 0.0) + count / total
    selection = _Selection(weights, max_chars)
    while (candidate := selection.best(candidates, prefer_late=True)) is not None:
        selection.take(candidate)
    return selection.render(candidates)
