"""BM25 evidence recall@10 on LoCoMo's development split, against the README's published baseline.

Each turn is indexed as "Speaker: text [+ image caption]", one index per conversation, and each question
of categories 1-4 retrieves 10 turns; recall = share of its (cleaned) evidence turns among them.
Print the full per-category table with:
    cd /work/main && .venv/bin/python -m tests.unit.test_lexical_locomo
"""

from collections import defaultdict

import pytest

from memory_engine.config import memory_settings
from memory_engine.formats.locomo import (
    CATEGORY_NAMES,
    Turn,
    clean_evidence,
    iter_turns,
    load_samples,
    turn_document,
)
from memory_engine.store.lexical import BM25Index

LOCOMO_DEV = memory_settings().locomo_file
RETRIEVAL_CATEGORIES = (1, 2, 3, 4)

needs_locomo = pytest.mark.skipif(not LOCOMO_DEV.exists(), reason=f"{LOCOMO_DEV} not available")


def evidence_recall(samples: list[dict], k: int = 10) -> dict[int, list[float]]:
    """Per category, the recall@k of every question that has evidence."""
    recalls: dict[int, list[float]] = defaultdict(list)
    for sample in samples:
        turns = list(iter_turns(sample))
        index = BM25Index()
        for position, turn in enumerate(turns):
            index.add(position, turn_document(turn))
        known = {turn.dia_id for turn in turns}
        for qa in sample["qa"]:
            if qa["category"] not in RETRIEVAL_CATEGORIES:
                continue
            evidence = clean_evidence(qa.get("evidence", []), known)
            if not evidence:
                continue
            retrieved = {turns[position].dia_id for position, _ in index.search(qa["question"], k)}
            recalls[qa["category"]].append(len(retrieved.intersection(evidence)) / len(evidence))
    return recalls


def overall(recalls: dict[int, list[float]]) -> float:
    values = [value for category in recalls.values() for value in category]
    return sum(values) / len(values)


@pytest.fixture(scope="module")
def samples() -> list[dict]:
    return load_samples(LOCOMO_DEV)


@needs_locomo
def test_bm25_recall_on_the_first_conversation_is_near_baseline(samples):
    # Measured 0.611 on conv-26 (150 questions; multi-hop 0.349, temporal 0.892, open-domain 0.273,
    # single-hop 0.636). With plural stripping only it was 0.569, without stopwords 0.518, so this guards
    # the tokenizer choices as well as the BM25 arithmetic.
    assert samples[0]["sample_id"] == "conv-26"
    recalls = evidence_recall(samples[:1])
    assert sum(len(values) for values in recalls.values()) == 150
    assert overall(recalls) >= 0.58


@needs_locomo
def test_bm25_recall_on_the_whole_dev_split_matches_the_published_baseline(samples):
    # README baseline: 0.582 over categories 1-4 of the 5 dev conversations; measured 0.609 (760 questions).
    recalls = evidence_recall(samples)
    assert sum(len(values) for values in recalls.values()) == 760
    assert overall(recalls) >= 0.58


class TestCleanEvidence:
    KNOWN = {"D1:3", "D8:6", "D9:17", "D11:26", "D30:5"}

    def test_it_keeps_clean_known_ids_in_order(self):
        assert clean_evidence(["D9:17", "D1:3"], self.KNOWN) == ["D9:17", "D1:3"]

    def test_it_splits_entries_on_semicolons_and_spaces(self):
        assert clean_evidence(["D8:6; D9:17", "D1:3 D11:26"], self.KNOWN) == [
            "D8:6",
            "D9:17",
            "D1:3",
            "D11:26",
        ]

    def test_it_repairs_a_stray_colon_and_zero_padding(self):
        assert clean_evidence(["D:11:26", "D30:05"], self.KNOWN) == ["D11:26", "D30:5"]

    def test_it_drops_malformed_unknown_and_repeated_ids(self):
        assert clean_evidence(["D", "", "D1:3", "D2:99", "D1:3", "x"], self.KNOWN) == ["D1:3"]

    def test_cleaning_twice_changes_nothing(self):
        once = clean_evidence(["D8:6; D9:17", "D:11:26"], self.KNOWN)
        assert clean_evidence(once, self.KNOWN) == once


class TestIterTurns:
    SAMPLE = {
        "conversation": {
            "speaker_a": "Ann",
            "speaker_b": "Ben",
            "session_10": [{"speaker": "Ben", "dia_id": "D10:1", "text": "later"}],
            "session_10_date_time": "9:00 am on 2 June, 2023",
            "session_2": [
                {"speaker": "Ann", "dia_id": "D2:1", "text": "look", "blip_caption": "a photo of a dog"},
                {"speaker": "Ben", "dia_id": "D2:2", "text": "cute"},
            ],
            "session_2_date_time": "1:56 pm on 8 May, 2023",
            "session_11_date_time": "a date for a session that does not exist",
        }
    }

    def test_it_yields_sessions_in_numeric_order_and_skips_date_only_sessions(self):
        turns = list(iter_turns(self.SAMPLE))
        assert [turn.dia_id for turn in turns] == ["D2:1", "D2:2", "D10:1"]
        assert turns[0] == Turn("D2:1", "Ann", "look a photo of a dog", 2, "1:56 pm on 8 May, 2023")
        dia_id, speaker, text, session_no, when = turns[2]
        assert (speaker, session_no, when) == ("Ben", 10, "9:00 am on 2 June, 2023")

    def test_it_can_leave_image_captions_out(self):
        assert next(iter_turns(self.SAMPLE, with_captions=False)).text == "look"

    def test_turn_document_prefixes_the_speaker(self):
        assert turn_document(next(iter_turns(self.SAMPLE))) == "Ann: look a photo of a dog"


def main() -> None:
    samples = load_samples(LOCOMO_DEV)
    header = " ".join(f"{CATEGORY_NAMES[c]:>11}" for c in RETRIEVAL_CATEGORIES)
    print(f"{'BM25 recall@10':<16} {header} {'all':>6} {'n':>4}")
    for name, subset in [(sample["sample_id"], [sample]) for sample in samples] + [("all 5", samples)]:
        recalls = evidence_recall(subset)
        cells = " ".join(
            f"{sum(recalls[c]) / len(recalls[c]):>11.3f}" if recalls[c] else f"{'-':>11}" for c in RETRIEVAL_CATEGORIES
        )
        count = sum(len(values) for values in recalls.values())
        print(f"{name:<16} {cells} {overall(recalls):>6.3f} {count:>4}")


if __name__ == "__main__":
    main()
