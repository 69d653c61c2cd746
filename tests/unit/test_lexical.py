import math
import random
from collections import Counter

import pytest

from memory_engine.language.keywords import content_tokens
from memory_engine.store import lexical
from memory_engine.store.lexical import BM25Index


def build(docs: dict[int, str], **params: float) -> BM25Index:
    index = BM25Index(**params)
    for doc_id, text in docs.items():
        index.add(doc_id, text)
    return index


def reference_search(docs: dict[int, str], query: str, k: int, allowed=None, k1=1.2, b=0.75):
    """Plain BM25 scoring every document, to check the index (and its pruning) against."""
    tokens = {doc_id: Counter(content_tokens(text)) for doc_id, text in docs.items()}
    avgdl = sum(sum(c.values()) for c in tokens.values()) / len(docs) or 1.0
    df = Counter(term for counts in tokens.values() for term in counts)
    scores = {}
    for doc_id, counts in tokens.items():
        if allowed is not None and doc_id not in allowed:
            continue
        score, matched = 0.0, False
        for term in dict.fromkeys(content_tokens(query)):
            if term not in counts:
                continue
            matched = True
            idf = math.log(1 + (len(docs) - df[term] + 0.5) / (df[term] + 0.5))
            tf = counts[term]
            dl = sum(counts.values())
            score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))
        if matched:
            scores[doc_id] = score
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]


PETS = {
    1: "Alice adopted two cats from the shelter last spring",
    2: "Bob repaired the garden fence after the storm",
    3: "Alice's cat knocked the vase off the shelf again",
    4: "Charlie is learning to bake sourdough bread",
    5: "The shelter needs volunteers to walk dogs on weekends",
}


class TestSearch:
    def test_it_ranks_documents_matching_more_and_rarer_query_words_first(self):
        hits = build(PETS).search("cat shelter", k=5)
        assert [doc_id for doc_id, _ in hits] == [1, 3, 5]
        assert hits[0][1] > hits[1][1] > hits[2][1] > 0

    def test_it_matches_inflected_forms(self):
        assert [doc_id for doc_id, _ in build(PETS).search("baking", k=5)] == [4]

    def test_it_breaks_equal_scores_by_ascending_id(self):
        index = build({9: "red kite", 2: "red kite", 5: "red kite", 7: "blue heron"})
        assert [doc_id for doc_id, _ in index.search("kite", k=3)] == [2, 5, 9]

    def test_it_returns_at_most_k_hits_best_first(self):
        index = build({i: "kite " * (i % 4 + 1) + f"filler{i}" for i in range(50)})
        hits = index.search("kite", k=7)
        assert len(hits) == 7
        assert hits == sorted(hits, key=lambda hit: (-hit[1], hit[0]))

    @pytest.mark.parametrize("query", ["", "   ", "yeah it was just the", "🙂", "zeppelin"])
    def test_it_returns_nothing_for_queries_without_known_content_words(self, query):
        assert build(PETS).search(query, k=5) == []

    @pytest.mark.parametrize("k", [0, -3])
    def test_it_returns_nothing_for_non_positive_k(self, k):
        assert build(PETS).search("cat", k=k) == []

    def test_it_returns_nothing_from_an_empty_index(self):
        assert BM25Index().search("cat", k=5) == []

    def test_it_survives_unicode_emoji_and_html(self):
        index = build({1: "<p>Café 🎉 naïve</p>", 2: "Straße\u200b and ＦＵＬＬ width", 3: "\x00\ud7ff\n\t"})
        assert [doc_id for doc_id, _ in index.search("CAFÉ strasse full", k=5)] == [2, 1]

    def test_repeating_a_query_word_does_not_change_scores(self):
        index = build(PETS)
        assert index.search("cat cat cats shelter", k=5) == index.search("cat shelter", k=5)


class TestAllowed:
    def test_it_only_returns_allowed_ids(self):
        assert [doc_id for doc_id, _ in build(PETS).search("cat shelter", k=5, allowed={3, 5, 42})] == [3, 5]

    def test_an_empty_allowed_set_allows_nothing(self):
        assert build(PETS).search("cat shelter", k=5, allowed=set()) == []

    def test_scores_do_not_depend_on_the_filter(self):
        # The filter narrows the candidates; idf and average length still describe the whole index.
        index = build(PETS)
        full = dict(index.search("cat shelter", k=5))
        assert index.search("cat shelter", k=5, allowed={5}) == [(5, full[5])]


class TestUpdates:
    def test_it_counts_and_contains_added_documents(self):
        index = build(PETS)
        assert len(index) == 5
        assert 3 in index
        assert 6 not in index
        index.add(6, "")  # no content words: still a document
        assert len(index) == 6 and 6 in index

    def test_re_adding_an_id_replaces_its_text(self):
        index = build(PETS)
        index.add(2, "Bob now keeps a cat too")
        assert len(index) == 5
        assert [doc_id for doc_id, _ in index.search("fence storm", k=5)] == []
        assert 2 in [doc_id for doc_id, _ in index.search("cat", k=5)]
        assert index.search("cat shelter", k=5) == build({**PETS, 2: "Bob now keeps a cat too"}).search(
            "cat shelter", k=5
        )

    def test_re_adding_the_same_text_changes_nothing(self):
        index = build(PETS)
        before = index.search("cat shelter bread", k=5)
        index.add(1, PETS[1])
        assert index.search("cat shelter bread", k=5) == before

    def test_removing_a_document_forgets_it_entirely(self):
        index = build(PETS)
        index.remove(1)
        assert 1 not in index and len(index) == 4
        remaining = {doc_id: text for doc_id, text in PETS.items() if doc_id != 1}
        # Same scores as an index that never saw it: df, lengths and postings all cleaned up.
        assert index.search("cat shelter alice", k=5) == build(remaining).search("cat shelter alice", k=5)

    def test_removing_an_unknown_id_twice_is_harmless(self):
        index = build(PETS)
        index.remove(99)
        index.remove(1)
        index.remove(1)
        assert len(index) == 4

    def test_removing_everything_leaves_an_empty_index(self):
        index = build(PETS)
        for doc_id in PETS:
            index.remove(doc_id)
        assert len(index) == 0 and index.search("cat", k=5) == []
        index.add(1, "cat")
        assert index.search("cat", k=5)[0][0] == 1


class TestParameters:
    def test_it_rejects_out_of_range_parameters(self):
        with pytest.raises(ValueError):
            BM25Index(b=1.5)
        with pytest.raises(ValueError):
            BM25Index(k1=-1)

    def test_longer_documents_score_lower_when_b_is_positive(self):
        docs = {1: "kite", 2: "kite meadow river forest mountain valley"}
        assert [doc_id for doc_id, _ in build(docs).search("kite", k=2)] == [1, 2]
        no_length = build(docs, b=0.0).search("kite", k=2)
        assert no_length[0][1] == pytest.approx(no_length[1][1])


class TestAgainstPlainBM25:
    """Random corpora with a skewed vocabulary, so that the early termination kicks in on common words."""

    @pytest.mark.parametrize("seed", range(6))
    def test_it_returns_exactly_what_scoring_every_document_returns(self, seed):
        rng = random.Random(seed)
        vocabulary = [f"w{i}x" for i in range(60)]
        weights = [1 / (rank + 1) for rank in range(len(vocabulary))]
        docs = {
            doc_id: " ".join(rng.choices(vocabulary, weights=weights, k=rng.randint(1, 12)))
            for doc_id in rng.sample(range(1000), 300)
        }
        index = build(docs)
        for _ in range(25):
            query = " ".join(rng.choices(vocabulary, weights=weights, k=rng.randint(1, 8)))
            k = rng.choice([1, 3, 10, 50])
            allowed = set(rng.sample(sorted(docs), 40)) if rng.random() < 0.3 else None
            got = index.search(query, k, allowed=allowed)
            expected = reference_search(docs, query, k, allowed=allowed)
            assert [doc_id for doc_id, _ in got] == [doc_id for doc_id, _ in expected]
            assert [score for _, score in got] == pytest.approx([score for _, score in expected])


class TestArrayScoring:
    """Queries over long postings are scored with numpy; the results must be those of the Python loop to
    the last bit, also after documents are added, replaced and removed."""

    def search_both(self, index: BM25Index, query: str, k: int, allowed=None, monkeypatch=None):
        monkeypatch.setattr(lexical, "ARRAY_SCORING_MIN_POSTINGS", 10**12)
        python = index.search(query, k, allowed=allowed)
        monkeypatch.setattr(lexical, "ARRAY_SCORING_MIN_POSTINGS", 0)
        arrays = index.search(query, k, allowed=allowed)
        return python, arrays

    @pytest.mark.parametrize("seed", range(4))
    def test_it_returns_bit_for_bit_what_the_python_loop_returns(self, seed, monkeypatch):
        rng = random.Random(seed)
        vocabulary = [f"w{i}x" for i in range(80)]
        weights = [1 / (rank + 1) for rank in range(len(vocabulary))]

        def text() -> str:
            return " ".join(rng.choices(vocabulary, weights=weights, k=rng.randint(1, 14)))

        index = build({doc_id: text() for doc_id in rng.sample(range(5000), 600)})
        for step in range(40):
            query = " ".join(rng.choices(vocabulary, weights=weights, k=rng.randint(1, 8)))
            k = rng.choice([1, 3, 10, 50, 1000])
            allowed = set(rng.sample(range(5000), 300)) if rng.random() < 0.3 else None
            python, arrays = self.search_both(index, query, k, allowed, monkeypatch)
            assert arrays == python  # same ids, same order, same floats
            # change the index between searches: arrays made by earlier searches must follow
            for doc_id in rng.sample(range(5000), 20):
                if rng.random() < 0.5:
                    index.remove(doc_id)
                else:
                    index.add(doc_id, text())
            if step == 20:
                for doc_id in list(index._doc_len)[:300]:
                    index.remove(doc_id)

    def test_an_emptied_and_refilled_index_still_agrees(self, monkeypatch):
        index = build(PETS)
        for doc_id in PETS:
            index.remove(doc_id)
        python, arrays = self.search_both(index, "cat shelter", 5, None, monkeypatch)
        assert python == arrays == []
        for doc_id, text in PETS.items():
            index.add(doc_id + 100, text)
        python, arrays = self.search_both(index, "cat shelter", 5, None, monkeypatch)
        assert python == arrays and [doc_id for doc_id, _ in arrays] == [101, 103, 105]
