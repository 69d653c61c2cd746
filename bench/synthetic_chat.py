"""A synthetic but realistic conversation of any length, for growing a memory space in benchmarks.

One person talks to an assistant about their life: threads of a few turns on one subject (a dish they
cook, their dog, a trip, their sister's wedding...), hours or days apart, with people, places, times and
feelings drawn from varied vocabularies. There are 20 topics of 8 subjects each; a thread's subject is
its topic session, so a space grown from this stream has at most 160 active mid-term sessions (fewer
than the default capacity of 200), each holding every page ever said on its subject, as a long-lived
space whose sessions keep merging would.

Everything is deterministic for a seed and prefix-stable: the first N pages of a longer stream are the
N pages of a shorter one, so a space can grow 1k -> 10k -> 100k and embeddings can be cached by range.
The vocabularies and topics are data (data/synthetic_chat.json), read once at import; no network, no model.
"""

import json
import random
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TOPICS", "SyntheticPage", "synthetic_pages", "synthetic_queries"]

# Bump when the text changes in a way that must invalidate cached embeddings.
GENERATOR_VERSION = 1


DATA = Path(__file__).parent / "data" / "synthetic_chat.json"


@dataclass(frozen=True)
class Topic:
    name: str
    subjects: tuple[str, ...]
    details: tuple[str, ...]  # topic-specific things that happen, in the past tense after "I"
    user: tuple[str, ...]
    assistant: tuple[str, ...]
    questions: tuple[str, ...]


def _load(path: Path) -> tuple[dict[str, tuple[str, ...]], dict[str, tuple[str, ...]], tuple[Topic, ...]]:
    data = json.loads(path.read_text(encoding="utf-8"))
    slots = {name: tuple(words) for name, words in data["vocabularies"].items()}
    generic = {name: tuple(lines) for name, lines in data["generic"].items()}
    topics = tuple(
        Topic(
            topic["name"],
            *(tuple(topic[part]) for part in ("subjects", "details", "user", "assistant", "questions")),
        )
        for topic in data["topics"]
    )
    return slots, generic, topics


# The vocabularies ({name}, {city}, ... in the templates), the lines any topic may use, and the topics.
_SLOTS, _GENERIC, TOPICS = _load(DATA)
GENERIC_USER = _GENERIC["user"]
GENERIC_ASSISTANT = _GENERIC["assistant"]
GENERIC_QUESTIONS = _GENERIC["questions"]
OPEN_QUESTIONS = _GENERIC["open_questions"]
_SLOT_RE = re.compile(r"\{(\w+)\}")


@dataclass(frozen=True)
class SyntheticPage:
    user_input: str
    agent_response: str
    topic: str  # "travel/the Kyoto trip": the session the page belongs to
    thread: int  # thread number; a thread is a run of turns on one subject
    minutes: int  # minutes since the start of the conversation


def _fill(template: str, rng: random.Random, subject: str, topic: Topic, *, sentence: bool = True) -> str:
    """The template with its slots filled: {s} the subject, {d} a detail of the topic, the others drawn
    from the shared vocabularies; a capitalised slot name capitalises its value."""

    def slot(match: re.Match) -> str:
        key = match.group(1)
        lower = key.lower()
        if lower == "s":
            value = subject
        elif lower == "d":
            value = _fill(rng.choice(topic.details), rng, subject, topic, sentence=False)
        else:
            value = rng.choice(_SLOTS[lower])
        return value[0].upper() + value[1:] if key[0].isupper() else value

    text = _SLOT_RE.sub(slot, template)
    return text[0].upper() + text[1:] if sentence else text


def _side(rng: random.Random, topic: Topic, subject: str, specific: tuple[str, ...], generic: tuple[str, ...]) -> str:
    """One to three sentences of one speaker, never the same template twice."""
    sentences, used = [], set()
    for _ in range(rng.choice((1, 1, 2, 2, 3))):
        pool = specific if rng.random() < 0.6 else generic
        template = rng.choice(pool)
        if template not in used:
            used.add(template)
            sentences.append(_fill(template, rng, subject, topic))
    return " ".join(sentences)


def synthetic_pages(seed: int, count: int) -> list[SyntheticPage]:
    """The first `count` pages of the conversation made by `seed`. Pure; prefix-stable in `count`."""
    rng = random.Random(seed)
    pages: list[SyntheticPage] = []
    minutes = 0
    thread = 0
    while len(pages) < count:
        topic = rng.choice(TOPICS)
        subject = rng.choice(topic.subjects)
        # Threads are 35 minutes to 4 hours apart (beyond the 30 minutes within which a turn may continue
        # the one before): 100k pages span about five years.
        minutes += rng.randint(35, 240)
        for _ in range(rng.randint(2, 9)):
            user = _side(rng, topic, subject, topic.user, GENERIC_USER)
            assistant = _side(rng, topic, subject, topic.assistant, GENERIC_ASSISTANT)
            pages.append(SyntheticPage(user, assistant, f"{topic.name}/{subject}", thread, minutes))
            minutes += rng.randint(1, 4)
        thread += 1
    return pages[:count]


def synthetic_queries(seed: int, count: int) -> list[str]:
    """`count` varied questions a user might ask about their own life. Pure."""
    rng = random.Random(seed)
    queries = []
    for _ in range(count):
        topic = rng.choice(TOPICS)
        subject = rng.choice(topic.subjects)
        pool = rng.choice((topic.questions, GENERIC_QUESTIONS, OPEN_QUESTIONS))
        queries.append(_fill(rng.choice(pool), rng, subject, topic))
    return queries
