"""The inspector (services/conversation.py) through the Python class: the prompt it shows is the one the
generator would send, for a capable model and for a weak one. The REST door is tested in test_api.py."""

from datetime import timedelta

from django.utils import timezone

from memory_engine.engine.generator import build_prompt
from memory_engine.interfaces.memoryos import MemoryOS
from memory_engine.llm.offline import OfflineLLM
from memory_engine.models import Page
from tests.memory_helpers import CAT_TALK, add_turns, nothing_extracted


def test_the_prompt_shown_is_the_generators_and_a_weak_model_is_shown_its_compact_prompt(memory, alice_space, fake_llm):
    fake_llm.responder = nothing_extracted
    add_turns(memory, CAT_TALK, start=timezone.now() - timedelta(minutes=10))  # the conversation in progress
    pages = Page.objects.count()
    query = "What is my cat called?"

    seen = memory.inspect(user_id="alice", assistant_id="helper", query=query)
    assert not seen.compact
    assert seen.messages == build_prompt(alice_space, seen.retrieval, compact=False).messages
    assert [m["role"] for m in seen.messages][-3:] == ["user", "assistant", "user"]  # the recent turns as chat

    weak = MemoryOS(llm=OfflineLLM()).inspect(user_id="alice", assistant_id="helper", query=query)
    assert weak.compact
    assert weak.messages == build_prompt(alice_space, weak.retrieval, compact=True).messages
    assert [m["role"] for m in weak.messages] == ["system", "user"]  # no memory for a weak model to recite
    assert [p.name for p in weak.parts] == ["instructions", "the message"]
    # ... because it is not asked about the user: the reply would quote what they said.
    assert weak.quoted is not None and "Milo" in weak.quoted.text
    assert weak.as_dict()["answer_from_memory"]["quoted"][0]["text"] in {text for text, _ in CAT_TALK}
    assert seen.as_dict()["answer_from_memory"] is None
    assert Page.objects.count() == pages  # nothing stored; the offline model was never loaded or called
