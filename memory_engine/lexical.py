"""An incremental in-memory Okapi BM25 index over short documents keyed by integer id.

Memory pages and turns arrive one at a time and are sometimes evicted, so the index is updated in place
(``add``/``remove`` cost is proportional to the document's length) instead of being rebuilt. Documents
are tokenised with ``keywords.content_tokens`` (stopwords dropped, plurals and -ed/-ing stripped), the same
vocabulary the keyword extraction and summaries use. Pure Python, no I/O; the database stays the source
of truth and the index can always be rebuilt from it.
"""

import heapq
import math
from collections import Counter

from memory_engine.keywords import content_tokens

__all__ = ["BM25Index"]


class BM25Index:
    """Okapi BM25 over documents keyed by int id, updated incrementally.

    Scoring: sum over distinct query terms of ``idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``
    with the non-negative idf ``log(1 + (N - df + 0.5) / (df + 0.5))`` (as in Lucene): the classic
    Robertson idf turns negative for a term in more than half of the documents, which would make a small
    index rank a document lower for matching the query.

    Not thread-safe: a search running while another thread adds or removes can fail (a dict changing size
    under iteration), so guard a shared index with a lock for writes and reads alike.
    """

    def __init__(self, *, k1: float = 1.2, b: float = 0.75) -> None:
        if k1 < 0 or not 0 <= b <= 1:
            raise ValueError(f"BM25 needs k1 >= 0 and 0 <= b <= 1, got k1={k1}, b={b}")
        self.k1 = k1
        self.b = b
        # term -> {doc_id: term frequency}; a search touches only the postings of its query terms.
        self._postings: dict[str, dict[int, int]] = {}
        # doc_id -> {term: tf}, kept so that remove() knows which postings to clean.
        self._doc_terms: dict[int, dict[str, int]] = {}
        self._doc_len: dict[int, int] = {}
        self._total_len = 0

    def __len__(self) -> int:
        return len(self._doc_len)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._doc_len

    def add(self, doc_id: int, text: str) -> None:
        """Index ``text`` under ``doc_id``, replacing whatever that id held before.

        Safe to repeat: adding the same id and text twice leaves the index as after the first call. A text
        with no content words is still counted as a (zero-length) document, so ``len`` and ``in`` agree
        with what was added.
        """
        if doc_id in self._doc_len:
            self.remove(doc_id)
        term_counts = dict(Counter(content_tokens(text)))
        postings = self._postings
        for term, tf in term_counts.items():
            bucket = postings.get(term)
            if bucket is None:
                postings[term] = {doc_id: tf}
            else:
                bucket[doc_id] = tf
        length = sum(term_counts.values())
        self._doc_terms[doc_id] = term_counts
        self._doc_len[doc_id] = length
        self._total_len += length

    def remove(self, doc_id: int) -> None:
        """Drop ``doc_id`` from the index. Safe to repeat; an unknown id is ignored."""
        term_counts = self._doc_terms.pop(doc_id, None)
        if term_counts is None:
            return
        postings = self._postings
        for term in term_counts:
            bucket = postings[term]
            del bucket[doc_id]
            if not bucket:
                # Empty postings would otherwise pile up as the vocabulary of evicted pages.
                del postings[term]
        self._total_len -= self._doc_len.pop(doc_id)

    def search(self, query: str, k: int, allowed: set[int] | None = None) -> list[tuple[int, float]]:
        """The ``k`` best (doc_id, score) pairs for ``query``, best first, equal scores by ascending id.

        Only documents sharing at least one content word with the query are returned (so possibly fewer
        than ``k``). With ``allowed``, only those ids are considered. Read-only and deterministic.
        """
        count = len(self._doc_len)
        if k <= 0 or count == 0:
            return []
        if allowed is not None and not allowed:
            return []
        # Distinct terms: a question that repeats a word ("cats and more cats") should not weigh it twice.
        terms = dict.fromkeys(content_tokens(query))
        avgdl = self._total_len / count or 1.0
        k1 = self.k1
        # tf * (k1 + 1) / (tf + k1 * (1 - b) + k1 * b / avgdl * dl), its two constants hoisted out of loops.
        length_free = k1 * (1 - self.b)
        per_length = k1 * self.b / avgdl
        plan = []
        for term in terms:
            bucket = self._postings.get(term)
            if bucket:
                df = len(bucket)
                idf = math.log(1.0 + (count - df + 0.5) / (df + 0.5))
                # idf * (k1 + 1) bounds the term's contribution to any document (tf / (tf + K) < 1).
                plan.append((idf * (k1 + 1), bucket))
        # Rarest terms first, so that the common ones (long postings) come when the top k is mostly known.
        plan.sort(key=lambda step: -step[0])

        doc_len = self._doc_len
        scores: dict[int, float] = {}
        closed = False
        done = 0.0  # sum of the bounds of the terms already scored
        for position, (boost, bucket) in enumerate(plan):
            # MaxScore pruning (Turtle & Flood, 1995). ``rest`` bounds what the remaining terms can add to
            # any document (widened a hair against float rounding). Once the k-th best score so far beats
            # it, no unseen document can reach the top k, so the remaining terms only update documents
            # already scored, and those that cannot catch up even with every remaining term are dropped.
            # The result is exactly that of scoring everything. ``done > rest`` is a cheap necessary
            # condition (no score exceeds ``done``) that spares computing the threshold early on.
            rest = sum(step[0] for step in plan[position:]) * (1 + 1e-9)
            if len(scores) >= k and done > rest:
                threshold = heapq.nlargest(k, scores.values())[-1]
                if threshold > rest:
                    closed = True
                    scores = {doc_id: score for doc_id, score in scores.items() if score + rest >= threshold}
            done += boost
            get = scores.get
            if closed:
                if len(scores) < len(bucket):
                    items = [(doc_id, bucket[doc_id]) for doc_id in scores if doc_id in bucket]
                else:
                    items = [(doc_id, tf) for doc_id, tf in bucket.items() if doc_id in scores]
            elif allowed is None:
                items = bucket.items()
            elif len(allowed) < len(bucket):
                # A narrow filter over a common term: look the allowed ids up instead of scanning.
                items = [(doc_id, bucket[doc_id]) for doc_id in allowed if doc_id in bucket]
            else:
                items = [(doc_id, tf) for doc_id, tf in bucket.items() if doc_id in allowed]
            for doc_id, tf in items:
                scores[doc_id] = get(doc_id, 0.0) + boost * tf / (tf + length_free + per_length * doc_len[doc_id])
        return heapq.nlargest(k, scores.items(), key=lambda item: (item[1], -item[0]))
