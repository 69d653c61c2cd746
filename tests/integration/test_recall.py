"""Answering from memory (engine/recall.py): a weak model's question about the person is answered with
their own words, quoted and dated; small talk stays with the model. The pure parts first, then through
the reply path with the bundled model's class (a quoted answer never loads the model)."""

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from bench.fake_llm_server import reply
from memory_engine.documents import AnswerDoc
from memory_engine.engine import recall
from memory_engine.engine.recall import Statement
from memory_engine.engine.retriever import retrieve
from memory_engine.interfaces.memoryos import MemoryOS
from memory_engine.language import memory_requests
from memory_engine.language.intent import answer_kind, read
from memory_engine.models import MidTermSession, Page
from tests.api_helpers import SPACE, client_for
from tests.memory_helpers import (
    ScriptedReranker,
    days_ago,
    nothing_extracted,
    offline_model_loaded,
    weak_offline_llm,
)


def test_a_number_with_a_unit_or_a_currency_is_a_number_and_a_place_asked_by_kind_is_a_proper_name():
    for sentence in ("The new pay is 92k.", "Mains go for \u20ac24 here.", "The draft is 60% done."):
        assert recall.answer_fit(sentence, "number") > 0, sentence
    assert recall.answer_fit("Standup is in ten min.", "number") > 0
    assert recall.answer_fit("Standup is soon.", "number") < 0
    assert answer_kind("what city is she flying out of?") == "proper"
    assert answer_kind("which team should the scarf be for?") == "proper"
    assert answer_kind("what's my cat called?") == "name"


def test_a_question_about_someone_elses_name_is_not_answered_with_the_persons_own():
    own, gp = _said("My name is Walter.", 1), _said("Dr Okafor at the surgery is very patient.", 2)
    vectors = np.eye(2)
    question = np.array([0.6, 0.5])
    scores = recall.score_statements(read("What's my GP's name?"), [own, gp], question, vectors, np.zeros_like(vectors))
    assert scores[1] > scores[0]
    own_scores = recall.score_statements(read("What's my name?"), [own, gp], question, vectors, np.zeros_like(vectors))
    assert own_scores[0] > own_scores[1]


def _said(text: str, seq: int, days: float = 1.0) -> Statement:
    return Statement(text=text, said_at=datetime(2026, 11, 20, tzinfo=UTC) - timedelta(days=days), page_id=seq, seq=seq)


@pytest.mark.parametrize(
    ("first", "later", "question", "latest"),
    [
        # a value told again as it is now, in words that score far below the first telling (held-out sets e, f)
        (
            "hostname is vela-stg-03 and the staging box is on 10.42.8.17",
            "ugh they re-ip'd the staging box, it's 10.42.9.40 now",
            "what ip should i put in my ssh config for staging",
            True,
        ),
        (
            "Letting agent's Tayside Lets, the lassie dealing wi it is Morag.",
            "Turns oot Morag's left, it's a guy called Euan now.",
            "Who's dealing wi my case at Tayside Lets noo?",
            True,
        ),
        (
            "new bunny alert her name is Clementine, she's a lionhead",
            "ok so vet said clementine is actually a BOY so new name: Nacho",
            "whats my bunny called now",
            True,
        ),
        # another value of another thing: what a first version took for the latest, on the 24 sets
        (
            "players: Eero (rogue), Linnea (cleric), Jussi (wizard), Aino (bard)",
            "Jussi's wizard died. he's rolling a new character, a ranger named Kalle",
            "who's playing the cleric again",
            False,
        ),
        (
            "I take Metoprolol 47.5 mg in the Morning and Aspirin 100 mg with Breakfast.",
            "Good Morning. The Medical Centre rang. My check-up is now Thursday 6 March at 2.40 pm.",
            "The chemist asked me the dose of my heart tablet in the morning. What is it?",
            False,
        ),
        (
            "Budget is tight because school fees for Wambui at Moi Girls is 45,000 shillings, due on 15th January",
            "Ai, the school sent a letter, the fees are going up to 52,000 this term because of a new bus.",
            "When is the last day to pay the school? The date, please",
            False,
        ),
        (
            "Question about the e-bike: battery is 500 Wh. At 10 Wh per km",
            "Just back from the bike shop. Fiets Hendriks gave me a new chain, 38 euro.",
            "How big is my e-bike battery again?",
            False,
        ),
        (
            "Hello! I am Ji-woo. My English teacher Mr. Hwang say I must write essay about my hero.",
            "Thank you!! Grandmother name is Kang Soon-ja, she is 81 years old now. I want write about her.",
            "who is the teacher that gave us this homework, I want to write his name on cover",
            False,
        ),
        (
            "My son Jabari is 14 and wants to be an architect too.",
            "Conference got rescheduled, the Accra thing is now on the 15th of May.",
            "How old is my boy?",
            False,
        ),
    ],
)
def test_a_value_told_again_as_it_is_now_is_the_latest(first, later, question, latest):
    # (and what a second version still took for the latest: a word shared, a figure of another shape)
    told = [_said(first, 1, days=9), _said(later, 2, days=2)]
    assert (recall.told_now(told[0], told, question, answer_kind(question)) is told[1]) is latest


@pytest.mark.parametrize(
    ("first", "later", "question", "latest"),
    [
        # a figure of a shape few have, told again after the same word of the question, with no word of change
        (
            "Howzit! Car is my old Toyota Corolla, reg ND 482-771.",
            "Polo reg is ND 913-205.",
            "What's the reg of the car we're using, need it for the toll app",
            True,
        ),
        (
            "Daktari wangu ni Dr. Kamau. Reading yangu ilikuwa 158/96 last week.",
            "Reading ya leo ni 138/88, afadhali.",
            "Reading yangu ya mwisho ya pressure ni gani?",
            True,
        ),
        # another word before it, a figure of another shape, or a shape as common as a count: not the same value
        ("Flight out is TP 238-1, gate B.", "My sister's flight is LH 904-2.", "what's my flight number?", False),
        ("Car reg is ND 482-771.", "Car is booked in for 3.5 hours.", "what's the car reg?", False),
        ("My son Jabari is 14.", "Jabari's friend Kofi is 15.", "How old is Jabari?", False),
    ],
)
def test_a_value_told_again_after_the_same_word_is_the_latest(first, later, question, latest):
    told = [_said(first, 1, days=9), _said(later, 2, days=2)]
    assert (recall.keyed_again(told[0], told, question, answer_kind(question)) is told[1]) is latest


def test_a_value_told_now_replaces_a_figure_of_its_shape_though_another_is_nearer_the_question():
    # "staging" stands beside the hostname: the address of the same shape as the new one is what changed
    first = _said(
        "hey so i'm setting up a new staging box for work, hostname is vela-stg-03 and it's on 10.42.8.17", 1, days=9
    )
    later = _said("ugh they re-ip'd the staging box, it's 10.42.9.40 now.", 2, days=2)
    question = "what ip should i put in my ssh config for staging"
    assert recall.told_now(first, [first, later], question, answer_kind(question)) is later


def test_a_question_asking_a_name_prefers_the_sentence_that_names_something_of_theirs():
    assert recall.answer_fit("My housemate Tash swears by it.", "name") > recall.answer_fit(
        "Parked at a truck stop outside Amarillo.", "name"
    )
    assert recall.answer_fit("The weather is awful.", "name") < 0
    assert recall.answer_fit("i live in porto", "name") == 0  # all in lower case: no verdict
    assert recall.answer_fit("It moved to the 21st.", "when") > 0 > recall.answer_fit("It moved again.", "when")


def test_a_newer_statement_on_the_same_subject_is_quoted_after_the_best_one():
    older, newer, other = _said("I live in Porto.", 1), _said("Lisbon is lovely so far.", 5), _said("I like tea.", 3)
    vectors = np.array([[1.0, 0.0], [0.8, 0.6], [0.0, 1.0]])
    assert recall.choose([older, newer, other], [0.9, 0.7, 0.3], vectors) == (older,)
    assert recall.choose([older, newer, other], [0.9, 0.7, 0.3], vectors, asks_now=True) == (older, newer)
    assert recall.choose([older, newer, other], [0.2, 0.1, 0.1], vectors) == ()  # nothing answers


def test_a_later_statement_saying_the_fact_changed_is_quoted_however_its_words_score():
    first = _said("First paper is thermodynamics on the 14th.", 1)
    moved = _said("Update: they postponed the thermo exam to the 21st.", 9)
    vectors = np.array([[1.0, 0.0], [0.7, 0.71]])
    assert recall.choose([first, moved], [1.0, 0.4], vectors) == (first, moved)


def test_a_later_statement_telling_the_value_moved_is_the_latest_though_far_from_a_long_first_one():
    first = _said("ok I need a menu for Ava's 5th birthday party, it's Saturday the 12th at Funland, ~15 kids", 1)
    moved = _said("change of plans, party moved to Sunday the 13th, Funland double-booked us.", 5)
    vectors = np.array([[1.0, 0.0], [0.37, 0.929]])  # a cosine of 0.37: under same_subject
    assert recall.choose([first, moved], [0.9, 0.5], vectors) == (first, moved)
    assert recall.corrects(first.text, moved.text)
    assert not recall.corrects(first.text, "we moved the party games indoors")  # no value moved
    far = np.array([[1.0, 0.0], [0.2, 0.98]])  # about something else
    assert recall.choose([first, moved], [0.9, 0.5], far) == (first,)


def test_a_later_statement_correcting_a_value_of_the_quoted_one_in_so_many_words_is_the_latest_however_it_scores():
    # Written by people who never saw the code (issue 64's set a): the correction scored 0.30 against 0.77, and the
    # old value was given as current.
    iron = _said("my midwife Rosalind told me to take ferrous fumarate 210mg once a day", 1)
    wrong = _said("ah canım I was wrong, Rosalind said twice a day, not once. same 210mg", 6)
    flat = _said("I'm at 4471 rue Sainte-Ursule, apt 6.", 2)
    typo = _said("oups typo, c'est l'apt 8 pas 6, j'étais fatiguée", 7)  # "l'apt" is "apt"
    said = [iron, flat, _said("we're thinking of naming her Defne", 4), wrong, typo]
    assert recall.corrected_later(iron, said) == wrong
    assert recall.corrected_later(iron, said, "number") == wrong
    assert recall.corrected_later(flat, said) == typo
    assert recall.corrected_later(wrong, said) is None  # said before it
    # Corrected in a value of another kind than the question asks: the 18 sets' "What is the name of my wife?"
    # quoting "my wife Sabine wants to make a Kuchen" got "the final is on Sunday, not Saturday" as the latest.
    sabine = _said("My son Jonas has his football final on Saturday, and my wife Sabine wants to make a Kuchen.", 1)
    sunday = _said("the final is on Sunday, not Saturday. The Verein changed it.", 3)
    assert recall.corrected_later(sabine, [sabine, sunday], "name") is None
    assert recall.corrected_later(sabine, [sabine, sunday], "when") == sunday


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        # A helper's review of a first version: a negation alone, an exception, another thing, a short word of
        # another language or the value itself as the word shared.
        ("our puppy is called Biscuit", "no Biscuit, get off the sofa!!"),
        ("my midwife said ferrous fumarate once a day", "not once has the midwife asked how I'm sleeping"),
        ("my daughter is 7", "no 7 year old should have this much homework"),
        ("swim lessons every tuesday at the leisure centre", "no tuesday lesson next week, pool's closed"),
        ("the party is at Hannah's on friday", "not at Hannah's lol"),
        ("book club meets at Hannah's house", "not at Hannah's this month, we're at the pub"),
        ("le rdv chez le garagiste est le 3", "le dîner chez Paul est le 5, pas le 3"),
        ("Der Termin beim Zahnarzt ist am 4. Mai", "die Party ist am 6., nicht am 4."),
        ("My flight to Oslo is on Friday at 9", "the team meeting is not on Friday this week"),
    ],
)
def test_a_negation_that_corrects_nothing_of_the_quoted_statement_is_no_correction(earlier, later):
    assert recall.corrected_later(_said(earlier, 1), [_said(earlier, 1), _said(later, 2)]) is None


def test_a_question_asking_a_date_or_a_count_in_so_many_words_is_answered_only_by_a_statement_holding_one():
    said = [_said("OK. And Julien is worried about the winter, lol.", 1), _said("I love Montréal in June.", 2)]
    now, encoder = datetime(2026, 11, 20, tzinfo=UTC), recall.get_embedder()
    question = read("How much did I say the salary offer was? Julien asks me.")
    found = recall.respond(question, said, encoder, now)
    assert found is not None and found.quoted == ()
    offer = _said("The salary offer came in at 58k, Julien thinks I should take it.", 3)
    found = recall.respond(question, [*said, offer], encoder, now)
    assert found is not None and found.quoted == (offer,)
    assert recall.strict_kind("which day of the week are we shut?")("closed mondays")
    assert recall.strict_kind("what was it my late husband used to say when I hurried him?") is None


@pytest.mark.parametrize(
    ("question", "statement", "holds"),
    [
        # a count is not the day of a date nor a time of day
        ("how many kids does my sister have?", "her wedding is on 3 May in Porto", False),
        ("how much did gus quote me for the brakes", "gus can look at it on 14 May", False),
        ("how much did gus quote me for the brakes", "gus quoted 340 for the brakes", True),
        ("how much does my coffee cost?", "a flat white is 4.50 at the corner", True),  # a price, not a time
        ("how many calories is my plan?", "the dietitian gave me a 1900 calorie plan", True),
        # a count of time may be worked out from dates or times of day
        ("how many days until my exam?", "the exam is on 3 March", True),
        ("how many hours do I work on fridays?", "fridays I'm in 8:30 to 4:30", True),
        # a year asked is a year, or a year of something
        ("what year is the truck for the insurance form", "tanya needs the truck back by friday", False),
        ("what year is the truck for the insurance form", "it's an '09 silverado", True),
        ("what year of my training am i in?", "I'm in my 2nd year at Yarra", True),
        ("what year is my son in?", "Oliver is in year 4 now", True),
        ("what year did we get married?", "we married 10 years ago this June", True),
        ("what year did I buy my house?", "I bought my first house with Tom.", False),
        # an age, in other languages too, may be told by a date it was reached
        ("¿Cuántos años tiene Nico?", "Nico y Lía vienen conmigo", False),
        ("how old is Cian?", "Cian was born in 2019", True),
        # a phone number is a run of digits, in any language; a date, a dose or a day is none
        (
            "WHAT IS THE VETS PHONE NUMBER I LOST THE CARD",
            "THE VET IS DR INGRID HOLM AT LAKESIDE ANIMAL CLINIC.",
            False,
        ),
        ("wats the phone no 4 Kirkgate Surgery", "his GP is dr Ossanya at Kirkgate Surgery btw", False),
        ("Qual é o telefone do Sr. Joaquim?", "O senhorio é o Sr. Joaquim Vaz", False),
        ("Qual é o telefone do Sr. Joaquim?", "o Sr. Joaquim atende no 912 345 678", True),
        ("What is the phone number of Ms. Brandt?", "Ms. Brandt visits on 2026-03-14 at 10:30", False),
        ("what's the clinic's phone number?", "clinic is on +44 20 7946 0958, ask for Jo", True),
        # a time of day is a clock time or a part of a day, not a day alone
        ("what time is the library sesh", "callum is doing a revision sesh w me at the library on weds", False),
        ("At what time does the christening begin?", "Oliver is to be christened on Sunday the 16th of June", False),
        ("what time is the library sesh", "library sesh moved to 4pm", True),
        ("¿A qué hora es la cita?", "la cita es el martes a las 9:30", True),
        ("what time do we land?", "we land at like 7 in the morning", True),
    ],
)
def test_what_a_question_asks_in_so_many_words_a_statement_holds_or_does_not(question, statement, holds):
    assert recall.strict_kind(question)(statement) is holds


def test_a_name_asked_in_words_the_rules_do_not_read_is_answered_by_what_gives_it_or_is_not_known():
    now, encoder = datetime(2026, 11, 20, tzinfo=UTC), recall.get_embedder()
    school = _said("Big news, przeprowadziliśmy się! now we live in Wyndale, Antek zmienia szkołę po feriach", 1)
    teacher = _said("his teacher is Mrs Pemberton-Ray, klasa 5R, Eastbridge Primary", 2)
    found = recall.respond(read("jak się nazywa teacher Antka? piszę kolejny mail."), [school, teacher], encoder, now)
    assert found is not None and teacher in found.quoted and found.read_as == recall.ASKED_OF_ONE_TOLD_ABOUT
    # of someone no statement speaks of: the world's, the model's to answer
    assert recall.respond(read("¿cómo se llama el presidente de Francia?"), [school, teacher], encoder, now) is None
    question = "c'est quoi le nom de mon proprio déjà?"
    landlord = _said("my landlord never answers about the heating", 3)
    found = recall.respond(read(question), [school, teacher, landlord], encoder, now)
    assert found is not None and found.quoted == () and found.text == recall.not_told(question)


def test_a_count_asked_that_only_a_date_beside_it_holds_is_not_known():
    now, encoder = datetime(2026, 11, 20, tzinfo=UTC), recall.get_embedder()
    said = [_said("My sister Ana's wedding is on 3 May in Porto.", 1)]
    found = recall.respond(read("How many kids does my sister Ana have?"), said, encoder, now)
    assert (
        found is not None
        and found.quoted == ()
        and found.text == recall.not_told("How many kids does my sister Ana have?")
    )
    told = _said("Ana has 3 kids now, all boys.", 2)
    found = recall.respond(read("How many kids does my sister Ana have?"), [*said, told], encoder, now)
    assert found is not None and found.quoted == (told,)


def test_a_sum_of_numbers_the_message_gives_is_the_models_to_work_out_though_it_names_someone_they_told_about():
    said = [_said("HELLO. MY GRANDSON CALLUM SET THIS UP FOR ME. I AM ARTHUR, 88, FROM GORE.", 1)]
    message = "MY GRANDSON CALLUM IS COMING ON THE 5TH TO FIX THE FENCE. HOW MANY POSTS FOR 40 METRES AT 2.5 M SPACING."
    assert recall.names_someone_known(message, said)
    assert recall.respond(read(message), said, recall.get_embedder(), datetime(2026, 11, 20, tzinfo=UTC)) is None


def test_a_message_nearly_as_good_from_another_turn_is_quoted_beside_the_best_one():
    best, close, far = _said("My GP is lovely.", 1), _said("Dr Okafor retires in May.", 3), _said("I like tea.", 5)
    assert recall.beside([best, close, far], [0.70, 0.67, 0.40], best) == close
    assert recall.beside([best, close, far], [0.70, 0.60, 0.40], best) is None  # not nearly as good
    again = Statement(text="She is lovely.", said_at=best.said_at, page_id=best.page_id, seq=best.seq)
    assert recall.beside([best, again], [0.70, 0.69], best) is None  # the same message


def test_a_short_message_is_quoted_whole_a_long_one_by_its_sentence():
    short = Statement("Need a dinner idea for Mattias.", datetime(2026, 11, 1, tzinfo=UTC), 1, 1,
                      message="Need a dinner idea for Mattias. He doesn't eat fish.")  # fmt: skip
    assert short.quote == "Need a dinner idea for Mattias. He doesn't eat fish."
    long = Statement("I have a cat.", short.said_at, 2, 2, message="I have a cat. " + "Blah blah. " * 30)
    assert long.quote == "I have a cat."


def test_a_question_naming_someone_the_person_told_about_is_about_what_they_said():
    told = [_said("My brother Rafael plays bass in a trio.", 1), _said("Trip to Monday market.", 2)]
    assert recall.names_someone_known("rafael instrument?", told)
    assert not recall.names_someone_known("any good market tips for monday?", told)  # days are no one
    assert not recall.names_someone_known("what's the capital of Peru?", told)
    # named as whose: "Rafael's wife" names Rafael, as "Rafael's" said names him
    assert recall.names_someone_known("What is Rafael\u2019s wife's name?", told)
    assert recall.names_someone_known("who's in the trio?", [_said("We saw Rafael's trio on Friday.", 1)]) is False
    assert recall.names_someone_known("rafael instrument?", [_said("We saw Rafael's trio on Friday.", 1)])


def test_the_reply_quotes_and_dates_as_a_person_would():
    now = datetime(2026, 11, 25, 15, tzinfo=UTC)  # a Wednesday
    assert recall.when_said(now - timedelta(hours=2), now) == "earlier today"
    assert recall.when_said(now - timedelta(days=1), now) == "yesterday"
    assert recall.when_said(now - timedelta(days=2), now) == "on Monday"
    assert recall.when_said(datetime(2026, 3, 3, tzinfo=UTC), now) == "on 3 March"
    assert recall.when_said(datetime(2025, 3, 3, tzinfo=UTC), now) == "on 3 March 2025"
    quoted = (_said("I have a cat called Pepper.", 1, days=2),)
    reply = recall.quote_reply(quoted, datetime(2026, 11, 20, tzinfo=UTC))
    assert reply == "You told me on Wednesday: \u201cI have a cat called Pepper.\u201d"
    assert recall.quote_reply((), now) == recall.NOT_TOLD
    assert recall.quote_reply(quoted, now, sure=False).startswith("I'm not sure that's it, but you told me")


@pytest.fixture
def weak_memory(memory, settings):
    """alice's memory answered by the bundled model's class. A quoted answer never loads the model."""
    return MemoryOS(llm=weak_offline_llm(settings))


TOLD = [
    ("Hi! I'm Maria Lindqvist.", "Hello Maria!"),
    ("ugh long day, and Pepper (my cat) knocked my coffee all over the counter lol", "Oh no!"),
    ("I live in Porto, in Portugal.", "Lovely city."),
    ("Can you recommend a good book?", "Try a mystery novel."),
    ("I'm flying to Tokyo on the 14th of March.", "Exciting!"),
    ("The weather has been lovely.", "Glad to hear it."),
    ("I work as a nurse at the children's hospital.", "That's important work."),
]


def _tell(memory, turns, start):
    for number, (said, replied) in enumerate(turns):
        memory.add_memory(
            user_id="alice",
            assistant_id="helper",
            user_input=said,
            agent_response=replied,
            timestamp=start + timedelta(minutes=2 * number),
        )


def test_a_question_about_the_person_is_answered_with_their_words_and_stored_as_a_quote(weak_memory, alice_space):
    _tell(weak_memory, TOLD, days_ago(3))
    response = weak_memory.get_response(user_id="alice", assistant_id="helper", query="What's my cat called again?")

    assert "Pepper" in response.text and response.text.startswith("You told me on ")
    assert response.source == Page.ReplySource.QUOTED and response.prompt_tokens == response.completion_tokens == 0
    assert [s.text for s in response.quoted] == [TOLD[1][0]]
    page = Page.objects.get(pk=response.page.pk)
    assert page.reply_source == Page.ReplySource.QUOTED and page.agent_response == response.text
    assert "Pepper" not in page.memory_reply  # the quote is not memory a second time
    assert not offline_model_loaded()  # the model was never loaded


@pytest.mark.parametrize(
    ("question", "answer"),
    [
        ("Where do I live?", "Porto"),
        ("When is my flight to Japan?", "14th of March"),
        ("What do I do for a living?", "nurse"),
        ("Do you remember my name?", "Maria Lindqvist"),
    ],
)
def test_paraphrased_questions_find_the_statement_that_answers_them(weak_memory, alice_space, question, answer):
    _tell(weak_memory, TOLD, days_ago(3))
    assert answer in weak_memory.get_response(user_id="alice", assistant_id="helper", query=question).text


def test_a_terse_question_naming_someone_told_about_is_answered_from_memory(weak_memory, alice_space):
    _tell(weak_memory, [*TOLD, ("My brother Rafael plays bass in a jazz trio.", "Nice!")], days_ago(3))
    response = weak_memory.get_response(user_id="alice", assistant_id="helper", query="rafael instrument?")
    assert "bass" in response.text and response.source == Page.ReplySource.QUOTED
    assert not offline_model_loaded()


@pytest.mark.parametrize(
    "message",
    [
        "Rafael's trio has a gig on Friday, any tips for his stage nerves?",
        "should I get Rafael a new bass amp or a lesson voucher?",
        "Rafael is coming for the weekend, what do we really need for a jazz night?",
        "Rafael plays in a trio now, would a metronome be a good present for him?",
        "What should I wear to Rafael's jazz gig?",
    ],
)
def test_advice_asked_about_someone_they_told_about_is_the_models_to_give(weak_memory, alice_space, message):
    """Naming Rafael makes a question about what they said ("rafael instrument?"); asking advice about him
    does not: a quote of "my brother plays bass" is no answer to it."""
    _tell(weak_memory, [*TOLD, ("My brother Rafael plays bass in a jazz trio.", "Nice!")], days_ago(3))
    assert recall.answer(alice_space, message) is None
    assert "bass" in recall.answer(alice_space, "rafael instrument?").text


def test_advice_the_rules_take_for_a_question_about_them_is_read_as_small_talk_by_the_learnt_reader(
    weak_memory, alice_space
):
    """'Rafael my brother plays bass, what helps with sore fingers ...' says 'my' and names Rafael: the rules read
    a question about the person, and a quote of 'Rafael plays bass' would answer small talk. The learnt reader
    (engine/asking.py, on the bundled embedder's vector) reads it as small talk; a question about Rafael is still
    answered."""
    _tell(weak_memory, [*TOLD, ("My brother Rafael plays bass in a jazz trio.", "Nice!")], days_ago(3))
    advice = "Rafael my brother plays bass, what helps with sore fingers the most? he has tried everything"
    assert read(advice).kind is not None and not read(advice).asks_a_value  # the rules alone would quote
    assert recall.answer(alice_space, advice) is None
    assert "bass" in recall.answer(alice_space, "rafael instrument?").text


def test_a_quoted_message_shows_what_it_told_not_what_it_asked(weak_memory, alice_space):
    said = "my bff Tash is turning 18 on the 2nd, what do i get her, she's obsessed w taylor swift and matcha"
    _tell(weak_memory, [*TOLD, (said, "Fun!")], days_ago(3))
    text = weak_memory.get_response(user_id="alice", assistant_id="helper", query="remind me what Tash is into?").text
    assert "taylor swift" in text and "what do i get her" not in text


def test_a_quoted_message_leaves_out_a_request_to_the_memory_and_what_it_named(weak_memory, alice_space):
    said = "Our daughter Ines lives in Leeds now. Please forget my old address. My old address was 4 Rua Alegre."
    _tell(weak_memory, [*TOLD, (said, "Noted.")], days_ago(3))
    text = weak_memory.get_response(user_id="alice", assistant_id="helper", query="Where does our daughter live?").text
    assert "Leeds" in text and "forget" not in text and "Rua Alegre" not in text
    # A request that points back at what it names is one with it: "WIPE IT" is no statement to quote.
    said = "My locker code is 5521. PLEASE WIPE IT FROM YOUR MEMORY. My gym is FitZone on Leith Walk."
    _tell(weak_memory, [(said, "Noted.")], days_ago(1))
    text = weak_memory.get_response(user_id="alice", assistant_id="helper", query="Which gym do I go to?").text
    assert "FitZone" in text and "WIPE" not in text and "5521" not in text


def test_a_message_that_asks_to_forget_what_the_memory_cannot_name_is_never_quoted(weak_memory, alice_space):
    # "IBAN'ı kaydetme, unut gitsin" asks not to keep it, naming it in words no rule reads as the person's: the
    # IBAN was quoted back when asked for. Now nothing of the message is quoted, whatever it meant.
    said = "IBAN'ım TR33 0006 1005 1978 6457 8413 26, invoice'a ekle. Aslında yok, IBAN'ı kaydetme, unut gitsin lütfen"
    _tell(weak_memory, [*TOLD, (said, "Tamam.")], days_ago(1))
    text = weak_memory.get_response(user_id="alice", assistant_id="helper", query="IBAN'ım neydi?").text
    assert "TR33" not in text, text
    # "Actually, don't save that one": the same in English; what the message told beside it is not lost to an
    # ordinary statement elsewhere
    said = "For the medical form: Kamsi uses a Ventolin inhaler. Actually abeg, don't save that one, I'll fill it in."
    _tell(weak_memory, [(said, "Okay.")], days_ago(1))
    text = weak_memory.get_response(user_id="alice", assistant_id="helper", query="What inhaler does Kamsi use?").text
    assert "Ventolin" not in text, text


def test_a_sentence_asking_to_forget_is_never_quoted_though_the_request_names_what_it_means(weak_memory, alice_space):
    # "proszę zapomnieć numer PESEL mojej siostry": read as a request to forget, it was quoted back to a question
    # about the sister as what the person had told; what the other messages told still answers
    told = [
        ("Moja siostra Agnieszka to współwłaścicielka, jej PESEL to 85031204567.", "Dobrze."),
        ("Agnieszka mieszka w Krakowie.", "Rozumiem."),
        ("A, i proszę zapomnieć numer PESEL mojej siostry, nie powinienem był go wpisywać.", "Zapomniane."),
    ]
    _tell(weak_memory, told, days_ago(1))
    text = weak_memory.get_response(user_id="alice", assistant_id="helper", query="Jaki jest PESEL Agnieszki?").text
    assert "zapomnieć" not in text and "85031204567" not in text, text


@pytest.mark.parametrize(
    ("sentence", "asks"),
    [
        # however the sentence opens, in whatever language: a verb of forgetting or of not keeping said to no one else
        ("Och glöm det jag sa om Vilgots diagnos, det vill jag inte att du sparar.", True),
        ("Ach und vergiss bitte, was ich über Janas Kündigung gesagt hab.", True),
        ("Eh actually don't store my father's NRIC I sent you ok, don't want trouble.", True),
        ("Abeg forget that BVN wey I type for you last time, my wife talk say make I no dey share am.", True),
        ("Na tafadhali sahau namba ya M-Pesa niliyokupa", True),
        ("A, i proszę zapomnieć numer PESEL mojej siostry, nie powinienem był go wpisywać.", True),
        # forgetting told of someone, a reminder, a word that holds the verb, a verb of deleting alone
        ("I always forget my PIN, it is 4432", False),
        ("My mum forgets everything these days", False),
        ("don't forget to buy milk", False),
        ("It was an unforgettable trip to Rome", False),
        ("Please remove the sultanas; Eleanor cannot abide them.", False),
        ("zapomniałam kluczy, wróciłam po nie", False),
    ],
)
def test_a_sentence_that_asks_to_forget_anywhere_in_it_is_told_from_one_about_forgetting(sentence, asks):
    assert memory_requests.mentions_forgetting(sentence) is asks


def test_what_a_later_message_asks_to_forget_in_words_no_rule_reads_is_not_quoted():
    told = [
        _said("Elsa har utvecklingssamtal den 14 november. Och Vilgot fick diagnosen ADHD förra månaden.", 1, days=9),
        _said("Vilgot spelar fotboll på tisdagar.", 2, days=8),
        _said("My father staying with us now, his NRIC S3318402F, MediSave used at Tan Tock Seng.", 3, days=7),
        _said("Elsa älskar att rita hästar.", 4, days=6),
        _said("Our flat is in Bishan, block 512.", 5, days=5),
        _said("Got a new job at the port, starting Monday.", 6, days=4),
        _said("Vilgot fick diagnosen astma i går.", 9, days=1),  # told after the request: kept
    ]
    forgetting = [
        (7, "Och glöm det jag sa om Vilgots diagnos"),
        (8, "Eh actually don't store my father's NRIC I sent you ok"),
    ]
    kept = recall.not_asked_to_forget(told, forgetting)
    assert [s.seq for s in kept] == [2, 4, 5, 6, 9]


def test_a_request_to_remove_something_written_is_no_request_to_forget():
    # a verb of deleting edits a list or a recipe as often as the memory: the message stays an answer
    assert not memory_requests.asks_to_forget("Please remove the sultanas; Eleanor cannot abide them.")
    assert not memory_requests.asks_to_forget("My wife Layla will make the mansaf, so remove it from your list")
    assert not memory_requests.asks_to_forget("I always forget my PIN, it is 4432")
    assert memory_requests.asks_to_forget("Słuchaj, to o pożyczce od teściowej — zapomnij o tym, proszę.")


def test_a_fact_that_changed_is_quoted_with_the_change(weak_memory, alice_space):
    _tell(weak_memory, TOLD, days_ago(20))
    _tell(weak_memory, [("Big news: we moved to Lisbon last week!", "Congratulations!")], days_ago(2))
    text = weak_memory.get_response(user_id="alice", assistant_id="helper", query="Which city do I live in now?").text
    # The latest first, said to be the latest; the earlier after it.
    assert text.startswith("The latest you told me") and text.index("Lisbon") < text.index("Porto")
    # each quote ends its sentence once: "... last week!” Before that", not "!”. Before that"
    assert "”. Before that" not in text and "week!” Before that, " in text


def test_what_was_never_told_is_said_to_be_unknown_not_guessed(weak_memory, alice_space):
    _tell(weak_memory, TOLD[:2], days_ago(1))
    text = weak_memory.get_response(user_id="alice", assistant_id="helper", query="What's my blood type?").text
    assert text == "You haven't told me your blood type yet."  # in their terms, not a guess


def test_a_value_asked_by_its_words_that_nothing_gives_is_unknown_whatever_else_the_message_says():
    # The message tells something too ("I got him ..."), which alone would leave it to the model; and the only
    # statement about Sunny gives no age ("two days" is no age).
    question = "And how old is Sunny again? I got him from the pet shop so long ago"
    said = [_said("My parakeet Sunny has been very quiet the last two days.", 1)]
    found = recall.respond(read(question), said, recall.get_embedder(), datetime(2026, 11, 20, tzinfo=UTC))
    assert found is not None and found.quoted == ()
    assert found.text == "You haven't told me how old Sunny is yet."


def test_a_name_asked_of_someone_named_as_whose_and_never_told_is_not_known():
    # "Khaled's wife" names Khaled, whom the person told about; a name nobody gave is not known, not the model's
    said = [_said("My brother Khaled is coming from Amman with his family. Can you suggest a menu?", 1)]
    question = "What is Khaled's wife's name? I want to send her a thank you message for the sweets."
    found = recall.respond(read(question), said, recall.get_embedder(), datetime(2026, 11, 20, tzinfo=UTC))
    assert found is not None and found.quoted == ()
    assert found.text == "You haven't told me Khaled's wife's name yet."


def test_a_question_in_another_language_is_answered_by_a_statement_sharing_a_rare_word_of_it():
    # The rules read no question in Spanish; the memory's own match does, by a word of the question that few
    # statements have ("perra"), not by words most of them have ("que", "mi"), where the embedder's likeness
    # of Spanish sentences is no guide.
    said = [
        _said("Por cierto, mi perra Canela está mal del estómago, qué le doy de comer?", 1, days=9),
        _said("Y quita el pepino, que a mi novio no le gusta.", 2, days=6),
        _said("Mi madre dice que el gazpacho de Sevilla es mejor.", 3, days=5),
        _said("Trabajo en el hospital La Paz, en urgencias.", 4, days=4),
        _said("Y un mensajito para mi tía, que me preguntó con quién voy a la boda.", 5, days=2),
    ]
    now = datetime(2026, 11, 20, tzinfo=UTC)
    encoder = recall.get_embedder()
    dog = recall.respond(read("¿Cómo se llama mi perra? Quiero ver si te acuerdas."), said, encoder, now)
    assert dog is not None and "Canela" in dog.text
    advice = "¿Cuánto tiempo antes puedo montar el fondant sin que sude?"
    assert recall.shares_a_rare_word(advice, said) == [False] * 5
    assert recall.respond(read(advice), said, encoder, now) is None
    # Among a person's English, "que" and "mi" are rare, but short: one of them alone is no match.
    mostly_english = [
        _said("Y quita el pepino, que a mi novio no le gusta.", 1, days=6),
        *(_said(text, seq, days=5) for seq, text in enumerate(_ENGLISH, start=2)),
    ]
    assert recall.shares_a_rare_word("¿Qué medicamento te dije que tomaba?", mostly_english) == [False] * 5
    assert recall.shares_a_rare_word("¿Qué le pongo al pepino?", mostly_english) == [True, *[False] * 4]


_ENGLISH = (
    "I work at the hospital in Leeds on nights.",
    "My sister Ines moved to Lisbon last spring.",
    "We booked the cottage in Whitby for June.",
    "The boiler makes a knocking noise again.",
)


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        ("What's my blood type?", "You haven't told me your blood type yet."),
        ("how old did I say I was?", "You haven't told me how old you are yet."),
        ("how old is my horse, do you know?", "You haven't told me how old your horse is yet."),
        ("What is the name of my dentist again? I must call", "You haven't told me your dentist's name yet."),
        ("what did I say my dog is called?", "You haven't told me your dog's name yet."),
        ("what's my employee ID, I told you na? HR form is asking", "You haven't told me your employee ID yet."),
        ("what's Keisha's science teacher's name", "You haven't told me Keisha's science teacher's name yet."),
        ("How old is Tarçın, did I tell you?", "You haven't told me how old Tarçın is yet."),
        ("client's name again?", "You haven't told me the client's name yet."),
        ("dulhe ka naam kya hai, card pe likhna hai", "You haven't told me the name of \u201cdulhe\u201d yet."),
        ("¿Cuántos años tiene Nico? Lo piden para la tarifa infantil.", "You haven't told me how old Nico is yet."),
        ("Where do I live?", recall.NOT_TOLD),  # nothing of theirs named: said plainly
        ("What did my eye specialist diagnose, do you recall?", recall.NOT_TOLD),  # not "your eye specialist diagnose"
        ("Side note, my truck, a rusty old Silverado, is making a noise, is that a worry?", recall.NOT_TOLD),
    ],
)
def test_not_told_is_said_in_the_persons_terms(question, reply):
    assert recall.not_told(question) == reply


def test_a_capable_model_is_asked_as_before(memory, alice_space, fake_llm):
    fake_llm.responder = nothing_extracted
    _tell(memory, TOLD, days_ago(3))
    fake_llm.script(reply("Your cat is Pepper."))
    response = memory.get_response(user_id="alice", assistant_id="helper", query="What's my cat called?")
    assert response.text == "Your cat is Pepper." and response.source == Page.ReplySource.MODEL
    assert fake_llm.requests  # the model was asked


def test_the_rest_door_says_what_the_reply_quotes_and_the_inspector_shows_it_beforehand(weak_memory, alice_space):
    _tell(weak_memory, TOLD, days_ago(3))
    alice = client_for("alice")
    seen = alice.post(SPACE.format(user="alice") + "inspect/", {"query": "What's my cat called?"}, format="json")
    assert seen.status_code == 200, seen.data
    assert "Pepper" in seen.data["answer_from_memory"]["text"] and seen.data["compact"] is True
    assert seen.data["answer_from_memory"]["read_as"] == "asks about themselves"  # the rule of language/intent.py

    answered = alice.post(SPACE.format(user="alice") + "chat/", {"query": "What's my cat called?"}, format="json")
    assert answered.status_code == 200, answered.data
    assert answered.data["response"] == seen.data["answer_from_memory"]["text"]
    assert [q["text"] for q in answered.data["quoted"]] == [TOLD[1][0]]
    assert answered.data["page"]["reply_source"] == "quoted"
    assert not offline_model_loaded()  # neither the inspector nor the reply loaded the model


SECTIONS = ("short_term", "pages", "profile", "user_knowledge", "assistant_knowledge")


def _items(retrieval: dict) -> list[tuple[str, int]]:
    return [(item["kind"], item["id"]) for name in SECTIONS for item in retrieval[name]]


def test_a_quoted_reply_warms_every_session_its_retrieval_found_as_any_reply_does(weak_memory, alice_space):
    # Heat counts a session's visits by retrieval (the paper's N_visit): a quoted reply records only the turns
    # it quotes, but every session whose pages the retrieval matched was visited, as for any other reply.
    # Told on three days, so in sessions of their own; the last day's turns move the first out of short-term.
    _tell(weak_memory, TOLD[:4], days_ago(4))
    _tell(weak_memory, TOLD[4:], days_ago(3))
    _tell(
        weak_memory,
        [(f"My bus was late again, {n} minutes this time.", "Sorry to hear.") for n in range(8)],
        days_ago(2),
    )
    question = "What's my cat called?"
    found = retrieve(alice_space, question, count_hits=False)
    matched = {item.provenance["session_id"] for item in found.matched_pages} - {None}  # None: short-term
    visits = dict(MidTermSession.objects.filter(space=alice_space).values_list("pk", "total_visits"))
    response = weak_memory.get_response(user_id="alice", assistant_id="helper", query=question)
    assert response.source == Page.ReplySource.QUOTED
    quoted = {item.provenance["session_id"] for item in response.retrieval.pages}
    after = dict(MidTermSession.objects.filter(space=alice_space).values_list("pk", "total_visits"))
    warmed = {pk for pk, count in after.items() if count > visits.get(pk, 0)}
    assert matched and warmed == matched
    assert quoted < matched  # the control: the reply used less than its retrieval found


def test_a_quoted_reply_uses_and_records_the_turns_it_quotes_not_the_prompt_it_never_sent(weak_memory, alice_space):
    _tell(weak_memory, TOLD, days_ago(3))
    alice = client_for("alice")
    prompt = alice.post(SPACE.format(user="alice") + "inspect/", {"query": "What's my cat called?"}, format="json")
    answered = alice.post(SPACE.format(user="alice") + "chat/", {"query": "What's my cat called?"}, format="json")
    assert answered.status_code == 200, answered.data
    quoted = {said["page_id"] for said in answered.data["quoted"]}
    used = _items(answered.data["retrieval"])
    assert used and {pk for _, pk in used} == quoted  # the turn it quotes, nothing it did not
    assert len(_items(prompt.data["retrieval"])) > len(used)  # the prompt it never sent held more
    turn = answered.data["page"]["id"]
    recorded = alice.get(SPACE.format(user="alice") + f"turns/{turn}/used/").data
    assert _items(recorded) == used  # the record says the same after a reload

    unknown = alice.post(SPACE.format(user="alice") + "chat/", {"query": "What's my blood type?"}, format="json")
    assert unknown.data["response"] == "You haven't told me your blood type yet."
    assert _items(unknown.data["retrieval"]) == []  # it quotes nothing, so it used nothing


THINNER = [
    _said("My GP switched my blood pressure pills last week.", 1),
    _said("I take warfarin every morning.", 2),
    _said("We walked along the river on Sunday.", 3),
]


def test_the_reranker_lifts_the_sentence_it_reads_as_the_answer_among_the_best():
    scores = [0.60, 0.45, 0.20]
    likely = ScriptedReranker({THINNER[1].text: 0.95, THINNER[0].text: 0.05})
    weights = recall.Weights(rerank_top=2, rerank_weight=0.4)

    adjusted, marked = recall.reranked(
        read("what is that blood thinner I'm on called?"), THINNER, scores, likely, weights
    )

    assert adjusted[1] > adjusted[0] and [s.likelihood for s in marked] == [0.05, 0.95, None]
    assert adjusted[1] == pytest.approx(0.45 + 0.4 * 0.45) and adjusted[0] == pytest.approx(0.60 - 0.4 * 0.45)
    assert likely.read == [THINNER[0].text, THINNER[1].text]  # only the best two were read
    assert adjusted[2] == pytest.approx(0.20 - 0.4 * 0.5)  # not read: as if it answered nothing


def test_a_chat_reply_quotes_what_the_reranker_reads_as_the_answer(settings):
    question = read("what is that blood thinner I'm on called?")
    encoder, now = recall.get_embedder(), datetime(2026, 11, 20, tzinfo=UTC)
    likely = ScriptedReranker({THINNER[1].text: 0.95})

    reply = recall.respond(question, THINNER, encoder, now, recall.Weights(rerank_weight=1.0), reranker=likely)

    assert reply is not None and [(s.text, s.likelihood) for s in reply.quoted] == [(THINNER[1].text, 0.95)]
    assert AnswerDoc.of(reply).payload()["quoted"][0]["reranker"] == 0.95  # what the inspector shows


def test_a_question_by_its_form_that_nothing_answers_by_the_reranker_is_left_to_the_model():
    encoder, now = recall.get_embedder(), datetime(2026, 11, 20, tzinfo=UTC)
    nothing = ScriptedReranker({})
    weights = recall.Weights(rerank_gate=0.05)
    by_form = read("what do you know about my mornings?")
    assert by_form.kind is not None and not by_form.asks_a_value

    assert recall.respond(by_form, THINNER, encoder, now, weights, reranker=nothing) is None
    asked = read("what did I tell you my blood type was?")  # asked for by its words: not overruled
    assert asked.asks_a_value
    assert recall.respond(asked, THINNER, encoder, now, weights, reranker=nothing) is not None
