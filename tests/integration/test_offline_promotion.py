"""Promotion with the bundled SmolLM2 (a weak model): no LLM call; memory is the person's own words, and
never a word the model wrote. Every path (chat, import, replay, evaluation) promotes through the updater,
so each uses this rule."""

import re
from datetime import timedelta

import pytest

from memory_engine.engine import long_term
from memory_engine.engine.retriever import retrieve
from memory_engine.interfaces.memoryos import MemoryOS
from memory_engine.language.profile_attributes import values_in
from memory_engine.models import ConsolidationRun, LongTermEntry, Page, ReplyRecord
from memory_engine.services.conversation import turn_add
from tests.memory_helpers import add_turns, days_ago, offline_model_loaded, weak_offline_llm

Kind = LongTermEntry.Kind


@pytest.mark.parametrize(
    ("sentence", "values"),
    [
        ("I live in Porto, in Portugal.", [("location", "Porto")]),
        ("Hi! I'm Maria Lindqvist.", [("name", "Maria Lindqvist")]),
        ("I have a cat called Pepper.", [("pets", "a cat called Pepper")]),
        ("I work as a nurse at the city hospital.", [("occupation", "nurse")]),
        ("I'm Anika, a wedding photographer in Hamburg.", [("name", "Anika"), ("occupation", "wedding photographer")]),
        ("My son Haruto just started primary school.", [("family", "son Haruto")]),
        ("we just moved to lisbon", [("location", "lisbon")]),
        ("I'm vegetarian, and I've been that way since I was a kid.", [("diet", "vegetarian")]),
        ("I don't eat pork.", [("diet", "no pork")]),
        ("My favourite book is Pride and Prejudice.", [("likes", "Pride and Prejudice (favourite book)")]),
        ("I'm Tired and need sleep.", []),
        ("I'm a big fan of jazz.", []),
        ("I'm an early riser.", []),
        ("The weather is lovely today.", []),
        # dictated, no punctuation: "I" starts the next clause, not the rest of a name (holdout 7)
        ("this is voice to text my name is Randy I drive for Lone Star Freightways", [("name", "Randy")]),
        # in capitals, the verb after a relative is no name of theirs (a form pasted in LongMemEval)
        ("IF YOUR SPOUSE IS A US CITIZEN, MY SPOUSE IS NOT ELIGIBLE", []),
        ("My mama Rosa turns 90 in November.", [("family", "mama Rosa")]),
        # labelled "not a value" in the entries kept from LoCoMo, LongMemEval and the chat sets (bench_knowledge_kept)
        ("I am allergic to penicillin.", [("health", "allergic to penicillin")]),  # not "health: penicillin"
        ("I AM SO TIRED TODAY DEAR", []),  # not "name: SO TIRED TODAY DEAR"
        ("my son allergic to nuts", []),  # not "family: son allergic"
        ("I love traveling too", [("hobbies", "traveling")]),
        ("I love making this dairy-free chocolate cake", []),  # which one?
        ("I want to make sure I'm prepared", []),
        ("I want to visit with them in June", []),  # "goals: visit"
        ("My daughter Sara's school is near", [("family", "daughter Sara")]),
    ],
)
def test_a_profile_value_is_a_span_of_the_persons_words_never_the_sentence(sentence, values):
    assert values_in(sentence) == values
    said = set(re.findall(r"\w+", sentence.lower()))
    for _, value in values:  # the person's words ("no pork" for "I don't eat pork"), never their sentence
        assert set(re.findall(r"\w+", value.lower())) - {"no"} <= said and not long_term.is_sentence(value)


def test_statements_are_the_persons_sentences_about_themselves_not_questions_or_requests():
    text = "Hey Mel! I'm swamped with the kids & work. What's up with you? Can you remind me to call mum"
    assert long_term.statements(text) == ["I'm swamped with the kids & work."]
    # nor a request in the imperative, a sentence said to the other side, or one about what the one before named
    text = (
        "write a follow-up to the landlord, chauffage still broken, include my full address. I got this book in Lyon. "
        "It inspires me to keep making art, too. Your encouragement gives me the strength to keep going. "
        "I'll check out those websites you mentioned. For your information, I am allergic to penicillin."
    )
    kept = ["I got this book in Lyon.", "For your information, I am allergic to penicillin."]
    assert long_term.statements(text) == kept


@pytest.fixture
def weak(memory, alice_space, settings):
    llm = weak_offline_llm(settings)
    alice_space.stm_capacity = 1
    alice_space.heat_threshold = 3.5
    alice_space.save()
    return MemoryOS(llm=llm)


def test_a_weak_models_promotion_asks_no_model_and_keeps_only_the_persons_words(weak, alice_space):
    turns = [
        ("Hi, I'm Maria. I have a dog named Rex and he loves the beach.", "Rex sounds like a happy dog!"),
        ("I live in Porto, in Portugal.", "I'd be delighted to help you plan your trip to Porto!"),
        ("What's the capital of Australia?", "The capital of Australia is Canberra."),
        ("ok", "ok"),
    ]
    start = days_ago(1)
    for number, (said, replied) in enumerate(turns):  # replies written here by the weak model
        turn_add(
            space=alice_space,
            user_input=said,
            agent_response=replied,
            timestamp=start + timedelta(minutes=2 * number),
            reply_source=Page.ReplySource.WEAK_MODEL,
        )
    weak.force_mid_term_analysis(user_id="alice", assistant_id="helper")

    assert not offline_model_loaded(), "the model was loaded"
    runs = ConsolidationRun.objects.filter(space=alice_space)
    assert runs.exists() and sum(run.llm_calls for run in runs) == 0
    said = " ".join(p.user_input for p in Page.objects.filter(space=alice_space))
    knowledge = list(LongTermEntry.objects.filter(space=alice_space).exclude(kind=Kind.PROFILE))
    assert {entry.value for entry in knowledge} == {
        "I have a dog named Rex and he loves the beach.",
        "I live in Porto, in Portugal.",
    }
    assert all(entry.kind == Kind.USER_KNOWLEDGE for entry in knowledge)  # nothing from the model's replies
    assert long_term.user_profile(alice_space) == {"name": "Maria", "pets": "a dog named Rex", "location": "Porto"}
    for value in long_term.user_profile(alice_space).values():
        assert value in said


def test_a_reply_given_with_the_turn_is_memory_and_a_weak_models_is_not_and_neither_is_kept_as_knowledge(
    weak, alice_space
):
    add_turns(
        weak,
        [
            ("I need a name for my sourdough starter.", "I will remember that your starter is called Doughbert."),
            ("Thanks!", "I can help you bake on weekends."),
            ("What else?", "I'm happy to help."),
        ],
    )
    weak.force_mid_term_analysis(user_id="alice", assistant_id="helper")
    # read word for word, a reply's sentences were offers, tips and pleasantries: with no LLM none is knowledge
    assert not LongTermEntry.objects.filter(space=alice_space, kind=Kind.ASSISTANT_KNOWLEDGE).exists()
    assert LongTermEntry.objects.filter(space=alice_space, kind=Kind.USER_KNOWLEDGE).exists()
    page = Page.objects.filter(space=alice_space).first()
    assert "Doughbert" in page.text  # a reply given with the turn (an import, add_memory) is memory
    page.reply_source = Page.ReplySource.WEAK_MODEL
    assert "Doughbert" not in page.text and page.memory_reply == ""


def test_a_capable_models_profile_value_that_is_a_sentence_is_refused(alice_space):
    page = Page(user_input="I live in Porto, in Portugal.", agent_response="", seq=1)
    answer = {
        "user_facts": [],
        "assistant_knowledge": [],
        "profile": [
            {"page": 1, "attribute": "location", "value": "I live in Porto, in Portugal."},
            {"page": 1, "attribute": "hometown", "value": "Portugal"},
        ],
    }
    extraction = long_term.validate_extraction(answer, [page])
    assert [(item.attribute, item.value) for item in extraction.profile] == [("hometown", "Portugal")]
    assert any("a sentence, not a value" in reason for reason in extraction.rejected)


def test_a_weak_models_small_talk_is_recorded_as_using_no_memory_for_its_prompt_holds_none(weak, alice_space, settings):
    """What it used said "12 pages, 4 profile, ... 390 tokens of memory" beside "the model read 44 tokens":
    the retrieval, which the offline model's short prompt never holds. What it used is what it was shown."""
    from memory_engine.llm.offline import OfflineLLM

    settings.MEMORYOS = {**settings.MEMORYOS, "OFFLINE_VOICE": "model"}  # the small model's own words

    # The bundled model, loaded with a context of its own: the tests that check it is never loaded look
    # for weak_offline_llm's (offline_model_loaded), and may share this process.
    weak = MemoryOS(llm=OfflineLLM(context=2048))
    add_turns(weak, [("I have a cat named Pepper and she hates the rain.", ""), ("It rained all week here.", "")])
    found = retrieve(alice_space, "Such a grey week here.", count_hits=False)
    assert found.pages or found.short_term  # the memory found something
    response = weak.get_response(user_id="alice", assistant_id="helper", query="Such a grey week here.")
    assert response.source == Page.ReplySource.WEAK_MODEL
    assert not list(response.retrieval.items()) and response.retrieval.tokens_used == 0
    record = ReplyRecord.objects.get(page=response.page)
    assert record.used == [] and record.memory_tokens == 0
