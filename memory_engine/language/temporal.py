"""Temporal grounding: what day a turn speaks of, as words the lexical index can match.

A turn says "yesterday", "last Saturday" or "two weeks ago"; a question asks "what did she paint on
October 13, 2023?" or "when did he go camping in June?". Neither matches the other as written, and a
page's date is not in its text at all. So the lexical document of a page gets date tokens for the day it
was said and for every relative expression in it, resolved against that day; and a query gets the same
tokens for the dates it names. A token names a day, a month of a year, a year, or a month of any year:

    dt20231013   13 October 2023        dt202310   October 2023
    dt2023       2023                   dtm10      October (any year)

Only the lexical index sees these: the embedding and the text shown are unchanged. Days are those of the
stored timestamp (UTC). Pure functions; English expressions only.
"""

import re
from datetime import date, datetime, timedelta

from memory_engine.language import word_lists
from memory_engine.language.rules import rule

MONTHS = word_lists.MONTHS[:12]  # the full names, in order: a month's number is its place
WEEKDAYS = word_lists.WEEKDAYS
_COUNTS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "couple": 2, "few": 3}

DAY, MONTH, YEAR = "day", "month", "year"  # how precisely an expression names its time


def date_tokens(when: date, precision: str = DAY) -> list[str]:
    """The tokens of a date known to `precision`: a day gives all four, a month three, a year one."""
    tokens = [f"dt{when.year}"]
    if precision in (DAY, MONTH):
        tokens += [f"dt{when.year}{when.month:02d}", f"dtm{when.month:02d}"]
    if precision == DAY:
        tokens.append(f"dt{when.year}{when.month:02d}{when.day:02d}")
    return tokens


def _months_before(when: date, n: int) -> date:
    index = when.year * 12 + when.month - 1 - n
    return date(index // 12, index % 12 + 1, 1)


def _count(word: str) -> int:
    return int(word) if word.isdigit() else _COUNTS[word]


def _last_weekday(when: date, weekday: int) -> date:
    return when - timedelta(days=(when.weekday() - weekday) % 7 or 7)


def _next_weekday(when: date, weekday: int) -> date:
    return when + timedelta(days=(weekday - when.weekday()) % 7 or 7)


_N = r"(\d{1,2}|a|an|one|two|three|four|five|six|couple|few)"
_WEEKDAY = "|".join(WEEKDAYS)
# (pattern, resolve(day said, match) -> (date, precision))
_RELATIVE = [
    (
        rule(
            r"\byesterday\b",
            finds=("i went to the dentist yesterday", "yesterday was my mum's birthday"),
            misses=("i'm seeing the dentist tomorrow",),
        ),
        lambda d, m: (d - timedelta(days=1), DAY),
    ),
    (
        rule(
            r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b",
            finds=("i have a meeting this afternoon", "we're having pasta tonight", "today is my day off"),
            misses=("this weekend we're going camping",),
        ),
        lambda d, m: (d, DAY),
    ),
    (
        rule(
            r"\btomorrow\b",
            finds=("what time is my flight tomorrow?", "tomorrow i start the new job"),
            misses=("i went to the gym yesterday",),
        ),
        lambda d, m: (d + timedelta(days=1), DAY),
    ),
    (
        rule(
            rf"\blast ({_WEEKDAY})\b",
            finds=("i painted a sunset last saturday", "last monday my son had a fever"),
            misses=("last week was hectic", "last weekend we went hiking"),
        ),
        lambda d, m: (_last_weekday(d, WEEKDAYS.index(m[1])), DAY),
    ),
    (
        rule(
            rf"\bnext ({_WEEKDAY})\b",
            finds=("my dentist appointment is next tuesday", "next friday is our anniversary"),
            misses=("next week is busy",),
        ),
        lambda d, m: (_next_weekday(d, WEEKDAYS.index(m[1])), DAY),
    ),
    (
        rule(
            r"\blast weekend\b",
            finds=("we went camping last weekend", "last weekend my sister visited"),
            misses=("last week i went camping",),
        ),
        lambda d, m: (_last_weekday(d, 5), DAY),
    ),
    (
        rule(
            r"\blast week\b",
            finds=("i started pottery last week", "last week was hectic"),
            misses=("last weekend we went out",),
        ),
        lambda d, m: (d - timedelta(days=7), MONTH),
    ),
    (
        rule(
            r"\bnext week\b",
            finds=("my sister visits next week", "next week i start night shifts"),
            misses=("next weekend is the wedding",),
        ),
        lambda d, m: (d + timedelta(days=7), MONTH),
    ),
    (
        rule(
            r"\blast month\b",
            finds=("we moved to leeds last month", "last month i got a promotion"),
            misses=("last monday i moved desks",),
        ),
        lambda d, m: (_months_before(d, 1), MONTH),
    ),
    (
        rule(
            r"\bnext month\b",
            finds=("my exam is next month", "next month we fly to lisbon"),
            misses=("next monday i have an exam",),
        ),
        lambda d, m: (_months_before(d, -1), MONTH),
    ),
    (
        rule(
            r"\blast year\b",
            finds=("i ran a marathon last year", "last year we adopted a cat"),
            misses=("this year i ran a marathon",),
        ),
        lambda d, m: (date(d.year - 1, 1, 1), YEAR),
    ),
    (
        rule(
            r"\bnext year\b",
            finds=("we're getting married next year", "next year i turn forty"),
            misses=("we got married last year",),
        ),
        lambda d, m: (date(d.year + 1, 1, 1), YEAR),
    ),
    (
        rule(
            rf"\b{_N} (?:of )?days? ago\b",
            finds=(
                "i got a puppy three days ago",
                "my bike was stolen 2 days ago",
                "a couple of days ago i called mum",
            ),
            misses=("in two days i fly to rome",),
        ),
        lambda d, m: (d - timedelta(days=_count(m[1])), DAY),
    ),
    (
        rule(
            rf"\b{_N} (?:of )?weeks? ago\b",
            finds=("i started a new job two weeks ago", "a week ago my tooth broke"),
            misses=("two weekends ago we went camping",),
        ),
        lambda d, m: (d - timedelta(days=7 * _count(m[1])), MONTH),
    ),
    (
        rule(
            rf"\b{_N} (?:of )?months? ago\b",
            finds=("i adopted a cat six months ago", "a month ago i quit sugar"),
            misses=("six months from now i'll graduate",),
        ),
        lambda d, m: (_months_before(d, _count(m[1])), MONTH),
    ),
    (
        rule(
            rf"\b{_N} (?:of )?years? ago\b",
            finds=("we met five years ago", "a few years ago i lived in berlin"),
            misses=("in five years i want a house",),
        ),
        lambda d, m: (date(d.year - _count(m[1]), 1, 1), YEAR),
    ),
]

_MONTH = "|".join(MONTHS)
# "October 13, 2023", "13 October 2023", "October 2023", "October", "2023"
_MONTH_DAY_YEAR = rule(
    rf"\b({_MONTH}) (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b",
    finds=("what did she paint on october 13, 2023?", "my wedding was june 3rd 2019"),
    misses=("what did she paint in october 2023?",),
)
_DAY_MONTH_YEAR = rule(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?({_MONTH}),? (\d{{4}})\b",
    finds=("i got married on 13 october 2023", "the 3rd of june, 2019 was our first date"),
    misses=("what did she paint on october 13, 2023?",),
)
_MONTH_YEAR = rule(
    rf"\b({_MONTH}),? (\d{{4}})\b",
    finds=("when did he go camping in june 2022?", "we moved in october, 2023"),
    misses=("when did he go camping in june?",),
)
_MONTH_ALONE = rule(
    rf"\b(?:in|during|of|since|last|this|early|late|mid) ({_MONTH})\b(?! (?:be|been|have|not|also|still|just|well|need|"
    r"want|seem|sound|take|help|mean|come|go|get|look|feel|work|make)\b)",  # "this may be wrong": no month
    finds=("when did he go camping in june?", "since march i've been running", "we're moving early may", "last may we"),
    misses=(
        "i may go camping this weekend",
        "i'll march in the parade",
        "i think this may be wrong",
        "the last may be best",
    ),
)
_YEAR = rule(
    r"\b(?:in|during|of|since) ((?:19|20)\d{2})\b",
    finds=("we moved here in 2019", "i've lived in leeds since 2008"),
    misses=("we live at 2021 oak street", "the house was built in 1890"),
)


def said_tokens(text: str, said: datetime | date) -> list[str]:
    """The date tokens of a turn said on `said`: that day, and each relative expression in `text`
    resolved against it ("yesterday" said on 8 May 2023 is 7 May 2023). In order, without repeats."""
    day = said.date() if isinstance(said, datetime) else said
    tokens = date_tokens(day)
    lowered = text.lower()
    for pattern, resolve in _RELATIVE:
        for match in pattern.finditer(lowered):
            try:
                tokens += date_tokens(*resolve(day, match))
            except (ValueError, OverflowError):
                continue  # a date out of range ("99 years ago" near year 1): no token
    return list(dict.fromkeys(tokens))


def named_tokens(text: str) -> list[str]:
    """The date tokens of the dates `text` names outright: "on October 13, 2023", "in June", "in 2022".
    For a query; relative expressions in a query are not resolved (against what day?)."""
    lowered = text.lower()
    tokens: list[str] = []
    taken: list[tuple[int, int]] = []  # spans a more precise form already read

    def free(match: re.Match) -> bool:
        return not any(start < match.end() and match.start() < end for start, end in taken)

    def add(match: re.Match, year: str, month: str, day: str | None) -> None:
        try:
            when = date(int(year), MONTHS.index(month) + 1, int(day) if day else 1)
        except ValueError:
            return
        tokens.extend(date_tokens(when, DAY if day else MONTH))
        taken.append(match.span())

    for match in _MONTH_DAY_YEAR.finditer(lowered):
        add(match, match[3], match[1], match[2])
    for match in _DAY_MONTH_YEAR.finditer(lowered):
        if free(match):
            add(match, match[3], match[2], match[1])
    for match in _MONTH_YEAR.finditer(lowered):
        if free(match):
            add(match, match[2], match[1], None)
    for match in _MONTH_ALONE.finditer(lowered):
        if free(match):
            tokens.append(f"dtm{MONTHS.index(match[1]) + 1:02d}")
    for match in _YEAR.finditer(lowered):
        if free(match):
            tokens.append(f"dt{match[1]}")
    return list(dict.fromkeys(tokens))
