"""The memory's plain voice (engine/plain_voice.py): with no key, a turn that is not a question about the
person gets lines that state nothing nobody said, and what the memory holds for a request; the bundled model
is never loaded for it. MEMORYOS_OFFLINE_VOICE="model" gives the model's words back."""

import pytest
from django.utils import timezone

from bench import chat_quality
from memory_engine.engine import plain_voice
from memory_engine.interfaces.memoryos import MemoryOS
from memory_engine.models import Page
from tests.memory_helpers import days_ago, offline_model_loaded, weak_offline_llm

TOLD = [
    ("I take sertraline 50 mg every morning.", ""),
    ("My beagle Biscuit needs walks before my night shifts.", ""),
]


def _told_with_no_key(settings) -> MemoryOS:
    """Alice's space with TOLD said two days ago, and the door with no key."""
    weak = MemoryOS(llm=weak_offline_llm(settings))
    start = days_ago(2)
    for number, (said, _) in enumerate(TOLD):
        weak.get_response(user_id="alice", assistant_id="helper", query=said, timestamp=start.replace(minute=number))
    return weak


@pytest.mark.parametrize(
    ("message", "reply"),
    [
        ("Hi!", plain_voice.GREETING),
        ("thanks so much!", plain_voice.THANKS),
        ("I'm so tired today", plain_voice.HEARD),
        ("ok bye", plain_voice.GOODBYE),
        (
            "My beagle Biscuit needs walks before my night shifts.",
            "Noted: your beagle Biscuit needs walks before your night shifts.",
        ),
        ("Biscuit is my beagle, he's three.", "Noted."),  # said back only when it opens with I, my, we
        ("Any plans for the weekend?", plain_voice.NEEDS_MODEL),
        ("write a note to my vet", plain_voice.NEEDS_MODEL),
        # a question without a question mark is no statement to hear ("I hear you." it got), nor a request in the
        # imperative one to note ("Noted." it got)
        ("which aws region is checkout deployed in", plain_voice.NEEDS_MODEL),
        ("Redo the tile calc with the right area", plain_voice.NEEDS_MODEL),
        ("Recuérdame la fecha de la entrevista para ponerla en el calendario", plain_voice.NEEDS_MODEL),
        ("oh and remind me my fishing buddy lyle's birthday is june 18th", "Noted."),
        ("sort of nervous about my interview tomorrow", "Noted."),
        ("check if my flight is delayed", plain_voice.NEEDS_MODEL),
    ],
)
def test_each_kind_of_message_gets_its_plain_line(message, reply):
    assert plain_voice.reply(message, lambda: (), timezone.now())[0] == reply


def test_no_key_replies_state_nothing_nobody_said_and_a_request_gets_what_the_memory_holds(
    memory, alice_space, settings
):
    weak = _told_with_no_key(settings)
    asked = [
        "I need a sertraline refill, can you write the note to my GP?",
        "I'm so tired today",
        "Any plans for the weekend?",
    ]
    replies = [weak.get_response(user_id="alice", assistant_id="helper", query=message) for message in asked]
    said = [s for s, _ in TOLD] + asked
    for response in replies:
        assert response.source == Page.ReplySource.PLAIN
        assert chat_quality.claims_unsaid(response.text, said, ["Helper"]) is None, response.text
        assert not chat_quality.offers_condolences(response.text, said), response.text
        assert all(statement.text in said for statement in response.quoted)
    assert "sertraline 50 mg" in replies[0].text and plain_voice.NEEDS_MODEL in replies[0].text
    assert [s.text for s in replies[0].quoted] == [TOLD[0][0]]
    stored = Page.objects.get(pk=replies[0].page.pk)
    assert stored.reply_source == "plain" and stored.memory_reply == ""  # its words are not memory
    assert not offline_model_loaded()  # the small model was never asked


def test_a_question_in_another_language_about_theirs_that_nothing_answers_is_not_told_not_left_to_a_model(
    memory, alice_space, settings
):
    # Written by people who never saw the rules (issue 64's sets a and b): they got "a language model is needed" and
    # whatever was near, though a model knows nothing of their flat either.
    weak = _told_with_no_key(settings)
    flat = weak.get_response(user_id="alice", assistant_id="helper", query="Wie viele Zimmer hat meine neue Wohnung?")
    assert chat_quality.says_not_told(flat.text) and plain_voice.NEEDS_MODEL not in flat.text, flat.text
    assert flat.quoted == ()
    world = weak.get_response(user_id="alice", assistant_id="helper", query="Qual é a capital de Portugal?")
    assert plain_voice.NEEDS_MODEL in world.text
    assert not offline_model_loaded()


def test_the_model_voice_gives_the_small_models_words_back(memory, alice_space, settings):
    from memory_engine.llm.offline import OfflineLLM

    settings.MEMORYOS = {**settings.MEMORYOS, "OFFLINE_VOICE": "model"}
    # Loaded with a context of its own: other tests look for weak_offline_llm's to tell it was never loaded.
    weak = MemoryOS(llm=OfflineLLM(context=2048))
    response = weak.get_response(user_id="alice", assistant_id="helper", query="I'm so tired today")
    assert response.source == Page.ReplySource.WEAK_MODEL and response.completion_tokens > 0
