"""Curation by talking (services/spoken_curation.py, language/memory_requests.py): "please forget my ..." forgets
it through the chat page's × path at every door, with the bundled model or a capable one; "forget that"
forgets the last thing told; a request it cannot pin down asks and forgets nothing; Undo gives it back;
"what do you know about me?" lists what is kept."""

import json
from pathlib import Path

import pytest

from bench.fake_llm_server import extraction, reply
from memory_engine.engine import recall
from memory_engine.interfaces.memoryos import MemoryOS
from memory_engine.language.memory_requests import FORGET, LIST, read, read_all
from memory_engine.models import LongTermEntry, Page
from memory_engine.services import spoken_curation
from memory_engine.services.imports import import_create, import_run
from memory_engine.services.lab import experiment_create
from tests.api_helpers import SPACE, client_for
from tests.memory_helpers import (
    add_turns,
    days_ago,
    nothing_extracted,
    offline_model_loaded,
    told_with_no_key,
    weak_offline_llm,
)

LABELLED = Path(__file__).resolve().parents[2] / "bench" / "data" / "memory_requests.json"

TOLD = [
    ("I take sertraline 50 mg every morning, my GP put me on it in March.", "Thanks for telling me."),
    ("My dog Biscuit is a beagle and he is three.", "Lovely!"),
    ("I live in Ghent, near the Korenmarkt.", "Nice city."),
    ("Any tips for a rainy weekend?", "Museums and a good book."),
]


def _ask(memory: MemoryOS, message: str):
    return memory.get_response(user_id="alice", assistant_id="helper", query=message)


@pytest.mark.parametrize(
    ("message", "about"),
    [
        ("please forget my medicine", "my medicine"),
        ("Could you delete everything you know about my salary?", "my salary"),
        ("Kannst du bitte löschen, was ich dir über meine Schulden erzählt habe?", "was ich dir"),
        ("I'm not comfortable with you knowing my HIV status. Please delete it.", "I'm not comfortable with you"),
        ("Oublie mon adresse, s'il te plaît.", "mon adresse"),
        ("My bank PIN is 4471. wait no, forget that", "My bank PIN is 4471."),
        # The memory named as what it takes from, a thing told named by what it was about, a filler in the
        # language mixed in, the verb last after the thing it takes.
        ("drop the gate code from memory, it changes weekly", "the gate code"),
        ("Actually, please don't store anything about Ravi's operation.", "Ravi's operation"),
        ("ah y borra lo del juicio, porfa", "lo del juicio"),
        ("et oublie le nom de mon avocat stp", "le nom de mon avocat"),
        ("aur haan loan wali baat bhool ja", "loan wali baat"),
        # What was told of it, in the languages people mix in.
        ("Per favore dimentica quello che ti ho detto su Chiara, grazie", "quello che ti ho detto su Chiara"),
        ("olvida lo que te conté sobre mi jefe", "lo que te conté sobre mi jefe"),
        # Another language's imperative after its "and", which an English "i" before the verb does not make a
        # statement; what was told, with its frame, in Polish and Portuguese.
        ("A, i zapomnij proszę o tym co pisałam o Bartku i pracy, he would be mad", "o tym co pisałam o Bartku"),
        ("Esquece o que te disse sobre o meu salário", "o que te disse sobre o meu salário"),
        ("please forget anything about Felix's diagnosis", "Felix's diagnosis"),
        ("forget what I told you about my so-called friend Dave", "what I told you about my so-called friend Dave"),
        # Held-out writing (chat_issue64_c/d): a thing of someone else's, and "oh and" before the verb.
        ("VET RECHECK IS MARCH 3. ALSO PLEASE FORGET LORRAINE'S PHONE NUMBER, SHE ASKED ME", "LORRAINE'S PHONE NUMBER"),
        ("oh and forget the landlord's email please, he asked me not to pass it around", "the landlord's email"),
        ("oh n forget that prescription ref, dont want it floatin round", "that prescription ref"),
        ("wait nvm forget i said anything about him ok", "i said anything about him"),
        ("Btw, pakidelete yung full name ni Nanay sa memory mo, privacy lang po.", "yung full name ni Nanay"),
        ("Ah, e esquece o nome da clínica, I'm switching vets anyway", "nome da clínica"),
        # another language's verb last, asked for before what it names
        ("Kannst du die Gehaltszahlen von vorhin bitte löschen, das ist mir peinlich", "die Gehaltszahlen von vorhin"),
        # Held-out writing (chat_issue64_g): the saying of it points at what was said before, not at "you said that"
        (
            "i told my manager at work about it, her name is jo. actually nvm forget i said that, not something i want",
            "i told my manager",
        ),
    ],
)
def test_a_request_to_forget_is_read_with_what_it_names(message, about):
    request = read(message)
    assert request is not None and request.kind == FORGET
    assert request.about.startswith(about)


@pytest.mark.parametrize(
    "message",
    [
        "dont let me forget my flu jab on the 14th",
        "Oh and before I forget, my shop is called Petal & Stem.",
        "I always forget to tell new doctors I'm allergic to penicillin.",
        "remove the word 'deplorable' from the letter",
        "Forget about work, let's plan the weekend.",
        "How do I delete my Facebook account?",
        "Honestly I just want to forget this entire month.",
        "Thank you, this is very clear.",
        "What do you know about sourdough?",
        "N'oublie pas de me rappeler d'appeler ma mère dimanche.",
        "Wie lösche ich meinen Amazon-Account?",
        "the app lost my photos, how do I get them back from the cloud?",
        "It's clear that I need to spend less on gifts.",
        "i forget where i put the spare key",
        "we always forget the bins on tuesdays",
        # A helper's review: "a" and "i" are Polish "and" only before another language's verb.
        "A drop in my salary this year has been tough",
        "a clear improvement in my sleep since I quit coffee",
        "so he borra all my messages",
        "Forget about the budget for a sec, let's plan the trip.",
        # "Aslında bunu unut": "actually, forget this", which named "Aslında bunu" and forgot three days of statements
        "Aslında bunu unut, kayıt tutmanı istemiyorum.",
        "Vergiss es, ich mach das selbst.",
        "oh and we forget the bins every week",
        "N'oublie pas de me rappeler d'appeler ma mère dimanche.",
        "Delete the last paragraph of the cover letter and make it end on a stronger note.",
        "Drop the second recipe, it has mushrooms and I can't stand them.",
        "But my cost basis in Amazon is low. Clear",
        # A helper's review of this reading: a negation, a program's memory, an editing request, a contraction, a
        # subject before a verb last, never mind.
        "no, no borre mis fotos",
        "No olvide mi cita de mañana",
        "don't keep the whole file in memory, stream it",
        "just delete the objects in memory after use",
        "I have two drafts, delete that one",
        "My draft has too many adjectives. Please delete.",
        "forget what's happened, move on",
        "the kids should just forget",
        "Die Bank soll das bitte löschen",
        "The weather was awful yesterday, forget it",
        "read it and forget it, that's my motto",
    ],
)
def test_the_same_words_that_ask_nothing_of_the_memory_are_no_request(message):
    assert read(message) is None


@pytest.mark.parametrize(
    ("about", "thing"),
    [
        ("what i said about my diagnosis", "my diagnosis"),
        ("the stats thing i said", "stats"),
        ("I said anything about the tyre", "tyre"),
        ("lo del despido", "despido"),
        ("my phone number", "my phone number"),
        ("the information about my wife", "my wife"),
        ("quello che ti ho detto su Chiara e la separazione", "Chiara e la separazione"),
        ("the thing he said about my mum", "thing he said about my mum"),
    ],
)
def test_a_request_names_its_thing_without_the_words_that_frame_it(about, thing):
    # The reply says back what was forgotten: "what I kept about you said anything about the tyre" says the
    # person said what they never did.
    assert spoken_curation.named(about) == thing


def test_a_clause_that_goes_on_after_the_thing_is_tried_without_it_only_when_the_whole_finds_nothing():
    # "my dad he has cancer" names the cancer, not every statement about the dad (from a review): the whole is
    # searched first, and the head alone only when the whole finds nothing sure ("lyle's birthday he says ...").
    about = "the thing about lyle's birthday he says he don't want any fuss this year"
    assert spoken_curation.named(about) == "lyle's birthday he says he don't want any fuss this year"
    assert spoken_curation.head_of(spoken_curation.named(about)) == "lyle's birthday"
    assert spoken_curation.head_of("my dad he has cancer") == "my dad"
    assert spoken_curation.head_of("the thing he said about my mum") == ""
    # a part of a list that names nothing is no thing to forget (from a review: it forgot "my cat is called Mochi")
    assert spoken_curation._listed("the sertraline or whatever it's called") == []


def test_a_letter_is_not_read_as_a_list_of_two_things_to_forget():
    # From a review: "y" and "e" join a list in Spanish, Italian and Portuguese, and are letters elsewhere: "forget
    # my vitamin e tablets" was two things to forget, "my vitamin" and "tablets" (any tablets told of).
    assert spoken_curation._listed("my vitamin e tablets") == []
    assert spoken_curation._listed("the vitamin e i take") == []
    assert spoken_curation._listed("mi madre y mi padre") == ["mi madre", "mi padre"]
    assert spoken_curation._listed("Chiara e la separazione") == ["Chiara", "la separazione"]


def test_a_figure_or_a_word_begun_alike_alone_names_nothing_to_forget():
    # From a review: "forget my salary" (never told) deleted "my rent is 1200 a month"; "my grandma" the grandpa.
    assert spoken_curation._share(["salary"], "my rent is 1200 a month") == 0.0
    assert spoken_curation._share(["preis", "angebot"], "das Angebot liegt bei 1.380 Euro.") == 1.0
    assert spoken_curation._share(["med"], "the doc put me on methylphenidate 10mg.") == 1.0  # their own dose
    for word, text in [
        ("med", "my dad takes warfarin 5mg after his stroke"),  # someone else's
        ("med", "the vet put Biscuit on 50 mg carprofen"),
        ("grandma", "my grandpa has dementia"),
        ("frank", "I fly to Frankfurt on Monday"),
        ("doctor", "I finished my doctorate in May"),
        ("med", "I drink about 14 units a week"),
        ("med", "my baby drinks 120ml of formula every 3 hours"),
    ]:
        assert spoken_curation._share([word], text) == 0.0, (word, text)


def test_no_message_labelled_as_asking_nothing_of_the_memory_is_read_as_a_request():
    # Written for this by someone who saw no code (bench/data/memory_requests.json): a forget read where
    # none was asked loses what the person told, so not one may be.
    # A thing named with "the" is only tentatively a request ("forget the formal tone"): carried out only when
    # the memory surely holds it.
    messages = json.loads(LABELLED.read_text())["messages"]
    read_as = [(m["message"], read(m["message"])) for m in messages if m["kind"] not in (FORGET, LIST)]
    assert [message for message, request in read_as if request is not None and not request.tentative] == []
    assert read("what do you know about me?").kind == LIST


def test_forgetting_by_talking_forgets_what_it_names_keeps_the_rest_and_undo_gives_it_back(alice_space, settings):
    weak = told_with_no_key(alice_space, settings, TOLD)
    assert "sertraline" in _ask(weak, "What medicine do I take?").text

    done = _ask(weak, "please forget what I told you about the sertraline")
    assert done.source == Page.ReplySource.CURATION and done.text.startswith("Done: I've forgotten")
    assert "50 mg" not in done.text  # the reply does not say what was forgotten again
    assert done.forgotten and all(f.entry.status == LongTermEntry.Status.DELETED for f in done.forgotten)
    kept = " ".join(LongTermEntry.objects.filter(space=alice_space, status="active").values_list("value", flat=True))
    assert "sertraline" not in kept and "Biscuit" in kept
    held_out = Page.objects.get(space=alice_space, seq=1)
    assert "sertraline" not in held_out.user_input and "sertraline" in held_out.said["user_input"]

    assert "sertraline" not in _ask(weak, "What medicine do I take?").text
    assert "Biscuit" in _ask(weak, "What's my dog called?").text

    for forgotten in done.forgotten:  # Undo, as the chat page's button does it
        weak.revert_entry(
            user_id="alice", assistant_id="helper", entry_id=forgotten.entry.pk, version_id=forgotten.undo_to
        )
    assert "sertraline" in _ask(weak, "What medicine do I take?").text
    assert spoken_curation.forgotten_by(done.page) == []
    assert not offline_model_loaded()  # nothing of this asked the model


def test_a_message_that_asks_and_forgets_in_passing_gets_both_the_answer_and_what_went(alice_space, settings):
    # Written by someone who saw no code (issue 64's set b): the question first, the request after it in passing.
    said = [
        *TOLD,
        ("his teacher is Mrs Pemberton-Ray, klasa 5R, Eastbridge Primary", "Noted."),
        ("a, i my husband Bartek lost his job last week, nie mów nikomu", "Noted."),
    ]
    weak = told_with_no_key(alice_space, settings, said)
    both = _ask(
        weak, "jak się nazywa teacher Antka? piszę kolejny mail. A, i zapomnij proszę o tym co pisałam o Bartku i pracy"
    )
    assert both.source == Page.ReplySource.CURATION
    assert "Pemberton-Ray" in both.text and "Done: I've forgotten" in both.text
    assert "Bartku i pracy" in both.text  # as said: Polish "i" is "and", not "you"
    assert both.forgotten and all("Bartek lost his job" in f.entry.value for f in both.forgotten)
    # An answer that would quote what the message forgets is left out: the forgetting is the reply.
    only = _ask(weak, "where do I live? and please forget where I live")
    assert "Ghent" not in only.text and "Done: I've forgotten" in only.text


def test_a_question_about_what_was_forgotten_says_it_was_asked_to_be_forgotten_and_gives_nothing_of_it(
    alice_space, settings
):
    pager = ("oncall was me and sanna. escalation pager +372 5550 1834 if you need it in the doc.", "Noted.")
    weak = told_with_no_key(alice_space, settings, [*TOLD, pager])
    assert "1834" in _ask(weak, "escalation pager number?").text
    _ask(weak, "drop the escalation number from memory, it rotates weekly anyway")
    after = _ask(weak, "escalation pager number?")
    assert after.text == recall.ASKED_TO_FORGET
    assert after.quoted == ()
    # Told again since: the new words are the answer.
    _ask(weak, "new escalation pager for this week: +372 5550 9921")
    assert "9921" in _ask(weak, "escalation pager number?").text
    # A question about anything else is answered as before.
    assert "Biscuit" in _ask(weak, "What's my dog called?").text
    assert "Ghent" in _ask(weak, "Where do I live?").text


def test_a_request_in_passing_forgets_every_thing_of_the_list_it_names_and_keeps_the_rest(alice_space, settings):
    # Written by someone who saw no code: the request comes last in a message that asks something else, and names
    # its things in a list after a comma; the sentence told both in clauses of their own.
    said = (
        "Most kind. I ought to mention that my ophthalmologist has diagnosed early glaucoma, and I am to use "
        "latanoprost drops each night. Would larger print on my notes be advisable?"
    )
    weak = told_with_no_key(alice_space, settings, [TOLD[1], (said, "Certainly.")])
    message = (
        "Our daughter Fiona telephones from Perth each Sunday. What time would 7 pm her time be here? Oh, and while "
        "I think of it, I would be much obliged if you would forget what I told you about my eyes, the glaucoma and "
        "the drops both. It is a private matter."
    )
    [request] = [r for r in read_all(message) if r.kind == FORGET]
    assert request.about == "what I told you about my eyes, the glaucoma and the drops both"

    done = _ask(weak, message)
    assert done.source == Page.ReplySource.CURATION and done.forgotten
    told = Page.objects.get(space=alice_space, seq=2)
    assert "glaucoma" not in told.user_input and "latanoprost" not in told.user_input
    assert "glaucoma" in told.said["user_input"] and "latanoprost" in told.said["user_input"]  # held out, as said
    assert "larger print" in told.user_input  # what it asked stays
    assert "latanoprost" not in _ask(weak, "And the drops I use in the evening, what are they called?").text
    assert "Biscuit" in _ask(weak, "What's my dog called?").text


def test_forget_that_forgets_the_last_thing_told_even_before_it_was_consolidated(memory, alice_space, settings):
    weak = MemoryOS(llm=weak_offline_llm(settings))
    weak.add_memory(user_id="alice", assistant_id="helper", user_input=TOLD[1][0], agent_response="Lovely!")
    weak.add_memory(user_id="alice", assistant_id="helper", user_input="My bank PIN is 4471.", agent_response="OK.")
    done = _ask(weak, "oh no, forget that")
    assert done.source == Page.ReplySource.CURATION and len(done.forgotten) == 1
    told = Page.objects.get(space=alice_space, seq=2)
    assert "4471" not in told.user_input and told.said["user_input"] == "My bank PIN is 4471."
    assert "Biscuit" in Page.objects.get(space=alice_space, seq=1).user_input


def test_forget_that_after_something_told_in_the_same_message_forgets_it_there_and_never_repeats_it(
    memory, alice_space, settings
):
    weak = told_with_no_key(alice_space, settings, TOLD)
    done = _ask(weak, "My bank card PIN is 2208 - oh no, forget that, I should not write this. How do I change it?")
    assert done.source == Page.ReplySource.CURATION and "2208" not in done.text and done.forgotten
    asked = Page.objects.filter(space=alice_space).order_by("-seq").first()
    assert "2208" not in asked.user_input and "2208" in asked.said["user_input"]  # held out, as said
    assert "2208" not in _ask(weak, "What is my card PIN?").text
    assert LongTermEntry.objects.filter(space=alice_space, status="active", value__contains="Biscuit").exists()


def test_one_thing_asked_twice_in_a_message_is_forgotten_and_said_once(memory, alice_space, settings):
    weak = told_with_no_key(alice_space, settings, TOLD)
    done = _ask(weak, "Please don't keep my dog anywhere, delete that from your memory. I should not have said it.")
    assert done.text.startswith("Done: I've forgotten what I kept about your dog") and done.text.count("dog") == 1
    assert "keep nothing" not in done.text
    assert not LongTermEntry.objects.filter(space=alice_space, status="active", value__contains="Biscuit").exists()


def test_a_thing_named_by_what_was_told_of_it_is_forgotten_and_a_name_only_begun_alike_is_not(alice_space, settings):
    # Written by someone who saw no code: "the information about my wife" asked "did you mean ...?" and forgot
    # nothing, its frame read as part of the thing. And from a review: a name that only begins like one told
    # ("Carla", "Carlos") is not it.
    told = [
        ("My wife Yumiko will accompany me to the appointment.", "Good."),
        ("Carlos from work lent me his car for the weekend.", "Nice of him."),
        ("For your information, I am allergic to penicillin.", "Noted."),
    ]
    weak = told_with_no_key(alice_space, settings, [*TOLD, *told])
    done = _ask(weak, "Please delete the information about my wife. She prefers not to be in your memory.")
    assert done.text.startswith("Done: I've forgotten"), done.text
    kept = " ".join(LongTermEntry.objects.filter(space=alice_space, status="active").values_list("value", flat=True))
    assert "Yumiko" not in kept and "Biscuit" in kept and "Carlos" in kept
    assert "Yumiko" not in _ask(weak, "Who will accompany me to the appointment?").text
    _ask(weak, "please forget what I told you about Carla")
    kept = " ".join(LongTermEntry.objects.filter(space=alice_space, status="active").values_list("value", flat=True))
    assert "Carlos" in kept


def test_a_thing_named_in_another_form_or_by_its_kind_is_forgotten_and_the_rest_of_its_message_kept(
    alice_space, settings
):
    # Written by someone who saw no code: each of these only asked "did you mean ...?" (or, in German, did
    # nothing), so the diagnosis, the dose and the price were quoted back when asked for; and forgetting "the
    # tyre" left "Between you" to be quoted.
    told = [
        ("ngl kinda overwhelmed, got diagnosed w adhd last wk and the doc put me on methylphenidate 10mg.", "Ok."),
        ("i work at grachtwerk studio, manager is femke and shes chill abt it", "Noted."),
        ("Die Umzugsfirma heißt Brenneke & Söhne, das Angebot liegt bei 1.380 Euro.", "Notiert."),
        ("Entre nosotros, en mi último trabajo me despidieron por un conflicto con mi jefe.", "Vale."),
        ("The chap next door has been parking across my drive. Between you and me I let his tyre down.", "Oh."),
    ]
    weak = told_with_no_key(alice_space, settings, [*TOLD, *told])
    for request in (
        "hmm actually pls dont keep what i said abt my diagnosis or the meds",
        "Bitte vergessen Sie den Preis aus dem Angebot, das möchte ich nicht gespeichert haben.",
        "Oye, borra lo del despido, por favor.",
        "Forget I said anything about the tyre.",
    ):
        done = _ask(weak, request)
        assert done.text.startswith("Done: I've forgotten"), (request, done.text)
    kept = " ".join(LongTermEntry.objects.filter(space=alice_space, status="active").values_list("value", flat=True))
    for forgotten in ("adhd", "methylphenidate", "1.380", "despidieron", "tyre", "Between you"):
        assert forgotten not in kept, forgotten
    for still in ("grachtwerk", "parking across my drive", "Biscuit"):
        assert still in kept, still
    assert "Brenneke" in _ask(weak, "Wie hieß die Umzugsfirma?").text
    # a sentence about the dad's illness goes whole, and an entry meant is deleted whole (from a review: what is left
    # of "my HIV status, on Biktarvy" still says it)
    _ask(weak, "I'm HIV positive, diagnosed in 2019, and on Biktarvy.")
    weak.force_mid_term_analysis(user_id="alice", assistant_id="helper")
    assert _ask(weak, "please forget my HIV status").text.startswith("Done: I've forgotten")
    kept = " ".join(LongTermEntry.objects.filter(space=alice_space, status="active").values_list("value", flat=True))
    assert "Biktarvy" not in kept and "HIV" not in kept
    for question in ("what dose was i on again?", "what did i get diagnosed with again"):
        answer = _ask(weak, question).text
        assert "10mg" not in answer and "adhd" not in answer, answer


def test_a_request_it_cannot_pin_down_asks_and_forgets_nothing(alice_space, settings):
    weak = told_with_no_key(alice_space, settings, TOLD)
    active = LongTermEntry.objects.filter(space=alice_space, status="active").count()
    done = _ask(weak, "please forget my tax return")
    assert done.source == Page.ReplySource.CURATION and done.forgotten == ()
    assert "forgotten nothing" in done.text
    assert LongTermEntry.objects.filter(space=alice_space, status="active").count() == active


def test_a_yes_to_what_an_unsure_request_asked_about_forgets_it_and_a_yes_to_anything_else_does_nothing(
    alice_space, settings
):
    weak = told_with_no_key(alice_space, settings, TOLD)
    assert _ask(weak, "yes").source != Page.ReplySource.CURATION  # a yes with nothing asked: no request
    # "my medication" is sure since a medicine is read by its dose; an antidepressant may be sertraline
    asked = _ask(weak, "please forget my antidepressant")
    assert asked.source == Page.ReplySource.CURATION and asked.forgotten == ()
    assert "Did you mean" in asked.text and asked.text.count("sertraline") == 1  # the statement, named once
    assert _ask(weak, "ok").source != Page.ReplySource.CURATION  # read, not a yes
    assert "sertraline" in _ask(weak, "What medicine do I take?").text

    asked = _ask(weak, "please forget my antidepressant")
    done = _ask(weak, "Yes please, forget it!")
    assert done.source == Page.ReplySource.CURATION and done.text.startswith("Done: I've forgotten")
    assert done.forgotten and "sertraline" not in done.text
    kept = " ".join(LongTermEntry.objects.filter(space=alice_space, status="active").values_list("value", flat=True))
    assert "sertraline" not in kept and "Biscuit" in kept
    assert "sertraline" not in _ask(weak, "What medicine do I take?").text
    # the yes is spent: another forgets nothing
    assert _ask(weak, "yes").source != Page.ReplySource.CURATION


def test_what_do_you_know_about_me_lists_what_is_kept(alice_space, settings):
    weak = told_with_no_key(alice_space, settings, TOLD)
    listed = _ask(weak, "what do you know about me?")
    assert listed.source == Page.ReplySource.CURATION and listed.text.startswith("Here is what I keep about you")
    assert "Biscuit" in listed.text and "Ghent" in listed.text
    assert "rainy weekend" not in listed.text  # a question is nothing kept


def test_the_rest_door_forgets_by_talking_and_says_what_went(alice_space, settings):
    told_with_no_key(alice_space, settings, TOLD)
    alice = client_for("alice")
    answered = alice.post(SPACE.format(user="alice") + "chat/", {"query": "pls forget where I live"}, format="json")
    assert answered.status_code == 200, answered.data
    assert answered.data["page"]["reply_source"] == "curation"
    forgotten = answered.data["forgotten"]
    assert forgotten and all("Ghent" in f["entry"]["value"] or "Korenmarkt" in f["entry"]["value"] for f in forgotten)
    kinds = {"profile": "profile", "user_knowledge": "knowledge"}
    for f in forgotten:  # Undo at the same door
        path = SPACE.format(user="alice") + f"{kinds[f['entry']['kind']]}/{f['entry']['id']}/revert/"
        undone = alice.post(path, {"version_id": f["undo_to"]}, format="json")
        assert undone.status_code == 200, undone.data
    assert LongTermEntry.objects.filter(space=alice_space, status="active", value__contains="Ghent").exists()


def test_a_turn_stored_through_add_memory_that_asks_to_forget_is_carried_out(alice_space, settings):
    # The MCP server's add_memory and REST's turns store a turn a client's own model answered: the request in it
    # is the person's all the same.
    weak = told_with_no_key(alice_space, settings, TOLD)
    turn = weak.add_memory(
        user_id="alice", assistant_id="helper", user_input="Please forget my dog.", agent_response="Sure, done."
    )
    forgotten = spoken_curation.forgotten_by(Page.objects.get(pk=turn.id))
    assert forgotten and all("Biscuit" in f.entry.value for f in forgotten)


def test_with_a_capable_model_the_memory_does_it_and_the_model_is_not_asked(memory, alice_space, fake_llm):
    fake_llm.responder = nothing_extracted
    memory.add_memory(user_id="alice", assistant_id="helper", user_input=TOLD[2][0], agent_response="Nice city.")
    fake_llm.script(reply("I will keep that in mind."))
    asked_before = len(fake_llm.requests)
    done = memory.get_response(user_id="alice", assistant_id="helper", query="please forget where I live")
    assert done.source == Page.ReplySource.CURATION and done.forgotten
    assert len(fake_llm.requests) == asked_before  # no promise in words: the memory acted
    assert "Ghent" not in Page.objects.get(space=alice_space, seq=1).user_input


def test_a_thing_named_with_the_is_forgotten_only_when_the_memory_surely_holds_it(memory, alice_space, settings):
    weak = MemoryOS(llm=weak_offline_llm(settings))
    weak.add_memory(
        user_id="alice", assistant_id="helper", user_input="The back door code is 5591.", agent_response="Noted."
    )
    weak.add_memory(
        user_id="alice", assistant_id="helper", user_input="My dentist is on Tuesday at 3.", agent_response="Noted."
    )
    assert spoken_curation.plan(alice_space, "Could you forget the formal tone and just talk normally?") is None
    for aside in ("forget Tuesday, let's do the call on Wednesday", "oh and forget the rest, it's fine"):
        assert spoken_curation.plan(alice_space, aside) is None, aside  # nothing the memory surely holds
    done = _ask(weak, "ah no, forget the door code, better not in the chat")
    assert done.source == Page.ReplySource.CURATION and done.forgotten
    assert "5591" not in Page.objects.get(space=alice_space, seq=1).user_input


def test_the_rest_door_with_a_capable_model_forgets_and_lists_without_asking_the_model(memory, alice_space, fake_llm):
    fake_llm.responder = nothing_extracted
    memory.add_memory(user_id="alice", assistant_id="helper", user_input=TOLD[1][0], agent_response="Lovely!")
    asked_before = len(fake_llm.requests)
    alice = client_for("alice")
    listed = alice.post(SPACE.format(user="alice") + "chat/", {"query": "what do you know about me?"}, format="json")
    assert listed.status_code == 200, listed.data
    assert listed.data["page"]["reply_source"] == "curation" and "Biscuit" in listed.data["response"]
    done = alice.post(SPACE.format(user="alice") + "chat/", {"query": "please forget my dog"}, format="json")
    assert done.status_code == 200, done.data
    assert done.data["forgotten"] and done.data["response"].startswith(
        "Done: I've forgotten what I kept about your dog"
    )
    assert len(fake_llm.requests) == asked_before  # the memory answered both, no model
    assert "Biscuit" not in Page.objects.get(space=alice_space, seq=1).user_input


def test_another_account_can_neither_forget_here_by_talking_nor_undo_what_was_forgotten_here(
    alice_space, bob_space, settings
):
    told_with_no_key(alice_space, settings, TOLD)
    alice, bob = client_for("alice"), client_for("bob")
    lives = LongTermEntry.objects.filter(space=alice_space, status="active", value__contains="Ghent")
    kept = set(lives.values_list("pk", flat=True))
    # In bob's own space the request finds nothing of alice's; through alice's address it finds no space at all.
    own = bob.post(SPACE.format(user="bob") + "chat/", {"query": "please forget where I live"}, format="json")
    assert own.status_code == 200 and own.data["forgotten"] == []
    theirs = bob.post(SPACE.format(user="alice") + "chat/", {"query": "please forget where I live"}, format="json")
    assert theirs.status_code == 404
    assert set(lives.values_list("pk", flat=True)) == kept

    forgotten = alice.post(SPACE.format(user="alice") + "chat/", {"query": "pls forget where I live"}, format="json")
    undo = forgotten.data["forgotten"]
    assert undo and not lives.exists()
    kinds = {"profile": "profile", "user_knowledge": "knowledge"}
    for f in undo:  # alice's Undo, replayed by bob at either address
        for user in ("alice", "bob"):
            path = SPACE.format(user=user) + f"{kinds[f['entry']['kind']]}/{f['entry']['id']}/revert/"
            assert bob.post(path, {"version_id": f["undo_to"]}, format="json").status_code == 404
    assert not lives.exists()


def test_the_rest_door_answers_a_correction_by_talking_with_the_latest_value(alice_space, settings):
    told_with_no_key(alice_space, settings, [("I booked Hotel Sakuraya in Kyoto for 3 nights.", "Lovely.")])
    alice = client_for("alice")
    chat = SPACE.format(user="alice") + "chat/"
    correction = "Sorry, my mistake: I booked Hotel Hanabusa, not Hotel Sakuraya."
    fixed = alice.post(chat, {"query": correction}, format="json")
    assert fixed.status_code == 200, fixed.data
    answered = alice.post(chat, {"query": "Which hotel did I book in Kyoto?"}, format="json")
    assert answered.status_code == 200, answered.data
    text = answered.data["page"]["agent_response"]
    assert text.startswith("The latest you told me") and text.index("Hanabusa") < text.index("Kyoto for 3")


def test_an_imported_history_carries_out_the_requests_to_forget_in_it_for_what_was_told_before(alice_space, settings):
    # A history imported whole (ChatGPT's, Claude's, a transcript) in which the person asked the assistant to
    # forget something: the memory forgets it as the chat would have; what they told after the request stays.
    weak_offline_llm(settings)
    turns = [
        {"user_input": TOLD[0][0], "agent_response": "Thanks for telling me."},
        {"user_input": TOLD[1][0], "agent_response": "Lovely!"},
        {"user_input": "please forget what I told you about the sertraline", "agent_response": "Done."},
        {"user_input": "My GP moved me to sertraline 100 mg last week.", "agent_response": "Noted."},
    ]
    job = import_create(space=alice_space, turns=turns, source="transcript")
    while not import_run(job.pk):
        pass
    told, asked, after = (Page.objects.get(space=alice_space, seq=seq) for seq in (1, 3, 4))
    assert "sertraline" not in told.user_input and told.said["user_input"] == TOLD[0][0]
    assert spoken_curation.forgotten_by(asked)
    assert "100 mg" in after.user_input and after.said is None
    assert "Biscuit" in Page.objects.get(space=alice_space, seq=2).user_input
    kept = " ".join(LongTermEntry.objects.filter(space=alice_space, status="active").values_list("value", flat=True))
    assert "50 mg" not in kept
    assert not offline_model_loaded()


def test_a_fork_of_a_space_curated_by_talking_answers_as_its_source_does(alice_space, settings):
    # The lab replays the source's turns as they now read: what was forgotten by talking is not replayed, and a
    # correction by talking supersedes in the fork as it did in the source.
    weak = told_with_no_key(
        alice_space,
        settings,
        [
            ("I booked Hotel Sakuraya in Kyoto for 3 nights.", "Lovely."),
            ("My bank card PIN is 2208, I keep forgetting it.", "Noted."),
        ],
    )
    assert _ask(weak, "please forget my bank card PIN").forgotten
    _ask(weak, "Sorry, my mistake: I booked Hotel Hanabusa, not Hotel Sakuraya.")
    question = "Which hotel did I book in Kyoto?"
    source_answer = recall.answer(alice_space, question).text
    assert source_answer.startswith("The latest you told me") and source_answer.index("Hanabusa") < source_answer.index(
        "Kyoto for 3"
    )

    experiment = experiment_create(source=alice_space, name="fork", parameters={"heat_threshold": 2.0})
    shadow = experiment.space
    assert Page.objects.filter(space=shadow).count() == Page.objects.filter(space=alice_space).count()
    assert not Page.objects.filter(space=shadow, user_input__contains="2208").exists()
    assert not LongTermEntry.objects.filter(space=shadow, value__contains="2208").exists()
    fork_answer = recall.answer(shadow, question).text
    assert fork_answer.startswith("The latest you told me") and "Hanabusa" in fork_answer
    assert fork_answer.index("Hanabusa") < fork_answer.index("Kyoto for 3")


def test_a_message_asking_to_forget_more_than_a_handful_of_things_forgets_nothing_and_says_why(alice_space, settings):
    # Each thing named is a search of the memory: a message of 8,000 characters asking to forget 400 things held
    # a web worker for 17 seconds. Past MAX_FORGETS the reply says why and nothing is searched or forgotten; the
    # same at the REST door and in an imported history.
    told_with_no_key(alice_space, settings, TOLD)
    kept = set(LongTermEntry.objects.filter(space=alice_space, status="active").values_list("pk", flat=True))
    things = ["medicine", "dog", "city", "GP", "mornings", "beagle", "sertraline", "Ghent", "weekend", "Korenmarkt"]
    message = " ".join(f"Please forget my {thing}." for thing in [*things, "rainy days"])
    assert spoken_curation.plan(alice_space, "Please forget my medicine. And forget my dog.").forget  # a few: done

    said = client_for("alice").post(SPACE.format(user="alice") + "chat/", {"query": message}, format="json")
    assert said.status_code == 200, said.data
    assert said.data["page"]["reply_source"] == "curation" and said.data["forgotten"] == []
    assert said.data["response"].startswith("That asks me to forget 11 things at once")
    job = import_create(
        space=alice_space, turns=[{"user_input": message, "agent_response": "Ok."}], source="transcript"
    )
    while not import_run(job.pk):
        pass
    assert set(LongTermEntry.objects.filter(space=alice_space, status="active").values_list("pk", flat=True)) == kept
    assert Page.objects.filter(space=alice_space, user_input__contains="sertraline 50 mg").exists()
    assert len(things) + 1 > spoken_curation.MAX_FORGETS


def test_the_rest_door_with_a_capable_model_supersedes_a_correction_and_its_prompt_gives_the_new_value(
    memory, alice_space, fake_llm
):
    # The correction is told to the model (not a request to the memory); the memory's model draws the fact, the
    # memory supersedes the one it replaces, and the next prompt's knowledge holds the new value, not the old.
    def drawn(request):
        said = json.dumps(request)
        if "not Hotel Sakuraya" in said:
            return extraction(user_facts=[("hotel in Kyoto", "The user booked Hotel Hanabusa, not Hotel Sakuraya.", 1)])
        if "Sakuraya" in said:
            return extraction(user_facts=[("hotel in Kyoto", "The user booked Hotel Sakuraya for 3 nights.", 1)])
        return extraction()

    alice_space.stm_capacity, alice_space.heat_threshold = 2, 1.0
    alice_space.save()
    fake_llm.responder = drawn
    add_turns(memory, [("I booked Hotel Sakuraya in Kyoto for 3 nights.", "Lovely, enjoy Kyoto.")], start=days_ago(10))
    add_turns(memory, [(f"I watched film number {n} last night.", "Nice!") for n in range(3)], start=days_ago(9))
    memory.force_mid_term_analysis(user_id="alice", assistant_id="helper")
    chat = SPACE.format(user="alice") + "chat/"
    alice = client_for("alice")
    fake_llm.script(reply("Thanks, noted."))
    told = alice.post(chat, {"query": "Sorry, my mistake: I booked Hotel Hanabusa, not Hotel Sakuraya."}, format="json")
    assert told.status_code == 200, told.data
    add_turns(memory, [(f"I cooked dish number {n} today.", "Tasty.") for n in range(3)], start=days_ago(-0.01))
    memory.force_mid_term_analysis(user_id="alice", assistant_id="helper")
    kept = dict(LongTermEntry.objects.filter(space=alice_space).values_list("value", "status"))
    assert kept["The user booked Hotel Sakuraya for 3 nights."] == LongTermEntry.Status.SUPERSEDED
    assert kept["The user booked Hotel Hanabusa, not Hotel Sakuraya."] == LongTermEntry.Status.ACTIVE

    fake_llm.script(reply("Hotel Hanabusa."))
    answered = alice.post(chat, {"query": "Which hotel did I book in Kyoto?"}, format="json")
    assert answered.status_code == 200 and answered.data["response"] == "Hotel Hanabusa."
    prompt = next(r for r in reversed(fake_llm.requests) if r.get("stream"))["messages"][0]["content"]
    assert "- The user booked Hotel Hanabusa, not Hotel Sakuraya." in prompt
    assert "The user booked Hotel Sakuraya for 3 nights." not in prompt
    # the turn the old value was drawn from is shown, saying what replaced it
    [old_turn] = [line for line in prompt.splitlines() if "I booked Hotel Sakuraya in Kyoto" in line]
    assert old_turn.endswith('(since replaced: "The user booked Hotel Hanabusa, not Hotel Sakuraya.")')
