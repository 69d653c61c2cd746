"""An incremental in-memory Okapi BM25 index over short documents keyed by integer id.

Memory pages and turns arrive one at a time and are sometimes evicted, so the index is updated in place
(``add``/``remove`` cost is proportional to the document's length) instead of being rebuilt. Documents
are tokenised with ``keywords.content_tokens`` (stopwords dropped, plurals and -ed/-ing stripped), the same
vocabulary the keyword extraction and summaries use. No I/O; the database stays the source of truth and
the index can always be rebuilt from it.

Postings live in dicts, so that adding and removing stay cheap. A query whose terms have long postings (a
common word in a space of 100k pages has 20k) is scored with numpy over arrays made from those postings on
first use and kept until a document with the term is removed: the same arithmetic in the same order, so
the same scores to the last bit, about ten times faster than the Python loop there.
"""

import hashlib
import heapq
import math
from collections import Counter

import numpy as np

from memory_engine.language.keywords import content_tokens

# A query touching at least this many postings is scored with numpy; below it, the Python loop (with its
# MaxScore pruning) is faster. Both give the same results, so this only decides speed.
ARRAY_SCORING_MIN_POSTINGS = 1500

__all__ = ["TOKENS_FINGERPRINT", "BM25Index"]

# What ``content_tokens`` makes of a sentence that exercises its rules (stopwords, plurals, -ed and -ing,
# speaker labels, case, digits): an index kept in a file by code that tokenised differently is not reused.
_PROBE = "Alice: The cats were running and jumped over 3 boxes; Bob's dogs stopped, eating berries quickly."
TOKENS_FINGERPRINT = hashlib.sha256(" ".join(content_tokens(_PROBE)).encode()).hexdigest()[:16]


POSTING_BYTES = 70
DOCUMENT_BYTES = 250


def _idf(count: int, df: int) -> float:
    """The non-negative idf of a term in `df` of `count` documents (see BM25Index)."""
    return math.log(1.0 + (count - df + 0.5) / (df + 0.5))


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
        self._n_postings = 0  # (term, document) pairs, for nbytes()
        # For array scoring: each document has a slot (a row of the arrays below, reused after removal),
        # and a term's postings, once searched, are also kept as arrays of (slot, tf), with the postings
        # added since then waiting in ``_appended``. Removing a document drops the arrays of its terms.
        self._slot_of: dict[int, int] = {}
        self._slot_ids = np.zeros(0, dtype=np.int64)
        self._slot_len = np.zeros(0, dtype=np.int64)
        self._slots_used = 0
        self._free_slots: list[int] = []
        self._arrays: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._appended: dict[str, list[tuple[int, int]]] = {}

    def __len__(self) -> int:
        return len(self._doc_len)

    def __contains__(self, doc_id: object) -> bool:
        return doc_id in self._doc_len

    def nbytes(self) -> int:
        """An estimate of the memory held (tests/integration/test_index_cache.py checks it against tracemalloc): each
        (term, document) pair sits in two dicts, each document in four, plus the slot arrays."""
        return self._n_postings * POSTING_BYTES + len(self._doc_len) * DOCUMENT_BYTES + self._slot_ids.nbytes * 2

    def add(self, doc_id: int, text: str) -> None:
        """Index ``text`` under ``doc_id``, replacing whatever that id held before.

        Safe to repeat: adding the same id and text twice leaves the index as after the first call. A text
        with no content words is still counted as a (zero-length) document, so ``len`` and ``in`` agree
        with what was added.
        """
        self.add_terms(doc_id, dict(Counter(content_tokens(text))))

    def add_terms(self, doc_id: int, term_counts: dict[str, int]) -> None:
        """``add`` of a document already tokenised: its content words and their counts, as ``documents``
        gives them (an index read back from a file)."""
        if doc_id in self._doc_len:
            self.remove(doc_id)
        length = sum(term_counts.values())
        slot = self._take_slot(doc_id, length)
        postings, arrays = self._postings, self._arrays
        for term, tf in term_counts.items():
            bucket = postings.get(term)
            if bucket is None:
                postings[term] = {doc_id: tf}
            else:
                bucket[doc_id] = tf
            if term in arrays:
                self._appended.setdefault(term, []).append((slot, tf))
        self._doc_terms[doc_id] = term_counts
        self._doc_len[doc_id] = length
        self._total_len += length
        self._n_postings += len(term_counts)

    def documents(self) -> list[tuple[int, dict[str, int]]]:
        """Each document's id and the counts of its content words: all that ``add_terms`` needs to make
        the same index again (in another process, without tokenising the texts)."""
        return list(self._doc_terms.items())

    def remove(self, doc_id: int) -> None:
        """Drop ``doc_id`` from the index. Safe to repeat; an unknown id is ignored."""
        term_counts = self._doc_terms.pop(doc_id, None)
        if term_counts is None:
            return
        postings, arrays = self._postings, self._arrays
        for term in term_counts:
            bucket = postings[term]
            del bucket[doc_id]
            if not bucket:
                # Empty postings would otherwise pile up as the vocabulary of evicted pages.
                del postings[term]
            if term in arrays:
                del arrays[term]
                self._appended.pop(term, None)
        self._total_len -= self._doc_len.pop(doc_id)
        self._n_postings -= len(term_counts)
        self._free_slots.append(self._slot_of.pop(doc_id))

    def _take_slot(self, doc_id: int, length: int) -> int:
        if self._free_slots:
            slot = self._free_slots.pop()
        else:
            slot = self._slots_used
            self._slots_used += 1
            if slot >= len(self._slot_ids):
                capacity = max(1024, 2 * len(self._slot_ids))
                self._slot_ids = np.resize(self._slot_ids, capacity)
                self._slot_len = np.resize(self._slot_len, capacity)
        self._slot_of[doc_id] = slot
        self._slot_ids[slot] = doc_id
        self._slot_len[slot] = length
        return slot

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
                idf = _idf(count, df)
                # idf * (k1 + 1) bounds the term's contribution to any document (tf / (tf + K) < 1).
                plan.append((idf * (k1 + 1), bucket, term))
        # Rarest terms first, so that the common ones (long postings) come when the top k is mostly known.
        plan.sort(key=lambda step: -step[0])
        if sum(len(bucket) for _, bucket, _ in plan) >= ARRAY_SCORING_MIN_POSTINGS:
            return self._search_arrays(plan, k, allowed, length_free, per_length)

        doc_len = self._doc_len
        scores: dict[int, float] = {}
        closed = False
        done = 0.0  # sum of the bounds of the terms already scored
        for position, (boost, bucket, _) in enumerate(plan):
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

    def score_texts(self, query: str, texts: dict[int, str]) -> dict[int, float]:
        """The BM25 score of each of `texts` (id -> text, documents not in the index) for ``query``, with this
        index's statistics (document frequencies, mean length) as if each were one more document: for a few
        documents kept apart from the index (short-term pages), comparable with ``search``'s scores. Zero
        for a text sharing no content word with the query. Read-only."""
        terms = dict.fromkeys(content_tokens(query))
        count = len(self._doc_len) + 1
        avgdl = (self._total_len / len(self._doc_len)) if self._doc_len else 1.0
        scores = {}
        for doc_id, text in texts.items():
            tokens = Counter(content_tokens(text))
            length = sum(tokens.values())
            score = 0.0
            for term in terms:
                tf = tokens.get(term, 0)
                if tf:
                    df = len(self._postings.get(term, ())) + 1
                    idf = _idf(count, df)
                    score += idf * tf * (self.k1 + 1) / (tf + self.k1 * (1 - self.b + self.b * length / avgdl))
            scores[doc_id] = score
        return scores

    def _search_arrays(
        self, plan: list[tuple[float, dict[int, int], str]], k: int, allowed: set[int] | None, length_free, per_length
    ) -> list[tuple[int, float]]:
        """``search`` scoring every matching document with numpy: each term adds
        ``boost * tf / (tf + length_free + per_length * dl)`` to its documents in plan order, the very
        operations of the Python loop, so every score is bit-for-bit the same; then the same top k."""
        scores = np.zeros(self._slots_used)
        for boost, _, term in plan:
            slots, tfs = self._term_arrays(term)
            scores[slots] += boost * tfs / (tfs + length_free + per_length * self._slot_len[slots])
        if allowed is None:
            candidates = np.flatnonzero(scores)  # every contribution is positive
        else:
            slot_of = self._slot_of
            candidates = np.fromiter((slot_of[i] for i in allowed if i in slot_of), dtype=np.int64)
            candidates = candidates[scores[candidates] > 0]
        values = scores[candidates]
        if len(values) > k:
            kth = np.partition(values, len(values) - k)[len(values) - k]
            keep = values >= kth
            candidates, values = candidates[keep], values[keep]
        ids = self._slot_ids[candidates]
        best = np.lexsort((ids, -values))[:k]  # score descending, then id ascending
        return [(int(ids[i]), float(values[i])) for i in best]

    def _term_arrays(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """(slots, term frequencies) of the term's postings, made on first use and kept up to date."""
        cached = self._arrays.get(term)
        if cached is None:
            bucket, slot_of = self._postings[term], self._slot_of
            slots = np.fromiter((slot_of[doc_id] for doc_id in bucket), dtype=np.int64, count=len(bucket))
            cached = slots, np.fromiter(bucket.values(), dtype=np.int64, count=len(bucket))
            self._appended.pop(term, None)
        else:
            appended = self._appended.pop(term, None)
            if not appended:
                return cached
            extra = np.array(appended, dtype=np.int64)
            cached = np.concatenate([cached[0], extra[:, 0]]), np.concatenate([cached[1], extra[:, 1]])
        self._arrays[term] = cached
        return cached
