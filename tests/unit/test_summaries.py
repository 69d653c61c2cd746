import numpy as np
import pytest

from memory_engine.engine.summaries import extractive_summary, thread_summary
from memory_engine.language.reading import split_sentences

GARDEN_PAGES = [
    "User: Yeah! I planted tomatoes and basil in the garden this weekend. "
    "Assistant: Tomatoes and basil grow well together in a sunny garden bed.",
    "User: Thanks. The tomatoes need staking because the garden gets windy. "
    "Assistant: Bamboo stakes keep tomato plants upright in windy gardens.",
    "User: My tax return is due on Friday and the forms confuse me. Assistant: Ok.",
    "User: Should I water the garden tomatoes every morning? "
    "Assistant: Water tomatoes deeply at the roots in the morning, every two days.",
]


def sentences_of(*texts: str) -> set[str]:
    return {sentence for text in texts for sentence in split_sentences(text)}


def unit(*rows: list[float]) -> np.ndarray:
    matrix = np.array(rows, dtype=np.float32)
    return matrix / np.linalg.norm(matrix, axis=1, keepdims=True)


class TestExtractiveSummary:
    def test_it_is_made_of_real_non_trivial_sentences_in_original_order(self):
        summary = extractive_summary(GARDEN_PAGES, None, max_chars=400)
        available = sentences_of(*GARDEN_PAGES)
        chosen = split_sentences(summary)
        assert chosen and set(chosen) <= available
        assert not {"Yeah!", "Thanks.", "Ok."} & set(chosen)
        flat = " ".join(sentence for page in GARDEN_PAGES for sentence in split_sentences(page))
        positions = [flat.index(sentence) for sentence in chosen]
        assert positions == sorted(positions)

    def test_an_aside_comes_last(self):
        assert "tax return" not in extractive_summary(GARDEN_PAGES, None, max_chars=300)
        assert "tax return" in extractive_summary(GARDEN_PAGES, None, max_chars=1000)
        # With vectors the off-topic page ranks last, so its sentence is the last to be considered too.
        vectors = unit([1.0, 0.1], [1.0, 0.2], [0.0, 1.0], [1.0, 0.0])
        assert "tax return" not in extractive_summary(GARDEN_PAGES, vectors, max_chars=300)

    def test_without_vectors_it_picks_the_sentence_covering_the_common_topic(self):
        summary = extractive_summary(GARDEN_PAGES, None, max_chars=80)
        assert "tomato" in summary.lower() and "tax" not in summary

    def test_with_vectors_it_starts_from_the_text_closest_to_the_centroid(self):
        texts = [
            "The quarterly budget review is scheduled for next Monday morning.",
            "Our hiking group climbed the northern ridge before sunrise today.",
            "Hiking boots need breaking in before any long mountain trail.",
        ]
        # Text 2 sits between the other two, so it is the most central one.
        vectors = unit([1.0, 0.0], [0.0, 1.0], [0.6, 0.8])
        assert extractive_summary(texts, vectors, max_chars=70) == texts[2]
        # Moving the centre to text 1 changes the pick: the vectors, not the words, decide.
        vectors = unit([1.0, 0.0], [0.5, 0.5], [0.0, 1.0])
        assert extractive_summary(texts, vectors, max_chars=70) == texts[1]

    def test_with_vectors_it_takes_one_sentence_per_text_before_a_second(self):
        texts = [
            "Tomatoes need full sun in the garden. Water the garden tomatoes deeply twice a week.",
            "Basil likes warm soil near the tomatoes.",
        ]
        # Room for two sentences: word coverage alone would take both tomato sentences of the first text.
        assert "Basil" not in extractive_summary(texts, None, max_chars=90)
        summary = extractive_summary(texts, unit([1.0, 0.1], [1.0, 0.0]), max_chars=90)
        assert summary == "Tomatoes need full sun in the garden. Basil likes warm soil near the tomatoes."

    @pytest.mark.parametrize("max_chars", [1, 2, 5, 17, 40, 80, 133, 250, 400, 1000])
    def test_it_never_exceeds_max_chars(self, max_chars):
        for vectors in (None, unit(*[[1.0, i * 0.1] for i in range(len(GARDEN_PAGES))])):
            assert len(extractive_summary(GARDEN_PAGES, vectors, max_chars=max_chars)) <= max_chars

    def test_it_cuts_a_too_long_sentence_on_a_word_boundary(self):
        text = "The community garden committee decided to plant heirloom tomatoes along the southern fence."
        summary = extractive_summary([text], None, max_chars=40)
        assert summary.endswith("…") and len(summary) <= 40
        assert text.startswith(summary[:-1]) and text[len(summary) - 1] == " "

    def test_it_prefers_contentful_sentences_but_uses_short_ones_when_nothing_else_exists(self):
        assert extractive_summary(["Yeah! Thanks. Lovely pottery class."], None) == "Lovely pottery class."
        assert extractive_summary(["Yeah! Thanks! Lol."], None) == ""

    def test_it_does_not_repeat_a_sentence_said_twice(self):
        text = "We adopted a rescue greyhound named Pepper. We adopted a rescue greyhound named Pepper."
        assert extractive_summary([text, text], None) == "We adopted a rescue greyhound named Pepper."

    def test_it_is_deterministic_and_independent_of_vector_dtype(self):
        vectors = unit(*[[1.0, i * 0.3, 0.2] for i in range(len(GARDEN_PAGES))])
        first = extractive_summary(GARDEN_PAGES, vectors)
        assert first == extractive_summary(list(GARDEN_PAGES), vectors.astype(np.float64).copy())
        assert extractive_summary(GARDEN_PAGES, None) == extractive_summary(GARDEN_PAGES, None)

    @pytest.mark.parametrize("texts", [[], [""], ["   "], ["🙂"]])
    def test_it_returns_an_empty_string_for_empty_input(self, texts):
        assert extractive_summary(texts, None) == ""

    def test_zero_vectors_fall_back_to_keyword_coverage(self):
        zeros = np.zeros((len(GARDEN_PAGES), 4))
        assert extractive_summary(GARDEN_PAGES, zeros) == extractive_summary(GARDEN_PAGES, None)

    def test_it_rejects_vectors_that_do_not_match_the_texts(self):
        with pytest.raises(ValueError):
            extractive_summary(GARDEN_PAGES, np.ones((2, 3)))
        with pytest.raises(ValueError):
            extractive_summary(GARDEN_PAGES, np.ones(len(GARDEN_PAGES)))

    def test_it_survives_html_emoji_and_odd_unicode(self):
        texts = [
            "<script>alert('x')</script> We baked 🍪 cookies for the école fête today!",
            "\x00\u200b\ufeff",
        ]
        summary = extractive_summary(texts, None, max_chars=120)
        assert "cookies" in summary and len(summary) <= 120


class TestThreadSummary:
    PREVIOUS = "Alice is planning a trip to Lisbon in May with her sister."

    def test_an_update_with_nothing_new_returns_the_summary_unchanged(self):
        assert thread_summary(self.PREVIOUS, "") == self.PREVIOUS
        assert thread_summary(thread_summary(self.PREVIOUS, ""), "") == self.PREVIOUS

    def test_it_adds_new_information_when_there_is_room(self):
        updated = thread_summary(self.PREVIOUS, "User: Yeah. They booked a small hotel near the Alfama district.")
        assert updated == self.PREVIOUS + " They booked a small hotel near the Alfama district."

    def test_a_long_new_exchange_does_not_crowd_out_the_earlier_topic(self):
        new_text = (
            "User: How do I make risotto? Assistant: Toast the risotto rice in butter before adding broth. "
            "Add warm broth to the risotto one ladle at a time, stirring often. "
            "Finish the risotto with parmesan and a knob of cold butter. "
            "Arborio rice gives risotto its creamy texture without any cream. "
            "Rest the risotto for two minutes before serving with more parmesan."
        )
        updated = thread_summary(self.PREVIOUS, new_text, max_chars=200)
        assert "Lisbon" in updated and "risotto" in updated
        assert len(updated) <= 200

    @pytest.mark.parametrize("max_chars", [0, 1, 10, 59, 60, 150, 300])
    def test_it_never_exceeds_max_chars(self, max_chars):
        updated = thread_summary(self.PREVIOUS, " ".join(GARDEN_PAGES), max_chars=max_chars)
        assert len(updated) <= max_chars

    def test_it_is_deterministic_across_a_running_thread(self):
        def run() -> str:
            summary = ""
            for page in GARDEN_PAGES:
                summary = thread_summary(summary, page)
            return summary

        assert run() == run()
        assert set(split_sentences(run())) <= sentences_of(*GARDEN_PAGES)

    @pytest.mark.parametrize(("previous", "new_text"), [("", ""), ("   ", "🙂"), ("Ok!", "Yeah.")])
    def test_it_returns_an_empty_string_when_nothing_is_worth_keeping(self, previous, new_text):
        assert thread_summary(previous, new_text) == ""
