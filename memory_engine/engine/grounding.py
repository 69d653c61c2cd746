"""Grounding: whether a value is in the words it came from.

Nothing an LLM extracts is stored unless its content words are in the turn it cites (long_term.
validate_extraction), and a forget or an edit finds the statements an entry was drawn from by the same
measure (curation.py). Pure.
"""

from memory_engine.language.keywords import content_tokens
from memory_engine.language.values import CHANGED, MOVED, SET_ASIDE, TIME_DATE_OR_COUNT, WORD_OR_FIGURE, last_clause
from memory_engine.language.word_lists import DATE_WORDS

GROUNDING_MIN = 0.6  # share of a value's content words that must appear in its source
# Words an extraction uses for the speakers, not what was said: "The user is a radiology nurse".
SPEAKER_WORDS = frozenset(content_tokens("user assistant person speaker"))


def grounding(value: str, source_text: str, *, ignore: frozenset[str] = frozenset()) -> float:
    """Share of the value's content words (but those in `ignore`) found in the source text (0.0 when it has
    none)."""
    words = set(content_tokens(value)) - ignore
    if not words:
        return 0.0
    return len(words & set(content_tokens(source_text))) / len(words)


def states(value: str, sentence: str) -> bool:
    """Whether `sentence` states `value`: it holds GROUNDING_MIN of the value's content words, the words for
    the speakers left out."""
    return grounding(value, sentence, ignore=SPEAKER_WORDS) >= GROUNDING_MIN


def changes(earlier: str, later: str) -> bool:
    """Whether `later` says that what `earlier` told changed: it says so (CHANGED) and gives a time, a date or
    a number that `earlier` does not ("standup is at 9:30", then "standup moved to 9:15"). Whether the two
    are about the same thing is the caller's to know (their vectors). Pure."""
    if not CHANGED.search(later.lower()):
        return False
    return bool(set(TIME_DATE_OR_COUNT.findall(later.lower())) - set(TIME_DATE_OR_COUNT.findall(earlier.lower())))


def tells_a_change(sentence: str) -> bool:
    """Whether `sentence` tells that a time, a date or a number changed, first person or not ("standup moved
    to 9:15 from Monday"): worth keeping as the person's words, since it replaces what they told. Pure."""
    lowered = sentence.lower()
    return bool(MOVED.search(lowered) and TIME_DATE_OR_COUNT.search(lowered))


_DATE_WORDS = frozenset(DATE_WORDS)
# Words between a negation and what it sets aside: "not on Saturday", "nicht am Samstag", "not the 12th".
_LINKS = frozenset(("the", "a", "an", "on", "at", "in", "to", "for", "am", "um", "im", "der", "die", "das", "den",
                    "le", "la", "les", "el", "los", "las", "o", "os", "as", "il", "lo", "het", "de"))  # fmt: skip


_HOW_OFTEN = frozenset(("once", "twice", "thrice"))


def _named_values(sentence: str) -> set[str]:
    """The words of `sentence` that name or count something (lower-cased): a capitalised word after its first,
    a word with a digit, a day or a month, how often ("once a day")."""
    words = WORD_OR_FIGURE.findall(sentence)
    return {
        word.lower()
        for place, word in enumerate(words)
        if (place and word[0].isupper() and word != "I")
        or any(c.isdigit() for c in word)
        or word.lower() in _DATE_WORDS
        or word.lower() in _HOW_OFTEN
    }


def sets_aside(earlier: str, later: str) -> bool:
    """Whether `later` sets aside a value `earlier` gave: right after a negation in `later` (and an article or a
    preposition) comes a word of `earlier` that names or counts something ("I booked Hotel Sakuraya", then
    "the hotel is Hotel Hanabusa, not Hotel Sakuraya"; "Luca's birthday is 8 August, not 3"; not "I'm not sure
    the hotel has parking"). Whether the two are about the same thing is the caller's to know. Pure."""
    values = _named_values(earlier)
    for found in SET_ASIDE.finditer(later):
        words = [word.lower() for word in WORD_OR_FIGURE.findall(found.group(1))]
        first = next((word for word in words if word not in _LINKS), "")
        if first in values:
            return True
    return False


def corrected_value(earlier: str, later: str) -> str:
    """The value of `earlier` that `later` corrects in so many words, "<new>, not <old>": a value of the same kind
    (a figure or a name) `earlier` does not hold, at most CORRECTION_REACH words before a negation that sets aside
    one it does ("twice a day, not once", "c'est l'apt 8 pas 6", "the hotel is Hotel Hanabusa, not Hotel
    Sakuraya"); not a negation alone ("no Biscuit, get off the sofa", "not once has she asked"). The old value,
    lower-cased, or "". Pure."""
    values = _named_values(earlier)
    for found in SET_ASIDE.finditer(later):
        words = [word.lower() for word in WORD_OR_FIGURE.findall(found.group(1))]
        old = next((word for word in words if word not in _LINKS), "")
        if old not in values:
            continue
        clause = last_clause(later[: found.start()])
        before = WORD_OR_FIGURE.findall(clause)[-CORRECTION_REACH:]
        new = _named_values(" ".join(["x", *before])) - values  # "x": a capitalised first word is a name here
        if any(is_figure(value) == is_figure(old) for value in new):
            return old
    return ""


CORRECTION_REACH = 4  # words between the new value and the negation: "Hotel Hanabusa, not", "8 pas"


def is_figure(value: str) -> bool:
    """Whether a value counts or dates ("once", "6", "saturday") rather than names ("sakuraya")."""
    return any(c.isdigit() for c in value) or value in _DATE_WORDS or value in _HOW_OFTEN
