"""The degeneration guard: tell a reply that has gone wrong while the model is still writing it.

A small model degenerates in a few recognisable ways: it loops ("he was a little cat, and he was a
little cat, ..."), echoes the prompt's scaffolding ("The user's profile: ..."), writes the user's side
of the chat, gives the same canned line to every question, or speaks as the user ("I'm Sam"). The
first three are visible while the answer streams, so generation stops there instead of running to the
token cap; the last two are judged on the finished answer. Every function here is pure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from memory_engine.language.replies import (
    CONDOLENCES,
    FICTION,
    HEADING,
    INNER_NAME,
    LOSS,
    PUNCTUATION,
    ROLE_MARKERS,
    SPEAKER_LABEL,
    TOLD_CLAIM,
    UNIT_LOOP,
    WORD,
    name_claim,
    name_description,
    opens_with_name,
)
from memory_engine.language.text import straight

NGRAM_WORDS = 4
# A 4-word sequence seen a third time is a loop: ordinary replies of a few sentences do not do that.
MAX_NGRAM_REPEATS = 2
# Five words of the prompt's instructions in a row, in a reply, are the prompt recited back.
INSTRUCTION_WORDS = 5


def words(text: str) -> list[str]:
    """The lower-cased words of `text`, apostrophes kept inside words."""
    return WORD.findall(text.lower())


def most_repeated_ngram(text: str, n: int = NGRAM_WORDS) -> tuple[str, int]:
    """The `n`-word sequence that occurs most often in `text`, and how often ("", 0 when none)."""
    tokens = words(text)
    counts = Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))
    if not counts:
        return "", 0
    gram, count = counts.most_common(1)[0]
    return " ".join(gram), count


def loop_problem(text: str) -> str | None:
    """Why `text` is a loop, or None: a 4-word sequence more than twice, or a unit repeated 8 times."""
    gram, count = most_repeated_ngram(text)
    if count > MAX_NGRAM_REPEATS:
        return f"repeats {gram!r} {count} times"
    match = UNIT_LOOP.search(text)
    if match and match.group(1).strip():
        return f"repeats {match.group(1)[:20]!r} {len(match.group(0)) // len(match.group(1))} times in a row"
    return None


def _normal(text: str) -> str:
    return " ".join(PUNCTUATION.sub(" ", text.lower()).split())


class ReplyGuard:
    """Judges one chat reply.

    `scaffolding`: labels of the prompt (section titles) that a reply must not echo. `instructions`: the
    prompt's instructions; a reply holding INSTRUCTION_WORDS of them in a row recites the prompt.
    `earlier_replies`: the assistant's recent replies to other messages; giving one of them again, word
    for word, is the canned-line failure. `user_names`: names of the user; the reply must not claim one
    as its own ("I'm Sam"). With `strict_names` (a weak model's guard) it may neither describe the user by
    one ("Sam is a wonderful person", "Sam - a friendly nurse"), which a small model does when it reads its
    notes as a character sheet, nor open with one ("Sofia! Welcome to my kitchen"; "Sofia, welcome back"
    speaks to her and passes), nor open like a line of a transcript ("Mike Brennan: Hey!").

    `heard`, for a weak model's small talk (`strict_names`; it was given no memory): what the person said
    that the reply's retrieval found (their message last). The reply may not offer condolences when none of
    it speaks of a loss, say it was told something, or name anyone or anything (a capitalised word inside a
    sentence) that is not in it, in `plain_words` (capitalised words that name no one: days, languages,
    greetings) or the assistant's name.
    """

    def __init__(
        self,
        *,
        scaffolding: Iterable[str] = (),
        instructions: str = "",
        earlier_replies: Iterable[str] = (),
        user_names: Iterable[str] = (),
        strict_names: bool = False,
        heard: Iterable[str] | None = None,
        plain_words: Iterable[str] = (),
    ) -> None:
        self.scaffolding = [label.strip() for label in scaffolding if len(label.strip()) >= 8]
        told = words(instructions)
        self._instruction_grams = {
            tuple(told[i : i + INSTRUCTION_WORDS]) for i in range(len(told) - INSTRUCTION_WORDS + 1)
        }
        self.earlier_replies = {_normal(reply) for reply in earlier_replies if _normal(reply)}
        self._user_names = tuple(user_names)
        self._strict = strict_names
        heard = None if heard is None or not strict_names else [" ".join(line.split()) for line in heard]
        self._small_talk = heard is not None
        self._loss_spoken = heard is not None and any(LOSS.search(line) for line in heard)
        said = set(words(straight(" ".join(heard or ()))))
        said |= {word.removesuffix("'s") for word in said}  # "anna's" names Anna
        self._heard = said | {word.lower() for word in plain_words}
        self._fiction = heard is not None and bool(heard) and bool(FICTION.search(heard[-1]))

    def streaming_problem(self, text: str) -> str | None:
        """Why the partial reply `text` has already gone wrong (a loop, the prompt or the user's turn
        echoed), or None. Cheap enough to call after every streamed token."""
        problem = loop_problem(text)
        if problem:
            return problem
        marker = ROLE_MARKERS.search(text)
        if marker:
            return f"writes a chat role marker {marker.group(0).strip()!r}"
        lowered = text.lower()
        for label in self.scaffolding:
            if label.lower() in lowered:
                return f"echoes the prompt's {label!r}"
        if self._instruction_grams:
            said = words(text)
            for i in range(len(said) - INSTRUCTION_WORDS + 1):
                if tuple(said[i : i + INSTRUCTION_WORDS]) in self._instruction_grams:
                    return f"recites the prompt's instructions ({' '.join(said[i : i + INSTRUCTION_WORDS])!r})"
        if self._strict and opens_with_name(text, self._user_names):
            return "opens with the user's name"
        label = SPEAKER_LABEL.match(text) if self._strict else None
        if label:
            return f"opens with a speaker's label {label.group(0).strip()!r}"
        if self._strict:
            described = name_description(straight(text), self._user_names)
            if described:
                return f"describes the user ({described.strip()!r})"
        return self._made_up(text) if self._small_talk else None

    def _made_up(self, text: str) -> str | None:
        """What a weak model's small talk says of the person or the world that it cannot know, or None."""
        if not self._loss_spoken:
            condolences = CONDOLENCES.search(text)
            if condolences:
                return f"offers condolences for a loss no one spoke of ({condolences.group(0)!r})"
        told = TOLD_CLAIM.search(straight(text))
        if told:
            return f"says it was told something ({told.group(0)!r})"
        if self._fiction:
            return None
        for name in INNER_NAME.findall(HEADING.sub(" ", text)):
            if not set(words(name)) <= self._heard:  # "Marie-Claire" heard is "marie" and "claire"
                return f"names {name!r}, which no one said"
        return None

    def problem(self, text: str) -> str | None:
        """Why the finished reply `text` is degenerate, or None."""
        problem = self.streaming_problem(text)
        if problem:
            return problem
        claim = name_claim(straight(text), self._user_names)
        if claim:
            return f"speaks as the user ({claim!r})"
        if _normal(text) in self.earlier_replies:
            return "gives word for word a reply it gave to another message"
        return None
