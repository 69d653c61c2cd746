"""Our inflection stripping (store/keywords.normalize_token: a possessive, Porter's steps 1a and 1b) beside
nltk's whole Porter stemmer, the library that would replace it, measured where it matters: BM25's evidence
recall over a conversation's turns (issue 66).

    DEBUG=true .venv/bin/python -m bench.stemmer_alternatives

LoCoMo's development conversations (questions of categories 1-4, evidence recall@10 of BM25 over the turns,
bench/baselines.BM25Turns) and LongMemEval's (each history's sessions as documents, the person's words and
the replies, recall@5 of the sessions holding the answer); nltk is a benchmark requirement
(requirements-bench.txt), not the application's.
"""

import gzip
import json
import statistics
from pathlib import Path

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data"


def locomo_recall() -> float:
    from bench.baselines import BM25Turns
    from memory_engine.formats.locomo import clean_evidence, iter_turns, load_samples

    found = []
    for sample in load_samples(SHARED / "locomo" / "locomo-dev.json"):
        turns = list(iter_turns(sample))
        known = {turn.dia_id for turn in turns}
        ranker = BM25Turns(turns)
        for qa in sample["qa"]:
            evidence = clean_evidence(qa.get("evidence", []), known)
            if qa.get("category") not in (1, 2, 3, 4) or not evidence:
                continue
            top = set(ranker.rank(qa["question"], 10))
            found.append(sum(e in top for e in evidence) / len(evidence))
    return statistics.mean(found)


def longmemeval_recall() -> float:
    from memory_engine.store.lexical import BM25Index

    found = []
    with gzip.open(SHARED / "longmemeval" / "longmemeval-dev.json.gz") as file:
        histories = json.loads(file.read())
    for history in histories:
        index = BM25Index()
        for number, session in enumerate(history["haystack_sessions"]):
            index.add(number, "\n".join(turn["content"] for turn in session))
        ids = history["haystack_session_ids"]
        top = {ids[number] for number, _ in index.search(history["question"], 5)}
        wanted = set(history["answer_session_ids"])
        found.append(len(wanted & top) / len(wanted))
    return statistics.mean(found)


def main() -> None:
    import django

    django.setup()
    from nltk.stem import PorterStemmer

    from memory_engine.language import keywords

    ours = keywords.normalize_token
    stemmer = PorterStemmer()

    def porter(token: str) -> str:
        return stemmer.stem(token[:-2] if token.endswith("'s") else token)

    print("| normalising | LoCoMo BM25 evidence recall@10 | LongMemEval BM25 session recall@5 |\n| --- | --- | --- |")
    for name, normalise in (("ours: a possessive, Porter 1a and 1b", ours), ("nltk: Porter whole", porter)):
        keywords.normalize_token = normalise
        print(f"| {name} | {locomo_recall():.3f} | {longmemeval_recall():.3f} |")
    keywords.normalize_token = ours


if __name__ == "__main__":
    main()
