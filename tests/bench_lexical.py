"""Timing of BM25Index.add and .search on synthetic short documents (1k, 10k, 100k).

Not a test (pytest collects only test_*.py); run it by hand:
    cd /work/main && .venv/bin/python -m tests.bench_lexical

Documents are 8-24 words drawn from a Zipf-like distribution over 20,000 made-up words, roughly the shape
of chat turns after stopword removal. Queries are 10 words: "typical" draws them from the same
distribution (so a few very common words with long postings lists), "rare" draws them uniformly from the
vocabulary (short postings). Deterministic (fixed seed), so runs are comparable.
"""

import random
import string
import time
from itertools import accumulate

from memory_engine.store.lexical import BM25Index

VOCABULARY_SIZE = 20_000
QUERIES = 200


def _vocabulary(rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < VOCABULARY_SIZE:
        words.add("".join(rng.choices(string.ascii_lowercase, k=rng.randint(4, 9))))
    return sorted(words)


def _documents(rng: random.Random, vocabulary: list[str], count: int) -> list[str]:
    weights = list(accumulate(1.0 / rank for rank in range(1, len(vocabulary) + 1)))
    return [" ".join(rng.choices(vocabulary, cum_weights=weights, k=rng.randint(8, 24))) for _ in range(count)]


def _time_search(index: BM25Index, queries: list[str], **kwargs: object) -> float:
    start = time.perf_counter()
    for query in queries:
        index.search(query, 10, **kwargs)
    return (time.perf_counter() - start) / len(queries) * 1000


def main() -> None:
    rng = random.Random(20240501)
    vocabulary = _vocabulary(rng)
    weights = list(accumulate(1.0 / rank for rank in range(1, len(vocabulary) + 1)))
    typical = [" ".join(rng.choices(vocabulary, cum_weights=weights, k=10)) for _ in range(QUERIES)]
    rare = [" ".join(rng.choices(vocabulary, k=10)) for _ in range(QUERIES)]
    print(f"{'docs':>7} {'add µs/doc':>11} {'search ms (typical)':>20} {'(rare)':>8} {'(allowed 1k)':>13}")
    for count in (1_000, 10_000, 100_000):
        documents = _documents(rng, vocabulary, count)
        index = BM25Index()
        start = time.perf_counter()
        for doc_id, text in enumerate(documents):
            index.add(doc_id, text)
        add_us = (time.perf_counter() - start) / count * 1e6
        allowed = set(range(0, count, max(1, count // 1000)))
        print(
            f"{count:>7} {add_us:>11.1f} {_time_search(index, typical):>20.2f} "
            f"{_time_search(index, rare):>8.3f} {_time_search(index, typical, allowed=allowed):>13.2f}"
        )


if __name__ == "__main__":
    main()
