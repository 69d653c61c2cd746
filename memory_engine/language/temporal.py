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

MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
]
WEEKDAYS = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
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
    (r"\byesterday\b", lambda d, m: (d - timedelta(days=1), DAY)),
    (r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", lambda d, m: (d, DAY)),
    (r"\btomorrow\b", lambda d, m: (d + timedelta(days=1), DAY)),
    (rf"\blast ({_WEEKDAY})\b", lambda d, m: (_last_weekday(d, WEEKDAYS.index(m[1])), DAY)),
    (rf"\bnext ({_WEEKDAY})\b", lambda d, m: (_next_weekday(d, WEEKDAYS.index(m[1])), DAY)),
    (r"\blast weekend\b", lambda d, m: (_last_weekday(d, 5), DAY)),
    (r"\blast week\b", lambda d, m: (d - timedelta(days=7), MONTH)),
    (r"\bnext week\b", lambda d, m: (d + timedelta(days=7), MONTH)),
    (r"\blast month\b", lambda d, m: (_months_before(d, 1), MONTH)),
    (r"\bnext month\b", lambda d, m: (_months_before(d, -1), MONTH)),
    (r"\blast year\b", lambda d, m: (date(d.year - 1, 1, 1), YEAR)),
    (r"\bnext year\b", lambda d, m: (date(d.year + 1, 1, 1), YEAR)),
    (rf"\b{_N} (?:of )?days? ago\b", lambda d, m: (d - timedelta(days=_count(m[1])), DAY)),
    (rf"\b{_N} (?:of )?weeks? ago\b", lambda d, m: (d - timedelta(days=7 * _count(m[1])), MONTH)),
    (rf"\b{_N} (?:of )?months? ago\b", lambda d, m: (_months_before(d, _count(m[1])), MONTH)),
    (rf"\b{_N} (?:of )?years? ago\b", lambda d, m: (date(d.year - _count(m[1]), 1, 1), YEAR)),
]
_RELATIVE = [(re.compile(pattern), resolve) for pattern, resolve in _RELATIVE]

_MONTH = "|".join(MONTHS)
# "October 13, 2023", "13 October 2023", "October 2023", "October", "2023"
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH}) (\d{{1,2}})(?:st|nd|rd|th)?,? (\d{{4}})\b")
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)? (?:of )?({_MONTH}),? (\d{{4}})\b")
_MONTH_YEAR = re.compile(rf"\b({_MONTH}),? (\d{{4}})\b")
_MONTH_ALONE = re.compile(rf"\b(?:in|during|of|since|last|this|early|late|mid) ({_MONTH})\b")
_YEAR = re.compile(r"\b(?:in|during|of|since) ((?:19|20)\d{2})\b")


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
