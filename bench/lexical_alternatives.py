"""Our incremental BM25 (store/lexical.py) beside bm25s, the library that would replace it, on the same
tokens: whether they rank alike, and what each costs where the memory uses it (issue 66).

    pip install bm25s   # not a requirement: only this comparison uses it
    DEBUG=true .venv/bin/python -m bench.lexical_alternatives [--pages 10000] [--queries 200]

The documents are LongMemEval's turns (a person and an assistant; ../shared/data/longmemeval), a user's
words and the reply as one page, as the memory pages them; the queries are its questions. Printed: the time
to index every page, what taking one new page costs (ours adds it; bm25s has no update, so its index is made
again), search time per query (median and 95th percentile, the 10 best pages), and how alike the two top-10s
are (the same pages, and the same order).
"""

import argparse
import gzip
import json
import statistics
import time
from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "longmemeval" / "longmemeval-dev.json.gz"


def pages_and_questions(limit: int) -> tuple[list[str], list[str]]:
    with gzip.open(DATA) as file:
        histories = json.loads(file.read())
    pages, questions = [], [h["question"] for h in histories]
    for history in histories:
        for session in history["haystack_sessions"]:
            for said, reply in zip(session[::2], session[1::2], strict=False):
                pages.append(f"{said['content']}\n{reply['content']}")
    return pages[:limit], questions


def percentiles(seconds: list[float]) -> str:
    ordered = sorted(seconds)
    p95 = ordered[int(0.95 * (len(ordered) - 1))]
    return f"median {statistics.median(ordered) * 1000:.2f} ms, p95 {p95 * 1000:.2f} ms"


def main() -> None:
    import bm25s
    import django

    django.setup()
    from memory_engine.language.keywords import content_tokens
    from memory_engine.store.lexical import BM25Index

    parser = argparse.ArgumentParser()
    parser.add_argument("--pages", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    options = parser.parse_args()
    pages, questions = pages_and_questions(options.pages)
    queries = (questions * (1 + options.queries // len(questions)))[: options.queries]
    tokens = [content_tokens(page) for page in pages]
    print(f"{len(pages)} pages, {sum(map(len, tokens))} tokens, {len(queries)} queries")

    ours = BM25Index()
    started = time.perf_counter()
    for number, page in enumerate(pages):
        ours.add(number, page)
    ours_index = time.perf_counter() - started
    theirs = bm25s.BM25(k1=ours.k1, b=ours.b, method="lucene")
    started = time.perf_counter()
    theirs.index(tokens, show_progress=False)
    theirs_index = time.perf_counter() - started

    adds = []
    for number, page in enumerate(pages[:200]):  # each page again, as a new one: added, then taken out
        started = time.perf_counter()
        ours.add(len(pages) + number, page)
        adds.append(time.perf_counter() - started)
        ours.remove(len(pages) + number)
    ours_add = statistics.median(adds)

    ours_times, theirs_times, same_pages, same_order = [], [], 0, 0
    for query in queries:
        started = time.perf_counter()
        found = [doc for doc, _ in ours.search(query, 10)]
        ours_times.append(time.perf_counter() - started)
        started = time.perf_counter()
        asked = content_tokens(query)
        ids, _scores = theirs.retrieve([asked], k=10, show_progress=False) if asked else (np.zeros((1, 0)), None)
        theirs_times.append(time.perf_counter() - started)
        other = [int(doc) for doc in ids[0]][: len(found)]
        same_pages += set(found) == set(other)
        same_order += found == other

    print("| | ours (store/lexical.py) | bm25s |\n| --- | --- | --- |")
    print(f"| index {len(pages)} pages | {ours_index:.2f} s | {theirs_index:.2f} s |")
    print(f"| one new page (median of 200) | {ours_add * 1000:.3f} ms (added) | {theirs_index:.2f} s (indexed again) |")
    print(f"| a search, 10 best | {percentiles(ours_times)} | {percentiles(theirs_times)} |")
    print(f"top 10 of {len(queries)} queries: the same pages {same_pages}, the same order {same_order}")


if __name__ == "__main__":
    main()
