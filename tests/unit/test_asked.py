"""What a question asks of its subject, and whether a statement gives it (language/asked.py): a guess shares
the subject (the dentist, the car) but not what is asked of it (a name, a plate)."""

import pytest

from memory_engine.engine import recall
from memory_engine.engine.grounding import changes, sets_aside, tells_a_change
from memory_engine.engine.long_term import statements
from memory_engine.language.asked import AGE, DOSE, IDENTIFIER, NAME, WHEN, Asked, asked_of, holds


@pytest.mark.parametrize(
    ("question", "asked"),
    [
        ("What is the name of my dentist again?", Asked(NAME, "", "dentist")),
        ("And what is the licence plate of my car?", Asked(IDENTIFIER, "licence plate", "car")),
        ("who's my team lead again, need to cc them", Asked(NAME, "", "team lead")),
        ("whats my shoe size? ordering shoes", Asked(IDENTIFIER, "shoe size", "")),
        ("what's Keisha's science teacher's name", Asked(NAME, "", "keisha's science teacher")),
        ("whats the rego on my ute, did i give it to ya?", Asked(IDENTIFIER, "rego", "ute")),
        ("When is my wife's birthday, did I mention it?", Asked(WHEN, "birthday", "wife")),
        ("How old is Tarçın, did I tell you?", Asked(AGE, "", "tarçın")),
        ("What name did I give you for my mother?", Asked(NAME, "", "mother")),
        ("client's name again?", Asked(NAME, "", "client")),
        ("how old is my middle lad again, it's for the form", Asked(AGE, "lad", "")),
        ("how old did I tell you I was?", Asked(AGE, "", "")),  # their own age
        ("how old are you?", None),  # the assistant's
        ("how old is the universe?", None),
        # A thing of theirs asked in a few words, and an identifier asked by its letters.
        ("- my gym membership number? renewal form", Asked(IDENTIFIER, "gym membership number", "")),
        ("- Ingrid's direct line? want to call not email", Asked(IDENTIFIER, "direct line", "ingrid")),
        ("What's my RFC? I need it for the invoice", Asked(IDENTIFIER, "rfc", "")),
        ("what's my GP?", None),  # someone, not an identifier
        ("my dog?", None),
        ("and my BF name? writing a card", None),  # a name asked in a few words: the words for them decide
        # Asked of a kind of thing, or of someone told by what they did: left to recall's scores.
        ("What car do I drive?", None),
        ("Which city do I live in?", None),
        ("who's the friend that's done loads of marathons?", None),
        ("And what is the surname of the gentleman who is looking after my eyes?", None),
        # A surname: told after the name ("my flatmate Vale Moreno"), not by any name near hers.
        ("vale's last name? booking a table under her name", Asked(NAME, "surname", "vale")),
        # An age asked in other languages; not the assistant's.
        ("cuántos años tiene Chispa? the form is asking", Asked(AGE, "", "chispa")),
        ("Quantos anos a Neusa tem?", Asked(AGE, "", "neusa")),
        ("wie alt ist Tim?", Asked(AGE, "", "tim")),
        ("¿cuántos años tienes?", None),
        ("wie alt bist du?", None),
        # Someone's thing with a title or a name of two words; a thing of theirs asked with "am I".
        ("What is Mr. Fennimore's direct line?", Asked(IDENTIFIER, "direct line", "fennimore")),
        ("What is Halvorsen Maritime's VAT number?", Asked(IDENTIFIER, "vat number", "halvorsen maritime")),
        ("What's Prof. Marwyck's email address? I need to let her know", Asked(IDENTIFIER, "email address", "marwyck")),
        ("what shoe size am i? buying new runners", Asked(IDENTIFIER, "shoe size", "")),
        ("what time do i have to leave?", None),
        # A name asked in other languages, of the one named after the words that ask (or before, in Hindi-English).
        ("cómo se llama la vet otra vez?", Asked(NAME, "", "vet")),
        ("c'est quoi le nom de mon proprio déjà?", Asked(NAME, "", "proprio")),
        ("Qual é o nome da escolinha do Bento mesmo?", Asked(NAME, "", "bento's escolinha")),
        ("wie heißt der Zahnarzt?", Asked(NAME, "", "zahnarzt")),
        ("dulhe ka naam kya hai, card pe likhna hai", Asked(NAME, "", "dulhe")),
        ("mera naam kya hai", None),  # their own: recall's scores
        ("cómo se llama?", None),
        # of someone's; a thing of theirs; filler words; and not the assistant, a thing pointed at or the world
        ("cómo se llama el marido de mi hermana?", Asked(NAME, "", "hermana's marido")),
        ("wie heißt eigentlich mein Zahnarzt?", Asked(NAME, "", "zahnarzt")),
        ("cómo se llamaba otra vez mi dentista?", Asked(NAME, "", "dentista")),
        ("cuántos años tiene mi hija?", Asked(AGE, "hija", "")),
        ("wie heißt das auf Englisch?", None),
        ("¿cómo se llama la capital de Australia?", None),
        ("hoe heet je?", None),
        ("c'est quoi le nom de ce film ?", None),
        ("hace cuántos años nos casamos?", None),  # how many years ago
        ("how old a kid needs to be to fly alone?", None),
        ("what's the doctor's name?", None),  # "the the doctor's name" said back
        ("what is the company's VAT number?", None),
        ("what cell phone do i have?", None),  # a phone, not its number
    ],
)
def test_what_a_question_asks_of_its_subject(question, asked):
    assert asked_of(question) == asked


@pytest.mark.parametrize(
    ("question", "statement"),
    [
        ("What is the name of my dentist again?", "I have a rendez-vous at the dentist on Thursday at 14h."),
        ("And what is the licence plate of my car?", "My car, a grey Peugeot 308, shows an orange light."),
        ("what's my truck number again", "I drive a Freightliner out of Memphis, what stretches at a truck stop"),
        ("What's my son-in-law's name dear?", "Hello dear my grandson Liam is turning 8 next month"),
        ("Kindly remind me the name of Yasmin's fiancé.", "My daughter Yasmin will have her engagement party."),
        ("What is the name of my son's wife?", "My son Daiki works in Montréal. My husband and I will visit him."),
        ("what's my mom's birthday?", "husband Luc turns 55 in February"),
        ("What name did I give you for my mother?", "My mother lives in Onitsha."),
        # a relative's name is told beside the word for them, not anywhere in the sentence
        ("What name did I give you for my mother?", "My mother lives in Onitsha and she wants to learn WhatsApp."),
        ("What's Mum's name again?", "I need to plan Mum's 70th. It's on the 9th of August at the Red Lion."),
        ("What's my RFC?", "I need to order the candles"),
        ("What is the name of my pharmacy?", "My pharmacy in Surulere is having problem with stock records."),
        ("what is my blood type?", "I must write it in the travel insurance form."),
        ("And please remind me how old Momo is.", "Our shiba Momo will stay with my sister in Kobe."),
        ("And how old is Sunny again?", "My parakeet Sunny has been very quiet the last two days."),  # no age
        ("What is my flight number?", "My flight is on 7 May, arrive in the evening."),  # a date is no number of it
        ("what's my truck number again", "my truck is in the shop till 10:30 on the 3rd, a 2-day job"),
        ("What's Prof. Marwyck's email address?", "Oops, her name is spelled Marwyck, with a y."),
        ("What is Mr. Fennimore's direct line?", "Mr Fennimore wants the report by 09/11/2026."),
        (
            "What is Halvorsen Maritime's VAT number?",
            "a reminder for invoice INV-0317 to Halvorsen Maritime, EUR 2,340",
        ),
        ("cuántos años tiene Chispa?", "mi perrita Chispa tiene cita con la vet el viernes"),
        ("dulhe ka naam kya hai", "yaar meri cousin Anjali ki shaadi hai 22 Feb ko Jaipur mein"),
        ("c'est quoi le nom de mon proprio déjà?", "le chauffage est brisé depuis lundi, Rue Sainte-Ursule"),
        ("cómo se llama mi hermano?", "Mi hermana Lucía vive en Lyon."),  # begun alike, another of the family
        ("cómo se llama el marido de mi hermana?", "Mi marido Jorge es de Sevilla."),  # my husband, not hers
        ("what's my dog's name?", "Baked two pies for Helen's party."),  # "pies" is a dog in Polish, not here
        ("what's my email password?", "My email is k.jones@gmail.com"),
        ("what's my mom's phone number?", "Mom's surgery is on 2026-12-14"),  # a date is no phone number
    ],
)
def test_a_statement_about_the_subject_that_does_not_give_what_is_asked_is_not_an_answer(question, statement):
    assert asked_of(question).gives(statement, question) is False


@pytest.mark.parametrize(
    ("question", "statement"),
    [
        ("What's my dog called?", "I have a greyhound named Comet."),
        ("What's my grandpa's name?", "My grandfather Kimo taught me to carve wood."),
        ("what's my boss's name again", "I'll raise it with my manager, Mrs. Bello."),
        ("wait whats my roommate's name", "also my roomate kabir snores like a tractor"),
        ("who's my sous chef now?", "We hired the new sous chef!! Her name is Fernanda Ocampo."),
        ("What is the name of the town where halmeoni is living?", "She still lives in Seogwipo."),
        ("what's my student number?", "my student ID is 33817462"),
        ("when's my girlfriend's bday again?", "note to self: Noor's birthday is march 3rd"),
        ("What's my other half's name?", "my partner Thabo and I rent a tiny place"),
        ("how old is my son?", "My son Leo is 7 and loves dinosaurs."),
        ("how old did I say I was?", "I'm 31 and I already feel late"),
        ("How old is Tarçın?", "Tarçın turns 3 in May, a 3-year-old tabby."),
        ("how old is my horse?", "still keep a mare, Sable, at a stable in Noordhoek, she's 19 now"),  # told otherwise
        ("How old was my previous car?", "My old red Saab refused to start. It's 24 years old."),
        ("What is my flight number?", "my flight is BA 287 on March 3rd"),
        ("whats my PIN number", "the PIN is 2015 so I remember the year we met"),
        ("What name did I give you for my mother?", "Ngozi, my mum, lives in Onitsha."),
        ("What name did I give you for my mother?", "My mother Ngozi lives in Onitsha."),
        ("What was my father's name again?", "Please add our late father. His name was Chukwuma."),
        ("what was my old boat called", "i had a boat for 40 years the Mary Ellen we fished cod"),  # not a relative
        ("What's my RFC?", "my RFC is GOMA800101XX1"),
        # an email address and a phone number told without their words
        ("What's Prof. Marwyck's email address?", "You can reach Prof. Marwyck at h.marwyck@uni.ac.uk"),
        ("What is Mr. Fennimore's direct line?", "you can call Mr Fennimore on 020 7946 0321 before noon"),
        ("cuántos años tiene Chispa?", "Chispa cumple 5 en junio"),
        ("Quantos anos a Neusa tem?", "a Neusa tem 52 anos"),
        ("wie alt ist Tim?", "Tim wird 7 Jahre alt"),
        ("cómo se llama la vet otra vez?", "la vet de Chispa es la Dra. Morales, en Bayou Paws"),
        ("c'est quoi le nom de mon proprio déjà?", "mon propriétaire, M. Beaudoin, ne répond pas"),
        ("c'est quoi le nom de mon proprio déjà?", "an email to my landlord, M. Beaudoin-Rivard? le chauffage"),
        ("ile lat kończy babcia? robię tort", "babcia kończy 80 lat w sobotę"),
        ("wie alt ist mein Sohn?", "Mein Sohn Lukas ist neun Jahre alt."),  # a number in words of theirs
        ("cuántos años tiene mi hija?", "My daughter Sofia just turned 7."),
        ("cómo se llama nuestro perro?", "Our dog is called Toby."),
    ],
)
def test_a_statement_that_gives_what_is_asked_answers_in_the_persons_words(question, statement):
    assert asked_of(question).gives(statement, question) is True


def test_a_change_of_a_time_date_or_number_is_told_and_replaces_what_it_changes():
    assert changes("Our team standup is at 9:30 every morning.", "standup moved to 9:15 from Monday.")
    assert not changes("Our team standup is at 9:30 every morning.", "standup is still at 9:30, sadly.")
    assert not changes("The gig is on the 9th.", "The gig is on the 16th.")  # says no change: two gigs?
    assert tells_a_change("standup moved to 9:15 from Monday") and not tells_a_change("standup was fun")
    # In the words and languages people use (written by someone who saw no code).
    assert changes(
        "la visita dal cardiologo il 3 aprile alle 9:15.", "Novità: la segreteria ha spostato la visita al 10 aprile."
    )
    assert tells_a_change("Die Feier wurde auf den 14. verschoben")
    # A value told to have been wrong is a change too ("correction", "typo", "Korrektur").
    assert changes("Wall area comes to 8.4 square metres.", "correction: wall area is 9.2 m2, I'd missed the bit.")
    # not "actually", "my bad", "I meant", which as often tell something new (from a review)
    assert not changes("my sister's birthday is on 12 May.", "actually my brother's birthday is on 3 June.")
    assert tells_a_change("oups typo, c'est l'apt 8 pas 6") and tells_a_change("Korrektur: am 10. Mai, nicht am 3.")
    assert not tells_a_change("I actually like running")  # no value
    # and no words that say nothing of which value moved (from a review)
    assert not changes("My PhD defence is on 14 March.", "I pushed to the repo 3 times today for my defence slides.")
    assert not changes("My sister's birthday is on 12 May.", "nvm, my brother's birthday is on 3 June.")
    # Kept as the person's words with no first-person word, since it replaces what they told.
    assert statements("Heads up: standup moved to 9:15 from Monday. Weather's nice.") == [
        "Heads up: standup moved to 9:15 from Monday."
    ]
    # "remind me my X is Y" is kept as told (from a review: it was answered "Noted." and never kept)
    assert statements("remind me my locker code is 4471") == ["remind me my locker code is 4471"]


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        ("I booked Hotel Sakuraya for 3 nights.", "The hotel is Hotel Hanabusa, not Hotel Sakuraya."),
        ("Also my dog is called Pipoca, he's crazy.", "I wrote wrong the name of my dog, he is Paçoca, not Pipoca"),
        ("Luca has his birthday on 3 August.", "Luca's birthday is 8 August, not 3. The 3 is my sister's."),
        ("Jonas hat sein Finale am Samstag.", "Das Finale ist am Sonntag, nicht am Samstag."),
        ("its on saturday the 12th", "its sunday not saturday lol"),
        ("My advisor is Prof. Alvarez.", "Sorry, my advisor is Prof. Alvarado, NOT Alvarez."),
    ],
)
def test_a_correction_that_names_the_value_it_sets_aside_replaces_it(earlier, later):
    assert sets_aside(earlier, later)


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        ("I booked Hotel Sakuraya for 3 nights.", "I'm not sure the hotel has parking."),  # no value of it, set aside
        ("My dog Pipoca barks at the door bell.", "Pipoca is not a puppy any more."),  # the value, but kept
        ("the meeting is at the office", "no, it's at home"),  # nothing of the earlier named: not this test's to say
        ("I take warfarin, 3 mg each evening.", "Not today, thanks."),
        # from a review: a word of the earlier statement after "not" that is no value of it
        ("I take warfarin, 3 mg each evening, not sure why.", "My INR on warfarin was 2.5 last week, not sure why."),
        ("I take warfarin too, 3 mg each evening.", "3 mg, not too bad, I take it each evening and feel fine."),
    ],
)
def test_a_negation_that_names_no_value_of_the_earlier_statement_sets_nothing_aside(earlier, later):
    assert not sets_aside(earlier, later)


@pytest.mark.parametrize(
    ("word", "sentence"),
    [
        ("diagnosis", "ngl kinda overwhelmed, got diagnosed w adhd last wk"),
        ("despido", "en mi último trabajo me despidieron por un conflicto con mi jefe"),
        ("med", "the doc put me on methylphenidate 10mg."),
        ("tablet", "she wants me on metformin 500 milligrams twice a day"),
        ("preis", "Die Umzugsfirma heißt Brenneke & Söhne, das Angebot liegt bei 1.380 Euro."),
        ("montant", "mon loyer c'est 1 475 $ par mois btw"),
        ("passport", "my passport number is X123"),
    ],
)
def test_a_sentence_holds_a_word_named_by_its_form_or_by_the_shape_of_its_value(word, sentence):
    # What a request to forget names ("borra lo del despido", "my diagnosis or the meds", "den Preis aus dem
    # Angebot") in the words a statement used: written by someone who saw no code, each only asked "did you mean".
    assert holds(word, sentence)


@pytest.mark.parametrize(
    ("word", "sentence"),
    [
        ("christina", "Christopher from work lent me his car"),  # a name begun alike is another name
        ("carla", "Carlos from work lent me his car"),
        ("hermana", "mi hermano vive en Lyon"),  # the same word of another gender
        ("med", "my GP is Dr Okafor, room 12"),  # a figure is no dose
        ("price", "the quote comes on 3 May"),  # a day of a month is no price
        ("diagnosis", "the doctor was kind"),
    ],
)
def test_a_sentence_does_not_hold_another_name_a_gender_pair_or_a_figure_that_is_no_value(word, sentence):
    assert not holds(word, sentence)


def test_a_surname_asked_is_given_only_after_the_name_or_said_to_be_one():
    # Written by someone who saw no code: "What's Sofia's surname, for the card?" was answered with "Ewan and
    # Sofia's wedding at Hollin Barn", and "whats femke's last name" got "I hear you."
    question = "What's Sofia's surname, for the card?"
    assert asked_of(question) == Asked(NAME, "surname", "sofia")
    assert asked_of("whats femke's last name") == Asked(NAME, "surname", "femke")
    assert asked_of(question).gives("Sofia Lindqvist is my boss.", question)
    assert asked_of(question).gives("Sofia married Tom, her surname is Brandt now.", question)
    landlord = "what's my landlord's surname?"
    assert asked_of(landlord).gives("my landlord is Mr Okafor, he never answers", landlord)
    assert not asked_of(question).gives("need to RSVP to Ewan and Sofia's wedding at Hollin Barn on 14 June.", question)
    assert not asked_of(question).gives("sofia is my boss", question)  # in lower case, two words after it
    lower = "wait whats my TAs last name again i need to email her abt my grade"
    assert asked_of(lower).gives("ya write the email pls the TA is priya raman", lower)
    assert not asked_of("whats kiara's surname").gives("my bestie kiara's bday party is at skate central", "")
    assert "kiara's surname yet." in recall.not_told("whats kiara's surname, need it for the card")


@pytest.mark.parametrize(
    "question",
    [
        "What statin did my GP put me on, and at what dose?",
        "Che pastiglie mi ha prescritto il dottor Ferraguti l'ultima volta, e quanti milligrammi?",
        "what dose was i on again?",
        "AND WHAT DOSE IS MY WATER TABLET",
    ],
)
def test_a_dose_asked_is_given_only_by_a_statement_with_a_dose(question):
    # Written by someone who saw no code: each was answered with a statement about the same doctor or medicine that
    # gives no dose ("GP wants me to compare").
    asked = asked_of(question)
    assert asked.kind == DOSE
    assert asked.gives("the doc put me on methylphenidate 10mg.", question)
    assert asked.gives("I take amlodipine, five milligrams each morning", question)
    assert not asked.gives("GP wants me to compare", question)
    assert not asked.gives("my GP put me on atorvastatin last spring", question)
    assert not asked.gives("my baby drinks 120ml of formula every 3 hours", question)
    assert recall.not_told(question) == "You haven't told me the dose yet."


@pytest.mark.parametrize(
    "question",
    [
        "which tablets did my GP put me on?",  # "I'm on lithium", "switched me to venlafaxine": told in many ways
        "which medicine my mama takes for the sugar, the pharmacist asked",
        "what inhaler do I use?",
    ],
)
def test_a_medicine_asked_is_left_to_the_scores(question):
    # From a review: read by a dose or a drug's usual name ending, "what meds am I on?" got "you haven't told me"
    # after "I'm on lithium for my bipolar".
    assert asked_of(question) is None


def test_a_medicine_to_take_or_avoid_is_no_medicine_asked_by_its_dose():
    # "I am allergic to penicillin" answers it (chat_quality's own set)
    assert (
        asked_of("The pharmacy offers an antibiotic. Which medicine must I avoid, according to what I told you?")
        is None
    )
    assert asked_of("which tablets should I take for a headache?") is None


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        ("I'm at 4471 rue Sainte-Ursule, apt 6.", "oups typo, c'est l'apt 8 pas 6, j'étais fatiguée"),
        (
            "Ah, devo anche ricordarmi la visita dal cardiologo, il dottor Ferraguti, il 3 aprile alle 9:15.",
            "Novità: la segreteria ha spostato la visita dal dottor Ferraguti al 10 aprile, stesso orario.",
        ),
        ("Wall area comes to 8.4 square metres, tiles are 30x60.", "correction: wall area is 9.2 m2."),
    ],
)
def test_a_correction_in_few_words_or_another_language_corrects(earlier, later):
    assert recall.corrects(earlier, later)


def test_another_one_of_the_same_kind_or_a_word_of_no_value_is_no_correction():
    # from a review: "what car do I drive?" answered "the latest: my car actually needs 4 new tyres"
    assert not recall.corrects("I drive a 2011 Skoda Octavia.", "my car actually needs 4 new tyres")
    assert not recall.corrects("My sister's birthday is on 12 May.", "nvm, my brother's birthday is on 3 June.")
    assert not recall.corrects("standup is at 9:30 every morning.", "I actually like our standup.")
    # "my bad", "I meant" as often tell something new (from a review)
    assert not recall.corrects("nursery costs 1100 a month", "my bad, nursery pickup is at 5:30")
    assert not recall.corrects("mum's birthday is 3 May", "I meant to tell you, mum is turning 70 this year")


@pytest.mark.parametrize("apostrophe", ["'", "\u2019", "\u2018", "\u02bc"])
def test_what_was_asked_is_told_back_as_written_whatever_the_apostrophe(apostrophe):
    question = f"What is Keisha{apostrophe}s science teacher's name?"
    assert asked_of(question).in_their_terms(question) == f"Keisha{apostrophe}s science teacher's name"
