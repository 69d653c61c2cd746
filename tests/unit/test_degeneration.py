"""The degeneration guard judges replies without a model: loops, echoed scaffolding, role markers,
claims to be the user, canned repeats."""

import pytest

from memory_engine.llm.degeneration import ReplyGuard, loop_problem, most_repeated_ngram

# Replies the bundled model really gives without the guard, and their like.
LOOPS = [
    "He was a little cat, and he was a little cat, and he was a little cat, and he was a little cat",
    "The user's profile: The user's profile: The user's profile: The user's profile:",
    "I'm glad to know that you're happy to help me with this. I'm glad to know that you're happy to help me "
    "with that. I'm glad to know that you're happy to help me with everything.",
    "hahahahahahahahahahahahaha",
    "Sure!!!!!!!!!!!!!!!!!!!!",
]
FINE = [
    "Your dog is called Pixel. Pixel is a lovely name for a beagle.",
    "You work as a nurse in Lyon. That must keep you busy!",
    "I don't know where your sister lives yet; you haven't told me.",
    "Try oats with a banana about two hours before the run, and drink some water.",
]


@pytest.mark.parametrize("text", LOOPS)
def test_it_calls_a_loop_a_loop(text):
    assert loop_problem(text) is not None


@pytest.mark.parametrize("text", FINE)
def test_it_lets_ordinary_replies_through(text):
    guard = ReplyGuard(scaffolding=["What you know about Sam"], user_names=["Sam"])
    assert guard.streaming_problem(text) is None
    assert guard.problem(text) is None


def test_it_counts_the_most_repeated_four_words():
    assert most_repeated_ngram("a b c d a b c d a b c d") == ("a b c d", 3)
    assert most_repeated_ngram("too short") == ("", 0)


def test_a_four_word_sequence_twice_is_still_fine_but_three_times_is_a_loop():
    twice = "I love my dog. I love my dog very much."
    assert loop_problem(twice) is None
    assert "i love my dog" in loop_problem(twice + " I love my dog, truly.")


def test_it_stops_at_the_prompts_scaffolding_and_chat_role_markers():
    guard = ReplyGuard(scaffolding=["What you know about Sam"])
    assert "echoes" in guard.streaming_problem("Sure. What you know about Sam: he")
    assert "role marker" in guard.streaming_problem("Fine, thanks.\nUser: and you?")
    assert "role marker" in guard.streaming_problem("Hello<|im_start|>user")
    assert guard.streaming_problem("The user asked a good question.") is None


def test_it_refuses_a_reply_that_claims_the_users_name():
    guard = ReplyGuard(user_names=["Sam"])
    assert "speaks as the user" in guard.problem("I'm Sam, a nurse in Lyon.")
    assert "speaks as the user" in guard.problem("Hello! My name is sam.")
    assert guard.problem("Hello Sam, nice to see you again.") is None
    assert guard.problem("I'm Samuel's friend.") is None


def test_it_refuses_the_same_words_it_gave_to_another_message():
    guard = ReplyGuard(earlier_replies=["Pixel, my friend."])
    assert "word for word" in guard.problem("pixel my friend")
    assert guard.problem("Pixel is your dog, my friend.") is None


def test_it_refuses_a_reply_that_describes_the_user_by_name_or_recites_the_instructions():
    """What the bundled model does with notes about the person: "Maria Lindqvist - A friendly and helpful
    person", "Dana's a wonderful person", and its instructions read back."""
    guard = ReplyGuard(
        user_names=["Maria Lindqvist", "Maria", "Dana"],
        instructions="Reply to the user in one or two short, kind sentences.",
        strict_names=True,
    )
    for text in (
        "Maria Lindqvist - A friendly and helpful person who loves cats.",
        "Dana's a wonderful person with many talents.",
        "I think Maria is an excellent nurse.",
        "Sure! I will reply to the user in one or two short sentences.",
    ):
        assert guard.problem(text) is not None, text
    assert guard.problem("Maria, that sounds like a lovely weekend!") is None  # spoken to, not described


def test_a_weak_models_guard_refuses_a_reply_opening_with_the_users_name_or_a_speakers_label():
    weak = ReplyGuard(user_names=["Sofia"], strict_names=True)
    assert weak.problem("Sofia! Welcome to my kitchen!") == "opens with the user's name"
    assert weak.problem("Mike Brennan: Hey! Hope you're well.").startswith("opens with a speaker's label")
    assert weak.problem("Welcome, Sofia! How was the bakery?") is None
    # one word is a label too: every small-talk reply of the bundled model on holdouts 10 and 11 that opened so
    # was a transcript or a garble ("Alaadin: Fetu l'enso", "A: 15 minutes", "Hao: Hello! Welcome to Monash")
    assert weak.problem("Alaadin: Fetu l'enso, a la fatta dolce!") == "opens with a speaker's label 'Alaadin:'"
    assert weak.streaming_problem("A: 15 minutes") == "opens with a speaker's label 'A:'"
    assert weak.problem("Good question: it takes about ten minutes.") is None  # a colon later in a sentence
    assert ReplyGuard().problem("Tip: drink water first.") is None  # a capable model's reply
    assert ReplyGuard(user_names=["Sofia"]).problem("Sofia, welcome back!") is None


def test_a_weak_models_small_talk_may_not_offer_condolences_no_one_asked_for():
    """The bundled model answered a sister's visit and the weather with "I'm sorry for your loss"."""
    visit = ReplyGuard(strict_names=True, heard=["My sister Ines came over today, we baked all afternoon"])
    assert "condolences" in visit.problem("I'm so sorry for your loss. Baking together is a comfort.")
    assert "condolences" in visit.problem("My deepest sympathy to you and Ines.")
    assert visit.problem("That sounds like a lovely afternoon with Ines!") is None
    grief = ReplyGuard(strict_names=True, heard=["our old dog Rex died on Sunday"])
    assert grief.problem("I'm so sorry for your loss. Rex sounds like he was a good boy.") is None


def test_a_weak_models_small_talk_may_not_name_what_no_one_said_nor_claim_it_was_told():
    """It has no memory in its prompt, so a name or "as you mentioned" is made up: "a film by an invented
    director"."""
    guard = ReplyGuard(
        # plain words: the assistant's name, and capitalised words that name no one (the generator gives languages,
        # days, months and greetings)
        strict_names=True,
        heard=["any good films for a rainy Sunday? I loved Amélie"],
        plain_words=["Helper", "French"],
    )
    assert guard.problem("Try Lighthouse Keeper by Tomas Verhoeven.") == "names 'Lighthouse', which no one said"
    assert "was told" in guard.problem("As you mentioned, you love horror films.")
    assert guard.problem("If you loved Amélie, a cosy French comedy is a good bet.") is None
    assert guard.problem("A cosy comedy (Marguerite) would suit you.") == "names 'Marguerite', which no one said"
    assert guard.problem("It is a gentle film; Verhoeven made it.") == "names 'Verhoeven', which no one said"
    assert guard.problem("Hi, I'm Helper! Enjoy your rainy Sunday.") is None
    # while it streams, a name is judged once it is whole: "Amé" may yet be "Amélie"
    assert guard.streaming_problem("If you loved Amé") is None


def test_only_a_weak_models_small_talk_is_held_to_what_was_said():
    said = ["what should I watch tonight?"]
    assert ReplyGuard(heard=said).problem("Try Casablanca, a classic.") is None  # a capable model's reply
    assert ReplyGuard(strict_names=True).problem("Try Casablanca, a classic.") is None  # no small talk known
    assert ReplyGuard(strict_names=True, heard=said).problem("Try Casablanca, a classic.") is not None


def test_a_list_heading_or_a_story_asked_for_names_nothing_about_anyone():
    how_to = ReplyGuard(strict_names=True, heard=["how do you make good cold brew at home?"])
    assert how_to.problem("To make it:\n\n1. **Grind The Beans**: coarse, like sea salt.") is None
    assert how_to.problem("1. Steep: leave it overnight. Try beans from Lavazza.") is not None
    story = ReplyGuard(strict_names=True, heard=["can you tell me a short story, something calm"])
    assert story.problem("Once, an owl named Elara lived in a quiet wood.") is None


def test_a_possessive_the_person_typed_names_them_and_a_capitalised_instruction_names_no_one():
    guard = ReplyGuard(strict_names=True, heard=["it's anna's birthday on friday, any cake ideas?"])
    assert guard.problem("A lemon cake! Say happy birthday to Anna from me.") is None
    assert guard.problem("Here's an idea: Take a long walk, then watch some TV.") is None


def test_a_name_written_in_mixed_case_or_joined_by_a_hyphen_is_a_name_too():
    """The bundled model's small talk named "WhatsApp", "YouTube", "a SaaS company", "Teco-Caman" and "the
    Michelin-starred restaurant" when no one had: a name with a capital inside it, two joined by a hyphen, or one
    before a hyphen, is a name like any other."""
    guard = ReplyGuard(strict_names=True, heard=["my cousin is visiting from Lyon next week, any plans?"])
    assert guard.problem("You could send her the plan on WhatsApp first.") == "names 'WhatsApp', which no one said"
    assert (
        guard.problem("There are walking tours on YouTube to watch together.") == "names 'YouTube', which no one said"
    )
    assert guard.problem("Since you work at a SaaS company, take a day off.") == "names 'SaaS', which no one said"
    assert guard.problem("Book a table at Teco-Caman, she will love it.") == "names 'Teco-Caman', which no one said"
    assert guard.problem("Enjoy a meal at the Michelin-starred place.") == "names 'Michelin', which no one said"
    # heard, word for word or in its parts, and capitals that are no name (TV, a list's DIY), pass
    heard = ReplyGuard(strict_names=True, heard=["we watched a show on youtube with my aunt Marie-Claire"])
    assert heard.problem("That sounds fun! YouTube has lots, and Marie-Claire might like a film on TV.") is None
    assert guard.problem("Maybe watch some TV, or try a DIY project together.") is None
