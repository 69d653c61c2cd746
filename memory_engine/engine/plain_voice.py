"""The memory's own plain voice: what a weak model's turn gets when it is not a question about the person,
instead of the bundled 135M model's free text (setting MEMORYOS_OFFLINE_VOICE, "plain" by default).

Given no memory, the small model still invented: a drug name and a maker for a sertraline refill, a diagnosis
never mentioned, condolences for a family no one spoke of, "Awesome!" to "I'm so tired today". No guard catches
every such sentence, so by default its words are not used at all, and the reply is built here from the
message and the memory alone; it states nothing nobody said, by construction:
- a greeting, thanks or goodbye gets a line of the same;
- a request for something written, for advice or for knowledge gets that a model is needed for it and where to
  choose one, and what the memory holds for it: the person's statements recall ranks for the message (engine/
  recall.py `related`), quoted with their days;
- anything else told gets "Noted.", with what it told said back in the second person when it is short and
  tells something ("Noted: your beagle is called Biscuit."), or a plain acknowledgement when it tells nothing
  to keep ("I'm so tired today": "I hear you.").

Everything here is pure apart from recall's scoring, which reads nothing new (the reply's retrieval).
"""

from collections.abc import Callable
from datetime import datetime

from memory_engine.engine.recall import Statement, when_said
from memory_engine.language import small_talk
from memory_engine.language.intent import ADVICE_ABOUT_THEIRS, ASKS_ADVICE, decide
from memory_engine.language.keywords import content_tokens
from memory_engine.language.reading import (
    is_statement,
    opens_as_imperative,
    plain,
    questions,
    second_person,
    split_sentences,
    tells_what_to_remind,
)

PLAIN, MODEL = "plain", "model"
NEEDS_MODEL = (
    "Writing that, advice or knowledge needs a language model, and none is set up: choose one under "
    "\u201cModel\u201d on the chat page (or set MEMORYOS_LLM_BASE_URL)."
)
GREETING = "Hello! Tell me anything you'd like me to remember, or ask me about it later."
THANKS = "You're welcome!"
GOODBYE = "Bye for now!"
HEARD = "I hear you."
ECHO_MAX_CHARS = 140  # a sentence this short is said back ("Noted: ..."); a longer one is only noted
ECHO_MIN_WORDS = 3  # content words a sentence needs to be worth saying back


def reply(
    message: str, related: Callable[[], tuple[Statement, ...]], now: datetime
) -> tuple[str, tuple[Statement, ...]]:
    """The plain voice's reply to `message`, and the statements it quotes. `related` gives what the memory holds
    for the message (recall.related); it is asked only by a reply that needs it. Pure apart from `related`."""
    text = plain(message)
    sentences = split_sentences(text)
    first = sentences[0] if sentences else text
    if questions(text) or _asks_for_something(text) or decide(message).name in (ASKS_ADVICE, ADVICE_ABOUT_THEIRS):
        held = related()
        return _with_memory(NEEDS_MODEL, held, now), held
    if small_talk.THANKS.search(text):
        return THANKS, ()
    if small_talk.GOODBYE.search(text):
        return GOODBYE, ()
    if small_talk.GREETING.match(first) and len(content_tokens(text)) <= 2:
        return GREETING, ()
    told = [s for s in split_sentences(message) if is_statement(plain(s)) and _tells(s)]
    if not told:
        return HEARD, ()
    said = plain(told[0])
    if len(told[0]) <= ECHO_MAX_CHARS and small_talk.SAID_BACK.match(said) and not small_talk.ASKING.search(said):
        return f"Noted: {second_person(told[0]).rstrip('.!')}.", ()
    return "Noted.", ()


def _tells(sentence: str) -> bool:
    return len(set(content_tokens(sentence))) >= ECHO_MIN_WORDS


def _asks_for_something(text: str) -> bool:
    """A request in the imperative ("write a note to my vet", "plan a trip", "escríbeme un mensajito"), which
    needs a writer; not "remind me my X is Y", which tells."""
    return any(opens_as_imperative(s) and not tells_what_to_remind(s) for s in split_sentences(text))


def _with_memory(line: str, related: tuple[Statement, ...], now: datetime) -> str:
    if not related:
        return line
    kept = "; ".join(f"\u201c{s.quote}\u201d ({when_said(s.said_at, now)})" for s in related)
    return f"{line} What I remember for it, in your words: {kept}."
