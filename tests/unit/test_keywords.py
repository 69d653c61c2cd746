import pytest

from memory_engine.language.keywords import (
    STOPWORDS,
    content_tokens,
    extract_keywords,
    jaccard,
    normalize_token,
    strip_speaker_labels,
    tokenize,
)


class TestTokenize:
    def test_it_lower_cases_and_drops_punctuation(self):
        assert tokenize("Hello, World! It's 2024.") == ["hello", "world", "it's", "2024"]

    def test_it_keeps_apostrophes_inside_words_only(self):
        assert tokenize("don't 'quoted' rock'n'roll '90s") == ["don't", "quoted", "rock'n'roll", "90s"]

    def test_it_treats_curly_apostrophes_as_straight_ones(self):
        assert tokenize("Don’t") == tokenize("don't") == ["don't"]

    def test_it_keeps_unicode_letters_and_folds_case(self):
        assert tokenize("Café naïve STRASSE Straße Ｆｕｌｌ") == [
            "café",
            "naïve",
            "strasse",
            "strasse",
            "full",
        ]

    def test_it_handles_decomposed_accents_as_one_word(self):
        assert tokenize("cafe\u0301 ok") == ["café", "ok"]

    def test_it_splits_on_underscores_emoji_and_markup(self):
        assert tokenize("snake_case 🎉party🎉 <b>bold</b>") == ["snake", "case", "party", "b", "bold", "b"]

    @pytest.mark.parametrize("text", ["", "   ", "🙂🙂", "...", "<!-- -->", "\u200b\n\t"])
    def test_it_returns_nothing_for_text_without_words(self, text):
        assert tokenize(text) == []


class TestStopwords:
    def test_it_includes_chat_filler(self):
        assert {"yeah", "really", "just", "gonna", "lol", "okay"} <= STOPWORDS

    def test_every_stopword_is_a_single_token_as_tokenize_returns_it(self):
        # A stopword that tokenize can never produce ("I'm" with capitals, "e.g.") would silently not apply.
        assert [word for word in sorted(STOPWORDS) if tokenize(word) != [word]] == []


class TestNormalizeToken:
    @pytest.mark.parametrize(
        ("forms", "expected"),
        [
            (["cat", "cats"], "cat"),
            (["puppy", "puppies"], "puppy"),
            (["study", "studies", "studied", "studying"], "study"),
            (["die", "dies", "died"], "die"),
            (["box", "boxes", "boxed", "boxing"], "box"),
            (["tomato", "tomatoes"], "tomato"),
            (["shoe", "shoes"], "shoe"),
            (["paint", "paints", "painted", "painting"], "paint"),
            (["bake", "baked", "baking", "bakes"], "bake"),
            (["run", "running"], "run"),
            (["glass", "glasses"], "glass"),
            (["caroline", "caroline's"], "caroline"),
        ],
    )
    def test_inflected_forms_meet(self, forms, expected):
        assert {normalize_token(form) for form in forms} == {expected}

    @pytest.mark.parametrize("word", ["bus", "tennis", "gas", "yes", "class", "sing", "thing"])
    def test_it_leaves_words_that_only_look_inflected(self, word):
        assert normalize_token(word) == word


class TestContentTokens:
    def test_it_drops_stopwords_fillers_and_single_letters(self):
        assert content_tokens("Yeah, I really just painted a lake x sunrise!") == ["paint", "lake", "sunrise"]

    def test_it_keeps_order_and_repeats_for_term_frequencies(self):
        assert content_tokens("cats and more cats, dogs") == ["cat", "cat", "dog"]

    def test_it_drops_words_that_become_stopwords_once_normalised(self):
        assert content_tokens("things others") == []


class TestExtractKeywords:
    def test_it_ranks_by_frequency_and_merges_plurals(self):
        texts = ["My cat sleeps all day.", "Cats love boxes.", "The cats ignore the dog."]
        # cat/cats: 3; every other word once, so longer words first.
        assert extract_keywords(texts, k=3) == ["cat", "ignore", "sleep"]

    def test_its_keywords_compare_with_a_querys_content_tokens(self):
        keywords = extract_keywords(["We planted tomatoes.", "The tomatoes need sun."], k=2)
        assert keywords == ["tomato", "plant"]
        assert jaccard(keywords, content_tokens("Are my tomato plants growing?")) == pytest.approx(2 / 3)

    def test_it_prefers_words_spread_over_several_texts(self):
        # "garden" and "invoice" both occur twice; "garden" is in two texts, "invoice" twice in one.
        texts = ["garden invoice invoice", "garden"]
        assert extract_keywords(texts, k=2) == ["garden", "invoice"]

    def test_it_breaks_remaining_ties_by_length_then_alphabet(self):
        assert extract_keywords(["zebra apple kiwi banana"], k=4) == ["banana", "apple", "zebra", "kiwi"]

    def test_it_can_spell_keywords_as_most_often_seen_for_display(self):
        assert extract_keywords(["painting", "painting", "painted"], k=1) == ["paint"]
        assert extract_keywords(["painting", "painting", "painted"], k=1, surface=True) == ["painting"]
        assert extract_keywords(["Cats?", "cat", "cats"], k=1, surface=True) == ["cats"]

    def test_it_ignores_speaker_labels(self):
        texts = ["User: I planted tomatoes.\nAssistant: Tomatoes need sun.", "User: tomatoes again"]
        assert extract_keywords(texts, k=1) == ["tomato"]
        assert "user" not in extract_keywords(texts, k=10)

    def test_it_does_not_depend_on_the_order_of_the_texts(self):
        texts = ["hiking trip mountains", "mountains lake", "budget trip lake", "camera lake"]
        assert extract_keywords(texts) == extract_keywords(list(reversed(texts)))

    @pytest.mark.parametrize(("texts", "k"), [([], 8), ([""], 8), (["yeah lol"], 8), (["garden"], 0)])
    def test_it_returns_an_empty_list_when_there_is_nothing_to_say(self, texts, k):
        assert extract_keywords(texts, k=k) == []

    def test_it_survives_emoji_and_html(self):
        assert extract_keywords(["<p>Pizza 🍕 night!</p>", "pizza 🍕"], k=1) == ["pizza"]


class TestStripSpeakerLabels:
    def test_it_removes_role_labels_anywhere_and_name_labels_at_line_starts(self):
        text = "User: what should I cook Assistant: Try soup.\nCaroline: Sure. I told Bob: no."
        assert " ".join(strip_speaker_labels(text).split()) == "what should I cook Try soup. Sure. I told Bob: no."


class TestJaccard:
    def test_it_is_intersection_over_union(self):
        assert jaccard(["a", "b", "c"], ["b", "c", "d"]) == pytest.approx(0.5)

    def test_it_treats_inputs_as_sets(self):
        assert jaccard(["a", "a"], ["a"]) == 1.0

    def test_it_is_zero_for_two_empty_inputs_and_for_disjoint_ones(self):
        assert jaccard([], set()) == 0.0
        assert jaccard({"a"}, {"b"}) == 0.0
