"""A sentence's clauses and where a statement stands in the words said: the joints between clauses, a phrase
that opens one, what is left dangling or empty once a statement is taken out, and where a sentence or a value
is in a turn's words. Curation (engine/statement_marks.py) reads turns through these when it forgets or corrects a
statement, and erasure and recall find statements with `span`. Everything here is pure.
"""

import re

from memory_engine.language import word_lists
from memory_engine.language.rules import rule

__all__ = [
    "CLAUSE_END",
    "DANGLING",
    "EMPTY_QUOTE",
    "ENDS_ON_WORD_CHARACTER",
    "JOINED_WORDS",
    "OPENING_PHRASE",
    "RUN_OF_SPACES",
    "WORD_CHARACTER",
    "loose_span",
    "span",
]


# --- What taking a statement out leaves (read on the turn's words as written) -----------------------------

# "I'm a nurse and." after its last clause went: the joint before the end goes, the end stays (group 1).
DANGLING = rule(
    r"(?:,|;|\s+(?:and|but|so))\s*([.!?]|$)",
    re.IGNORECASE,
    finds=("I'm a nurse and.", "I have a cat named Milo, .", "We moved to Porto but"),
    misses=("I'm a nurse and I have a cat named Milo.", "I play bass in a band."),
)
# A reply that quoted only what was forgotten.
EMPTY_QUOTE = rule(
    r"\u201c\s*\u201d|\"\s*\"",
    finds=("You told me your code is \u201c \u201d.", 'You said "" about the vet.'),
    misses=("You told me your cat is called \u201cMilo\u201d.",),
)
RUN_OF_SPACES = rule(
    r"[ \t]{2,}",
    finds=("I'm a nurse  I have a cat named Milo.", "My code is\t\t4471."),
    misses=("I'm a nurse. I have a cat named Milo.",),
)


# --- A sentence's clauses (read on the sentence as written) ---------------------------------------------

# The comma, semicolon or "and" that joins a clause to the next.
CLAUSE_END = rule(
    r"(?:,|;|\s+(?:and|but|so)\b)\s+",
    re.IGNORECASE,
    finds=(
        "I'm a nurse and I have a cat named Milo.",
        "For the VPN from home, IT gave me a token.",
        "I was tired; I went to bed.",
    ),
    misses=("I have a cat named Milo.", "I grew up in Andover.", "I'm a nurse and."),
)
# A clause that is only words joined by "and" ("Tom and", of "Tom and Ann are 5"; "Between you and", of "Between
# you and me I let his tyre down"), which the next clause finishes; not one whose subject is a pronoun ("She
# and", of "She and I went to Rome"). Read with fullmatch on a clause.
JOINED_WORDS = rule(
    r"(?:between you|(?!(?:i|we|he|she|they|it|you)\b)[^\s',]+)\s+and",
    re.IGNORECASE,
    finds=("Tom and", "Between you and", "Milo and"),
    misses=("She and", "I and", "my sister and"),
    whole=True,
)
# A phrase that opens a clause ("For the VPN from home,", "But after the move,"), which goes with the clause it
# opens.
OPENING_PHRASE = rule(
    rf"(?:(?:and|but|so)\s+)?(?:{'|'.join(word_lists.OPENING_WORDS)})\b[^,;]*,",
    re.IGNORECASE,
    finds=("For the VPN from home,", "But after the move,", "Because of the strike,"),
    misses=("I moved to Berlin,", "For the VPN from home"),
    whole=True,
)


# --- Where a statement is in the words said --------------------------------------------------------------

# A sentence whose first word opens on a word character (read with match), or whose last ends on one, is not
# found where that word is only part of a longer one.
WORD_CHARACTER = rule(r"\w", finds=("Berlin", "4471"), misses=("\u2014", "..."))
ENDS_ON_WORD_CHARACTER = rule(r"\w$", finds=("Milo", "4471"), misses=("Milo.", "\u201cMilo\u201d"))


def span(sentence: str, text: str) -> re.Match | None:
    """Where `sentence` (whitespace collapsed, as split_sentences gives it) is in `text`, however it was
    spaced, and never inside a word ("e" is not in "Berlin")."""
    words = sentence.split()
    if not words:
        return None
    pattern = r"\s+".join(map(re.escape, words))
    if WORD_CHARACTER.match(words[0]):
        pattern = r"(?<!\w)" + pattern
    if ENDS_ON_WORD_CHARACTER.search(words[-1]):
        pattern += r"(?!\w)"
    return re.search(pattern, text)


def loose_span(phrase: str, text: str) -> re.Match | None:
    """Where `phrase` is in `text` exactly as typed, in any case and even inside a word ("nurse" in
    "Nurses"): what an edit's old value is found by where `span` finds nothing."""
    return re.search(re.escape(phrase), text, re.IGNORECASE)
