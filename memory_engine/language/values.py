"""Values in what was said: numbers, dates, clock times, years, counts of time, a figure's shape, and the words
that say a value changed or set one aside. Used by engine/recall.py (what kind of answer a statement holds,
whether a later statement replaces a figure) and engine/grounding.py (whether a later statement changes or
corrects an earlier one).
"""

import re

from memory_engine.language.rules import rule
from memory_engine.language.word_lists import (
    CORRECTION_WORDS,
    MONTHS,
    MOVED_WORDS,
    NEGATIONS,
    NUMBER_WORDS,
    TIME_WORDS,
    WEEKDAYS,
    alternation,
)

__all__ = [
    "A_NUMBER",
    "CHANGED",
    "CLAUSE_BREAK",
    "COUNTS_TIME",
    "DATE_LIKE",
    "HOLDS_A_CLOCK_TIME",
    "HOLDS_A_DATE",
    "HOLDS_A_NUMBER",
    "HOLDS_A_YEAR",
    "HYPHENATED_WORD",
    "MOVED",
    "NOW_ANOTHER",
    "SET_ASIDE",
    "TIME_DATE_OR_COUNT",
    "VALUE",
    "WEEKDAY",
    "WHEN_WORDS",
    "WORD_OR_FIGURE",
    "distinctive",
    "last_clause",
    "mentions",
    "shape",
]

# --- What kind of answer a statement holds (recall: answer_fit, strict_kind), read in lower case --------

# A date or a time of day, in words or figures.
WHEN_WORDS = rule(
    rf"\b(?:{alternation(MONTHS + TIME_WORDS)}|"
    r"\d{1,2}(?:st|nd|rd|th)|\d{1,2}[:.]\d{2}|\d{1,2}/\d{1,2}|\d{4}|\d{1,2}\s?(?:am|pm)|o'clock)\b",
    finds=("the wedding is on 14 june", "my shift starts at 7pm", "we moved here in 2019"),
    misses=("i paid 350 for the tyres",),
)
# A date, or a day told in the plural ("closed Mondays"): what a statement holds that answers "when".
HOLDS_A_DATE = rule(
    rf"{WHEN_WORDS.pattern}|\b(?:{alternation(WEEKDAYS)})s\b",
    finds=("the bakery is closed mondays", "her birthday is 3 march"),
    misses=("the bakery sells sourdough",),
)
# A number standing as a word: 24, 92k, €24, 60%, 1,200, "two".
HOLDS_A_NUMBER = rule(
    r"(?:[$\u20ac\u00a3]?\b\d+(?:[.,]\d+)*(?:k|m|bn|%)?(?!\w))"  # 24, 92k, \u20ac24, 60%, 1,200
    rf"|\b{alternation(NUMBER_WORDS)}\b",
    finds=("most of our mains are around €24", "we have two kids", "rent went up 5%"),
    misses=("my flat is 4b", "i drive a skoda"),
)
# What gives an age or a count asked for in so many words: a digit anywhere, or a number word.
A_NUMBER = rule(
    rf"\d|\b{alternation(NUMBER_WORDS)}\b",
    finds=("she turned 40 in may", "we have three dogs"),
    misses=("she works at the clinic",),
)
# A year ("in 2009", "'74") or a year of something ("my 2nd year", "year 4").
HOLDS_A_YEAR = rule(
    r"\b(?:1[89]|20)\d{2}\b|'\d{2}\b|\b(?:\d{1,2}(?:st|nd|rd|th)|first|second|third|final|last) year\b"
    r"|\byear \d{1,2}\b|\b\d+ years? ago\b",
    finds=("we met in 2009", "i'm in my 2nd year of nursing", "we moved here 3 years ago"),
    misses=("my pin is 4821", "the flat is 120 square metres"),
)
# A time of day: "at 7pm", "19.30", "8 Uhr", "5 baje", "9h30", "a las 10", "half ten", or a part of the day ("in
# the morning"); not a day alone ("on weds", "the 16th of June").
HOLDS_A_CLOCK_TIME = rule(
    r"\b\d{1,2}(?:[:.h]\d{2}|\s?(?:am|pm|a\.m\.|p\.m\.|uhr|uur|h|hrs|o'clock|baje|heures?|horas?)(?!\w))"
    r"|\b(?:at|a las|alle|às|om|um|o|kl\.?|saat)\s\d{1,2}(?!\d|st|nd|rd|th|%|[.,/]\d)"
    r"|\b(?:half|quarter)\s(?:past\s|to\s)?(?:\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)\b"
    r"|\b(?:noon|midday|midnight|morning|afternoon|evening|tonight|night|o'clock)\b",
    finds=("dinner is at 7pm", "standup is at 9.30", "the train leaves at half ten"),
    misses=("the dentist is on the 16th of june", "the match moved to weds"),
)
# A question counting time ("how many days until ..."), which a date may answer.
COUNTS_TIME = rule(
    r"\b(?:days?|nights?|weeks?|months?|years?|hours?|hrs?|minutes?|mins?|times?|long|often)\b",
    finds=("how many days until my exam?", "how long have we been married?"),
    misses=("how many kids does tom have?",),
)

# --- A figure told again (recall: told_now, keyed_again) ------------------------------------------------

# What says a value is now another: "it's X now", "changed the date", "new name: X" (read in plain text).
NOW_ANOTHER = rule(
    r"\b(?:now|changed|change|new|updated|update|moved|switched|instead|no longer|anymore)\b",
    finds=("they re-ip'd the staging box, it's 10.42.9.40 now", "we changed the date to the 21st"),
    misses=("the staging box is 10.42.8.17",),
)
# A figure, a date's day, an address, a plate: "10.42.9.40", "24th", "vela-stg-03", whole.
VALUE = rule(
    r"(?<![\w.,/:-])[\w.,/:-]*\d[\w.,/:-]*(?<![.,:/-])",
    finds=("The staging box is 10.42.9.40.", "Polo reg is ND 913-205.", "The exam is on the 24th"),
    misses=("My landlord is called Morag.",),
)
# A figure that is a date or a time ("24th", "10:30", "11/05/2025"), read whole (fullmatch).
DATE_LIKE = rule(
    r"\d{1,2}(?:st|nd|rd|th)?|\d{1,2}[:.h]\d{2}|\d{1,2}[/.-]\d{1,2}(?:[/.-]\d{2,4})?",
    finds=("24th", "10:30", "11/05/2025", "9h30"),
    misses=("next week", "2025", "10:30am"),
    whole=True,
)
# A day alone ("moved to Sunday"); a month comes with one.
WEEKDAY = rule(
    rf"\b{alternation(WEEKDAYS)}\b",
    finds=("the match moved to sunday", "we meet on tuesday"),
    misses=("the bakery is closed mondays",),
)
# A word with its apostrophes and hyphens: the words before a figure, which may name what it is.
HYPHENATED_WORD = rule(
    r"[\w'-]+",
    finds=("they re-ip'd the staging box", "Reading ya leo ni 138/88"),
    misses=("...",),
)
_MARK_BETWEEN_DIGITS = rule(
    r"\d[^\w\s]+\d",
    finds=("10.42.8.17", "158/96", "913-205"),
    misses=("2024", "vela"),
)
_DIGIT = rule(r"\d", finds=("24th", "10.42"), misses=("vela-stg",))
_LETTER = rule(r"[^\W\d_]", finds=("vela-stg-03", "ND 482-771"), misses=("10.42.8.17", "158/96"))


def mentions(text: str, value: str) -> bool:
    """Whether `text` holds `value` whole, not inside a longer word or figure ("it's 10.42.9.40 now" holds
    "10.42.9.40", not "10.42.9.4"). Pure."""
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text) is not None


def distinctive(value: str) -> bool:
    """Whether a figure's shape is one few figures have: five characters or more, with a mark between its digits
    ("10.42.8.17", "158/96", "913-205"); not "12", "2024" nor "3.5". Pure."""
    return len(value) >= 5 and _MARK_BETWEEN_DIGITS.search(value) is not None


def shape(value: str) -> str:
    """A value's shape: its digits as 9, its letters as a ("10.42.8.17": "99.99.9.99"). Pure."""
    return _DIGIT.sub("9", _LETTER.sub("a", value))


# --- A value changed or set aside (grounding: changes, tells_a_change, sets_aside, corrected_value) -----

# A statement that says something changed: "update: they postponed the exam to the 21st", "standup at 9:15
# from monday, not 9:30 anymore" (read in lower case).
CHANGED = rule(
    rf"\b(?:{alternation(MOVED_WORDS + CORRECTION_WORDS)}|update|updated|change of plans?|instead|now|no longer|"
    r"not anymore|any ?more|"
    r"renamed|new)\b",
    finds=(
        "update: they postponed the exam to the 21st",
        "standup at 9:15 from monday, not 9:30 anymore",
        "correction: twice a day",
    ),
    misses=("standup is at 9:30 every day",),
)
# The values a change is about: a time, a date, a number, how often ("twice a day, not once").
TIME_DATE_OR_COUNT = rule(
    r"\b\d{1,2}[:.]\d{2}\b|\b\d+(?:st|nd|rd|th)?\b|\b(?:once|twice|thrice|monday|tuesday|wednesday|thursday|friday|"
    r"saturday|sunday|january|february|march|april|may|june|july|august|september|october|november|december)\b",
    finds=("standup moved to 9:15", "take it twice a day", "the exam is on friday"),
    misses=("the exam is in the main hall",),
)
# A word that tells a value moved or was wrong, first person or not (read in lower case).
MOVED = rule(
    rf"\b(?:{alternation(MOVED_WORDS + CORRECTION_WORDS)}|no longer|not (?:\w+ )?any ?more)\b",
    finds=("standup moved to 9:15 from monday", "he no longer works there", "i'm not vegan anymore"),
    misses=("i'm not vegan", "standup is at 9:30"),
)
# A negation and the few words after it: what a correction sets aside ("he is Paçoca, not Pipoca").
SET_ASIDE = rule(
    rf"(?<![\w'])(?:{alternation(NEGATIONS)})\s+((?:[^\s,;:!?]+\s+){{0,2}}[^\s,;:!?]+)",
    re.IGNORECASE,
    finds=("the hotel is Hotel Hanabusa, not Hotel Sakuraya", "Sonntag, nicht Samstag", "he is Paçoca, not Pipoca"),
    misses=("Take the notes to the hotel",),
)
# A word or a figure, with an apostrophe inside: "l'apt", "8", "Sakuraya".
WORD_OR_FIGURE = rule(
    r"[^\W_]+(?:['’][^\W_]+)?",
    finds=("c'est l'apt 8", "Hotel Sakuraya"),
    misses=("...",),
)
# Where a clause ends: what a correction says before its negation is read back to the last of these.
CLAUSE_BREAK = rule(
    r"[.!?;]",
    finds=("I was wrong. Rosalind said twice a day", "oups; c'est l'apt 8"),
    misses=("twice a day, not once",),
)


def last_clause(text: str) -> str:
    """The last clause of `text`, after its last full stop, question or exclamation mark or semicolon. Pure."""
    return CLAUSE_BREAK.split(text)[-1]
