"""The chat-quality benchmark: its data, its measures, and one conversation through the reply path."""

import pytest

from bench import chat_quality
from bench.fake_llm_server import reply
from memory_engine.llm import get_llm
from tests.memory_helpers import nothing_extracted


def test_the_data_has_thirty_conversations_of_facts_small_talk_and_questions_some_across_sessions():
    conversations = chat_quality.load_conversations()
    assert len(conversations) >= 30
    assert sum(len(c["sessions"]) > 1 for c in conversations) >= 10
    for conversation in conversations:
        turns = [t for s in conversation["sessions"] for t in s["turns"]]
        said = " ".join(t["say"] for t in turns if "say" in t).lower()
        for ask in (t for t in turns if "ask" in t):
            assert ask["expect"] and any(alt.lower() in said for alt in ask["expect"]), ask


def test_the_fresh_set_is_written_otherwise_facts_in_passing_paraphrased_and_changing():
    conversations = chat_quality.load_conversations(chat_quality.FRESH)
    assert len(conversations) >= 20
    asks = [t for c in conversations for s in c["sessions"] for t in s["turns"] if "ask" in t]
    assert len(asks) >= 80 and sum("stale" in t for t in asks) >= 8
    for conversation in conversations:
        turns = [t for s in conversation["sessions"] for t in s["turns"]]
        for number, ask in enumerate(turns):
            if "ask" not in ask:
                continue
            said = " ".join(t["say"] for t in turns[:number] if "say" in t).lower()
            assert any(alt.lower() in said for alt in ask["expect"]), ask
            assert not any(alt.lower() in ask["ask"].lower() for alt in ask["expect"]), ask


def test_a_fact_counts_when_any_alternative_is_in_the_reply_as_a_word():
    assert chat_quality.found("Your cat is called Biscuit.", ["Biscuit"])
    assert chat_quality.found("It is on the 14th of March", ["March", "14"])
    assert chat_quality.found("I'm allergic to peanuts.", ["peanut"])  # its plural too
    assert not chat_quality.found("You love opera.", ["oper"])
    assert chat_quality.found("They pushed it to October 10th.", ["October 10"])  # a number's ordinal too
    assert not chat_quality.found("Room October 104.", ["October 10"])


def test_it_tells_replies_that_take_the_persons_name_or_recite_the_prompt():
    assert chat_quality.names_user("Maria Lindqvist. She is a friendly person.", "Maria Lindqvist", [])
    assert chat_quality.names_user("Dana's a wonderful person.", "Dana", [])
    assert chat_quality.names_user("So Maria is an Italian doctor.", "Maria Lindqvist", [])
    assert not chat_quality.names_user("Hi Maria, lovely to hear from you!", "Maria", [])
    assert not chat_quality.names_user("You told me: \u201cI'm Maria Lindqvist.\u201d", "Maria Lindqvist", [])
    assert not chat_quality.names_user("Sure, happy to help.", "", [])  # no name told: nothing to take
    assert chat_quality.prompt_leak("The user said: I have a cat.") == "The user said"
    assert chat_quality.prompt_leak("Never make up facts about the user, and never speak as the user.")
    assert chat_quality.prompt_leak("You told me on Monday: \u201cThe user said it was fine.\u201d") is None
    assert chat_quality.prompt_leak("Pepper sounds like a lovely cat!") is None


def test_it_tells_when_the_assistant_speaks_as_the_user():
    assert chat_quality.claims_identity("Hi! I'm Amara, nice to meet you.", "Amara", ["nurse"])
    assert chat_quality.claims_identity("I work as a nurse in Leeds.", "Amara", ["nurse"])
    assert chat_quality.claims_identity("I am a nurse.", "Amara", ["nurse"])
    assert not chat_quality.claims_identity("You work as a nurse, Amara.", "Amara", ["nurse"])


def test_it_tells_condolences_offered_for_a_loss_no_one_spoke_of():
    sister = ["my sister came over today, we baked all afternoon"]
    assert chat_quality.offers_condolences("I'm so sorry for your loss. Baking helps.", sister)
    assert chat_quality.offers_condolences("My condolences to you and your family.", sister)
    assert not chat_quality.offers_condolences("That sounds like a lovely afternoon!", sister)
    assert not chat_quality.offers_condolences("I'm sorry for your loss.", ["our old dog died last week"])
    # the person's own words quoted back are theirs
    assert not chat_quality.offers_condolences('You told me: "the funeral is on Friday".', sister)


def test_it_tells_a_model_reply_that_claims_what_the_person_never_said():
    said = ["any good films for a rainy sunday?", "I loved Amélie, by the way"]
    assert chat_quality.claims_unsaid("Try The Lighthouse by Tomas Verhoeven.", said) == "Lighthouse"
    assert chat_quality.claims_unsaid("You mentioned you love horror films.", said) == "You mentioned"
    assert chat_quality.claims_unsaid("If you liked Amélie, try something French.", said) is None
    assert chat_quality.claims_unsaid("Hi there, I'm Helper. Happy Sunday!", said, ["Helper"]) is None
    assert chat_quality.claims_unsaid("A cosy film on a rainy day is a treat.", said) is None
    # a greeting opening a note after a colon names no one
    assert chat_quality.claims_unsaid("Here's a note: Hello, enjoy the film!", said) is None
    assert chat_quality.claims_unsaid("Films are made all over Earth.", said) is None


@pytest.mark.django_db
def test_a_run_replays_a_conversation_and_measures_its_replies(fake_llm):
    conversation = {
        "id": "t1",
        "user_name": "Amara",
        "identity": ["nurse"],
        "sessions": [
            {"turns": [{"say": "Hi, I'm Amara. I have a cat named Biscuit."}, {"say": "Lovely weather."}]},
            {
                "days_after_previous": 3,
                "turns": [
                    {"ask": "What is my cat called?", "expect": ["Biscuit"]},
                    {"ask": "My job?", "expect": ["x"]},
                ],
            },
        ],
    }
    answers = iter(["Noted!", "So sorry for your loss.", "Your cat is Biscuit.", "I'm Amara, a nurse."])

    def answer(request):
        if "response_format" in request:
            return nothing_extracted()
        return reply(next(answers, "You are a nurse."))

    fake_llm.responder = answer
    result = chat_quality.run([conversation], llm=get_llm(), label="fake")
    summary = result.summary()
    assert summary["replies"] == 4 and summary["questions"] == 2
    assert summary["fact recalled"] == 0.5
    assert summary["at_cap"] == 0.0 and summary["looping (a 4-word sequence > 3 times)"] == 0.0
    assert summary["condolences for a loss never spoken of"] == 1  # to "Lovely weather."
    # "I'm Amara, a nurse." was refused by the guard (it claims the user's name) and asked again.
    assert result.records[-1].retried and result.records[-1].text == "You are a nurse."
    assert "fact recalled" in chat_quality.markdown([result])
    # What the conversation left in memory, against the words the person said.
    (memory,) = result.memories
    assert memory.conversation == "t1" and memory.unsupported == 0
