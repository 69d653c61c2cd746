"""The degeneration guard: tell a reply that has gone wrong while the model is still writing it.

A small model degenerates in a few recognisable ways: it loops ("he was a little cat, and he was a
little cat, ..."), echoes the prompt's scaffolding ("The user's profile: ..."), writes the user's side
of the chat, gives the same canned line to every question, or speaks as the user ("I'm Sam"). The
first three are visible while the answer streams, so generation stops there instead of running to the
token cap; the last two are judged on the finished answer. Every function here is pure.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from memory_engine.language.text import straight

NGRAM_WORDS = 4
# A 4-word sequence seen a third time is a loop: ordinary replies of a few sentences do not do that.
MAX_NGRAM_REPEATS = 2
# The same short unit ("ha", "!", "\n", "lol ") written this many times in a row is a loop too.
MAX_UNIT_REPEATS = 8

_WORD = re.compile(r"[^\W_]+(?:'[^\W_]+)?")
_UNIT_LOOP = re.compile(r"(.{1,30}?)\1{" + str(MAX_UNIT_REPEATS - 1) + ",}", re.DOTALL)
# Chat-template tokens and a line that opens the user's (or a human's) turn: the model has left its
# own role. Matched anywhere, in any model's reply.
_ROLE_MARKERS = re.compile(
    r"<\|im_(?:start|end)\|>|<(?:start|end)_of_turn>|<\|(?:user|assistant|system)\|>|^[ \t]*(?:user|human)[ \t]*:",
    re.IGNORECASE | re.MULTILINE,
)
_PUNCTUATION = re.compile(r"[^\w\s']+")
# "Mike Brennan: Hey! ...", "Alaadin: Fetu l'enso", "A: 15 minutes": a reply that opens like a line of a
# transcript is writing one.
_SPEAKER_LABEL = re.compile(r"\W*[A-Z][\w'\-]*(?:\s[A-Z][\w'\-]*){0,2}:\s")
# Five words of the prompt's instructions in a row, in a reply, are the prompt recited back.
INSTRUCTION_WORDS = 5
# What follows a name when the reply describes that person rather than talking to them.
_DESCRIBING = (
    r"\s+(?:is|was|has|had|loves|likes|lives|works|enjoys|seems|sounds|describes|became|remains|"
    r"(?:[A-Z][a-z]+\s+)?(?:is|was|has))\b"
)


# A weak model's small talk is given no memory (engine/generator.py), so what it says of the person is made
# up: condolences for a loss no one spoke of ("I'm sorry for your loss" to a sister's visit), having been
# told something ("as you mentioned"), or a name no one said ("a film by Tomas Verhoeven").
_CONDOLENCES = re.compile(
    r"\b(?:sorry (?:for|about) (?:your|the|their|his|her) loss|condolences?|sympathy|sympathies|passed away|"
    r"passing of|rest in peace|thoughts and prayers|my thoughts are with|difficult times?|grieving|grief)\b",
    re.IGNORECASE,
)
_LOSS = re.compile(
    r"\b(?:died|dies|dying|dead|death|passed away|passed on|passing|funeral|loss|lost (?:my|our|her|his|their)|"
    r"grief|grieving|rip|memorial|buried|put down|put to sleep|hospice|widow|widowed|miscarriage)\b",
    re.IGNORECASE,
)
_TOLD_CLAIM = re.compile(
    r"\b(?:you(?:'ve| have)? (?:told|mentioned|said)|as you (?:said|mentioned|told)|you (?:once )?told me|"
    r"(?:last time|earlier) you)\b",
    re.IGNORECASE,
)
# A capitalised word inside a sentence, once it is whole (a character after it): a name. Not in a heading (a
# list's "**Keep Track**") nor in a story, a joke or a poem asked for, whose names are made up by request.
# A capitalised word inside a sentence (after a word, a comma or a semicolon), or opening a bracket there: "a
# film by Tomas Verhoeven", "the lead (Marguerite) is wonderful". Not in quotes: 'say "Thank you"'. A capital
# inside it ("WhatsApp", "SaaS") or a hyphen joining two ("Teco-Caman") keeps it one name, and one before a
# hyphen and a word ("a Michelin-starred place") is one too; capitals alone ("TV") are none.
_NAME_PART = r"[A-Z][^\W\d_A-Z]+(?:[A-Z][^\W\d_A-Z]*)*"
_INNER_NAME = re.compile(
    rf"(?:(?<=[a-z,;] )|(?<=[a-z,;] \())({_NAME_PART}(?:-{_NAME_PART})*)(?=[^\w'\u2019-]|['\u2019]s\b|-[a-z])"
)
_HEADING = re.compile(r"\*\*[^*\n]*\*\*|^#+ .*$|^\s*(?:\d+[.)]|[-*\u2022])\s*[^:\n]{0,60}:", re.MULTILINE)
_FICTION = re.compile(r"\b(?:story|stories|joke|jokes|poem|poems|limerick|song|tale|riddle|pun|haiku|rhyme)\b", re.I)


def words(text: str) -> list[str]:
    """The lower-cased words of `text`, apostrophes kept inside words."""
    return _WORD.findall(text.lower())


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
    match = _UNIT_LOOP.search(text)
    if match and match.group(1).strip():
        return f"repeats {match.group(1)[:20]!r} {len(match.group(0)) // len(match.group(1))} times in a row"
    return None


def _normal(text: str) -> str:
    return " ".join(_PUNCTUATION.sub(" ", text.lower()).split())


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
        names = [re.escape(name.strip()) for name in user_names if name and len(name.strip()) >= 2]
        alternatives = "|".join(sorted(names, key=len, reverse=True))
        self._claims_name = (
            re.compile(r"\b(?:i'm|i am|im|my name is|my name's|call me)\s+(?:" + alternatives + r")\b", re.I)
            if names
            else None
        )
        self._strict = strict_names
        heard = None if heard is None or not strict_names else [" ".join(line.split()) for line in heard]
        self._small_talk = heard is not None
        self._loss_spoken = heard is not None and any(_LOSS.search(line) for line in heard)
        said = set(words(straight(" ".join(heard or ()))))
        said |= {word.removesuffix("'s") for word in said}  # "anna's" names Anna
        self._heard = said | {word.lower() for word in plain_words}
        self._fiction = heard is not None and bool(heard) and bool(_FICTION.search(heard[-1]))
        self._opens_with_name = (
            re.compile(r"\W*(?:" + alternatives + r")\b(?!,)", re.I) if names and strict_names else None
        )
        self._describes_user = (
            re.compile(
                r"\b(?:" + alternatives + r")(?:'s\b|,\s+(?:a|an|the)\s|\s*(?:[-\u2013\u2014:(]|" + _DESCRIBING + r"))",
                re.I,
            )
            if names and strict_names
            else None
        )

    def streaming_problem(self, text: str) -> str | None:
        """Why the partial reply `text` has already gone wrong (a loop, the prompt or the user's turn
        echoed), or None. Cheap enough to call after every streamed token."""
        problem = loop_problem(text)
        if problem:
            return problem
        marker = _ROLE_MARKERS.search(text)
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
        if self._opens_with_name is not None and self._opens_with_name.match(text):
            return "opens with the user's name"
        label = _SPEAKER_LABEL.match(text) if self._strict else None
        if label:
            return f"opens with a speaker's label {label.group(0).strip()!r}"
        if self._describes_user is not None:
            described = self._describes_user.search(straight(text))
            if described:
                return f"describes the user ({described.group(0).strip()!r})"
        return self._made_up(text) if self._small_talk else None

    def _made_up(self, text: str) -> str | None:
        """What a weak model's small talk says of the person or the world that it cannot know, or None."""
        if not self._loss_spoken:
            condolences = _CONDOLENCES.search(text)
            if condolences:
                return f"offers condolences for a loss no one spoke of ({condolences.group(0)!r})"
        told = _TOLD_CLAIM.search(straight(text))
        if told:
            return f"says it was told something ({told.group(0)!r})"
        if self._fiction:
            return None
        for name in _INNER_NAME.findall(_HEADING.sub(" ", text)):
            if not set(words(name)) <= self._heard:  # "Marie-Claire" heard is "marie" and "claire"
                return f"names {name!r}, which no one said"
        return None

    def problem(self, text: str) -> str | None:
        """Why the finished reply `text` is degenerate, or None."""
        problem = self.streaming_problem(text)
        if problem:
            return problem
        if self._claims_name is not None:
            claim = self._claims_name.search(straight(text))
            if claim:
                return f"speaks as the user ({claim.group(0)!r})"
        if _normal(text) in self.earlier_replies:
            return "gives word for word a reply it gave to another message"
        return None
