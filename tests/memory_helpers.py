"""Helpers for engine tests: feed turns, script extraction answers."""

import threading
from datetime import datetime, timedelta

import numpy as np
from django.db import connection
from django.utils import timezone

from bench.fake_llm_server import extraction, nothing_extracted  # noqa: F401 (the tests' scripted answers)
from memory_engine.models import Page

CAT_TALK = [
    ("I'm a nurse and I have a cat named Milo.", "Milo is a lovely name for a cat."),
    ("Milo likes to sleep on my nursing scrubs.", "Cats love warm clothes that smell of their owner."),
    ("Milo knocked my coffee off the table this morning.", "Cats do like pushing things off tables."),
]
COOKING_TALK = [
    ("What vegetarian curry could I cook tonight?", "A chickpea and spinach curry is quick."),
    ("I want the curry spicy, with lots of chili.", "Add fresh chili and a pinch of cayenne."),
    ("Should I serve the curry with rice or naan?", "Basmati rice keeps it light; naan for comfort."),
]


def days_ago(days: float) -> datetime:
    return timezone.now() - timedelta(days=days)


def add_turns(memory, turns, *, user="alice", start=None, step_minutes=2, assistant="helper"):
    """Store each (user_input, agent_response) turn, `step_minutes` apart from `start`; the pages stored, as
    rows (the class answers each turn's document: TurnCard)."""
    start = start or days_ago(3)
    stored = []
    for i, (user_input, agent_response) in enumerate(turns):
        turn = memory.add_memory(
            user_id=user,
            assistant_id=assistant,
            user_input=user_input,
            agent_response=agent_response,
            timestamp=start + timedelta(minutes=step_minutes * i),
        )
        stored.append(turn.id)
    pages = Page.objects.in_bulk(stored)
    return [pages[page_id] for page_id in stored]


def write_concurrently(memory, writers, turns_each: int) -> list[Exception]:
    """Each (user, writer) thread stores `turns_each` turns "<user> w<writer> turn <i>" at the same
    time as the others; returns the errors raised."""
    errors = []

    def write(user: str, writer: int) -> None:
        try:
            for i in range(turns_each):
                memory.add_memory(
                    user_id=user, assistant_id="helper", user_input=f"{user} w{writer} turn {i}", agent_response="ok"
                )
        except Exception as exc:  # returned to the test
            errors.append(exc)
        finally:
            connection.close()  # this thread's own connection

    threads = [threading.Thread(target=write, args=w) for w in writers]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


# A context size no other test loads the bundled model with: a weak model's memory built with it shows,
# in a suite that has loaded the model for other tests, whether this test loaded it.
UNLOADED_CONTEXT = 1536


def weak_offline_llm(settings):
    """The bundled model's client, for the server's LLM setting and a MemoryOS alike, with a context of its
    own (see `offline_model_loaded`). Loading it is lazy: a test that never asks it never loads it."""
    from memory_engine.llm.offline import OfflineLLM

    settings.MEMORYOS = {
        **settings.MEMORYOS,
        "LLM_PROVIDER": "offline",
        "LLM_BASE_URL": "",
        "OFFLINE_LLM_CONTEXT": UNLOADED_CONTEXT,
    }
    return OfflineLLM(context=UNLOADED_CONTEXT)


def offline_model_loaded() -> bool:
    """Whether a client from `weak_offline_llm` has loaded the model in this process."""
    from memory_engine.llm import offline

    return any(context == UNLOADED_CONTEXT for _, context, _ in offline._servers)


def told_with_no_key(space, settings, turns, *, start=None):
    """`turns` told to `space` (alice's with helper) and consolidated with no key (the bundled model's
    class: its extraction keeps the person's own sentences), every turn in mid-term memory: returns the
    MemoryOS that answers with that class (a quoted answer never loads it)."""
    from memory_engine.interfaces.memoryos import MemoryOS

    space.stm_capacity, space.heat_threshold = 1, 1.0
    space.save()
    weak = MemoryOS(llm=weak_offline_llm(settings))
    add_turns(weak, turns, start=start or days_ago(3))
    weak.force_mid_term_analysis(user_id=space.user.external_id, assistant_id=space.assistant.external_id)
    return weak


class ScriptedReranker:
    """A reranker's answers given per text, as engine/reranker.py's model would give them: `scores` gives each
    text its likelihood (0 when not given) and keeps what it read, in order."""

    def __init__(self, likelihoods: dict[str, float]) -> None:
        self.likelihoods, self.read = likelihoods, []

    def scores(self, question: str, texts: list[str]) -> np.ndarray:
        self.read.extend(texts)
        return np.array([self.likelihoods.get(text, 0.0) for text in texts])
