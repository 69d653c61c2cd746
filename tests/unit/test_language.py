"""language/reading.py: how a message is read, the same way by promotion, the prompt and recall."""

import pytest

from memory_engine.language.reading import (
    is_statement,
    opens_as_imperative,
    plain,
    questions,
    speaks_of_self,
    split_sentences,
)


class TestSplitSentences:
    def test_it_splits_on_terminal_punctuation_and_line_breaks(self):
        assert split_sentences("It rained. Did it?\nYes!! Then… sun") == [
            "It rained.",
            "Did it?",
            "Yes!!",
            "Then…",
            "sun",
        ]

    def test_it_does_not_split_after_abbreviations_initials_or_inside_numbers(self):
        text = "Dr. Smith met J. K. Rowling, e.g. at 3.30 pm. Then they left."
        assert split_sentences(text) == ["Dr. Smith met J. K. Rowling, e.g. at 3.30 pm.", "Then they left."]

    def test_it_removes_speaker_labels_and_treats_them_as_boundaries(self):
        text = "User: what should I cook tonight Assistant: Try a lentil soup. Caroline: Sounds good."
        assert split_sentences(text) == ["what should I cook tonight", "Try a lentil soup.", "Sounds good."]

    def test_it_keeps_a_colon_inside_a_sentence(self):
        assert split_sentences("I told Bob: no way.") == ["I told Bob: no way."]

    def test_it_drops_fragments_without_words_and_collapses_whitespace(self):
        assert split_sentences("  Great   news!  🎉🎉 \n\n ... \t") == ["Great news!"]

    @pytest.mark.parametrize("text", ["", "   ", "🙂", "\n\t... !!"])
    def test_it_returns_nothing_for_input_without_words(self, text):
        assert split_sentences(text) == []

    def test_it_keeps_html_and_unicode_text_intact(self):
        assert split_sentences("<b>Café</b> naïve 😊 déjà vu. Ok") == ["<b>Café</b> naïve 😊 déjà vu.", "Ok"]


def test_plain_writes_out_chat_spelling_straightens_apostrophes_and_is_its_own_fixed_point():
    assert plain("Whats   ur  cat\u2019s name  pls") == "what's your cat's name please"
    assert plain("my ID number") == "my id number"  # "id" is no chat spelling of "I'd"
    for text in ("Whats ur name", "I\u2019M  HOME", "r u there?"):
        assert plain(plain(text)) == plain(text)


def test_a_sentence_speaks_of_the_speaker_with_i_or_we_however_its_apostrophes_are_written():
    assert speaks_of_self("I\u2019ve moved to Leeds.")
    assert speaks_of_self("We moved to Lisbon in May.")  # a couple's move is theirs too
    assert speaks_of_self("Our cat is called Miso.")
    assert not speaks_of_self("The standup moved to 9:15.")
    assert not speaks_of_self("Imagine a cat.")  # a word that starts like "I'm" is not one


def test_a_sentence_tells_unless_it_asks():
    assert is_statement("I moved to Leeds, which is nice.")  # a relative clause asks nothing
    assert is_statement("Got the job, how cool is that")
    assert is_statement("my husband Otieno says I should rehearse")
    assert not is_statement("the jab got moved, what day was it")  # asks in its last clause
    assert not is_statement("btw do u think its worth buying a used laptop")  # opens as a question
    assert not is_statement("im making a sticker of my hamster what did i say his name was")  # asks inside


def test_only_the_sentences_that_ask_are_questions():
    assert questions("I've tried everything. What helps with jet lag?") == ["what helps with jet lag?"]
    assert questions("Dr. Okafor is my GP. Is he in on Monday?") == ["is he in on monday?"]


@pytest.mark.parametrize(
    ("request_", "tells"),
    [
        ("Redo the tile calc with the right area", False),
        ("redo the flyer con el precio correcto", False),
        ("Recuérdame la fecha de la entrevista para ponerla en el calendario", False),
        ("Redo the shopping list to fit the weekly budget", False),
        ("ok so please draft a polite reply, keep it short", False),
        # a thing of theirs, a figure or a name carried on the way is told (a German noun too)
        ("escríbeme un mensajito para la vet confirmando la cita, y pon el nombre de mi perrita", True),
        ("Please add something about our late father, that he would be very proud.", True),
        ("Schreiben Sie bitte eine kurze Adressänderung für meine Bank, mit meiner neuen Anschrift.", True),
        ("Escreve uma legenda curta para o Instagram com o nome da empresa", True),
        ("gawa ka ng short caption for IG, ilagay mo yung name ng bakery ko", True),
    ],
)
def test_a_request_in_the_imperative_in_any_language_tells_only_what_it_carries(request_, tells):
    # Written by someone who saw no code: each was answered "Noted." with no key, and a request that carried
    # nothing was quoted back later ("What size were the tiles again?" got "Redo the tile calc with the right area").
    assert opens_as_imperative(plain(request_))
    assert is_statement(request_) is tells


@pytest.mark.parametrize(
    "statement",
    [
        "Plan is to fly out on Monday.",
        "Show was great last night.",
        "Make is Toyota, a 2011 Corolla.",
        "Update: the party moved to Friday.",
        "Change of plan: Rhiannon's working that weekend.",
        "Check-in is at 3pm.",
        "Help, my cat is sick.",
        "oh and remind me my fishing buddy lyle's birthday is june 18th i always forget it",
        # from a review: a subject left out, not a request
        "sort of nervous about my interview tomorrow",
        "list of my allergies: penicillin and latex",
        "work out most mornings before my shift at the hospital",
        # a request that carries a figure or a name tells it on the way
        "Please help me draft a polite reminder for invoice INV-0317 to Halvorsen Maritime, amount EUR 2,340.",
        "update party moved to Sun 10th, Bounce Barn double booked.",
        "write a birthday card for my sister Ines",
    ],
)
def test_the_same_words_telling_are_statements(statement):
    assert is_statement(statement)
    assert not questions(statement)


def test_remind_me_with_a_question_in_it_asks():
    # from a review: "remind me my wifi password is it the one with the dog" asks, with no question mark
    assert not is_statement("remind me my wifi password is it the one with the dog")
    assert not is_statement("remind me the dentist's name, was it patel or shah")
