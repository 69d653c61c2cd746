"""Answering from memory: a question about what the person said, answered with what they said.

A weak model (`LLM.weak`, the bundled 135M one) given the right note in its prompt still answers
something else: told "I have a cat called Pepper" and asked for the cat's name, it answered "Maria
Lindqvist". The retrieval finds the note; the model throws it away. So for a weak model, a question about
the person is not put to the model at all. The person's own sentences among what a retrieval finds (recent
turns, the best past turns, the turns behind the profile and knowledge it ranked) are scored against the
question, and the best one is quoted back with the day it was said:

    You told me on Monday: "I have a cat called Pepper."

A short message is quoted whole, since the answer is often in the sentence beside the one that matched.
When a newer statement on the same subject scores nearly as well (a fact that changed: "we moved to
Lisbon" after "I live in Porto"), it is quoted first, as the latest, and the earlier one after it;
when another message scores within a hair of the best (Weights.also_margin), both are quoted rather than one
guessed. A weak match is offered as a guess ("I'm not sure that's it, but ..."); when nothing matches,
the reply says so. Small talk and requests for advice stay with the model; a question that names someone
the person told about ("rafael instrument?") is about what they said, however it is worded.

Measured: SmolLM2-135M asked under a grammar to pick the note that answers a question picked the first of
four in 215 cases of 215, so the choice is made here, by score. How each weight was chosen, and what the
answers are worth on conversations written by others: docs/benchmarks.md, "Chat with no key".

The path of an answer: the message is read once (language/intent.py: what it asks, by which rule); a
retrieval deeper than a prompt's finds the pages; `statements_of` reads the person's sentences on them;
`respond`, a pure function of (intent, statements, encoder, now), scores them (the weights in one place,
`Weights`) and writes the reply. `answer` runs the path for a space.
"""

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import datetime
from functools import partial

import numpy as np
from django.utils import timezone

from memory_engine.config import memory_settings
from memory_engine.documents import QuotedDoc
from memory_engine.engine import asking, statement_marks
from memory_engine.engine.grounding import changes, corrected_value, is_figure, sets_aside, tells_a_change
from memory_engine.engine.reranker import get_reranker
from memory_engine.engine.retriever import Item, Retrieval, narrowed, retrieve
from memory_engine.language import memory_requests
from memory_engine.language.asked import asked_of, holds_a_phone_number, not_a_date
from memory_engine.language.intent import (
    AGE,
    CLOCK,
    ELSEWHERE_OF_THEIRS,
    MAYBE,
    MEMORY,
    NAME,
    NUMBER,
    PHONE,
    PROPER,
    UNREAD,
    WHEN,
    YEAR,
    Intent,
    asked_strictly,
    read,
)
from memory_engine.language.keywords import content_tokens
from memory_engine.language.names import GIVES_OWN_NAME, NAMED, NAMED_THING, NAMED_WORDS, NAMING, WORD, names_in
from memory_engine.language.profile_attributes import ASKED_AS, is_multi_valued, values_in
from memory_engine.language.reading import is_statement, plain, questions, split_sentences, straight
from memory_engine.language.values import (
    A_NUMBER,
    CHANGED,
    COUNTS_TIME,
    DATE_LIKE,
    HOLDS_A_CLOCK_TIME,
    HOLDS_A_DATE,
    HOLDS_A_NUMBER,
    HOLDS_A_YEAR,
    HYPHENATED_WORD,
    NOW_ANOTHER,
    VALUE,
    WEEKDAY,
    WHEN_WORDS,
    distinctive,
    mentions,
    shape,
)
from memory_engine.language.whose import (
    ASKS_IN_IT,
    ELISION,
    ENDS_A_SENTENCE,
    MINE,
    MINE_DOES,
    OPENS_REQUEST,
    SOMEONE_ELSES,
    THE_X_OF_MINE,
)
from memory_engine.language.word_lists import (
    ASKING_WORDS,
    FUNCTION_WORDS,
    LANGUAGES,
    MONTHS,
    OWNER_ARTICLES,
    RELATIVES,
    TIME_WORDS,
    WEEKDAYS,
)
from memory_engine.models import MemorySpace, Page, StatementMark
from memory_engine.store.embeddings import RecentVectors, get_embedder

logger = logging.getLogger(__name__)

NOT_TOLD = "I don't think you've told me that yet."


def not_told(question: str) -> str:
    """What a reply says when the person never told what they ask, in their terms: "You haven't told me your
    blood type yet." for "What's my blood type?", "your dentist's name" for "the name of my dentist";
    NOT_TOLD when it cannot say what they asked for. Pure."""
    if (asked := asked_of(question)) is not None:
        return f"You haven't told me {asked.in_their_terms(question)} yet."
    # The words as they wrote them ("ID", not a chat spelling), in the sentences that ask.
    lowered = " ".join(straight(question).lower().split())
    for sentence in split_sentences(lowered):
        if not questions(sentence):
            continue
        for clause in sentence.split(","):
            if not (clause.rstrip().endswith("?") or ASKS_IN_IT.search(clause)):
                continue  # "side note, my truck, a rusty old Silverado, is that bad?": "my truck" asks nothing
            if found := THE_X_OF_MINE.search(clause.strip()):
                return f"You haven't told me your {found.group(2)}'s {found.group(1)} yet."
            if MINE_DOES.search(clause):
                continue  # "what did my eye specialist diagnose": a thing of theirs that does, not one asked for
            if found := MINE.search(clause.strip()):
                thing = f"{found.group(1)}'s name" if found.group("called") else found.group(1)
                return f"You haven't told me your {thing} yet."
    return NOT_TOLD


# --- The weights ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Weights:
    """Every weight and threshold of the scoring and the choice, in one place (how each was chosen:
    docs/benchmarks.md, "Chat with no key")."""

    lexical: float = 0.25  # a question's own words found in the statement, as a share of its words
    kind_bonus: float = 0.12  # the statement holds the kind of answer asked for (a date, a number, a name)
    kind_penalty: float = 0.12  # it does not
    naming_bonus: float = 0.16  # it names something of theirs, to a question asking a name
    value_bonus: float = 0.10  # it states a profile value of what the question asks about
    confident: float = 0.42  # from this score the quote is given as the answer ...
    enough: float = 0.25  # ... from this one as a guess ("I'm not sure, but ..."); below it, nothing answers
    strong: float = 0.52  # a question that may be about something else (MAYBE) is answered from this score
    newer_margin: float = 0.12  # a newer statement this close to the best is quoted after it ...
    same_subject: float = 0.45  # ... when it is this close to the best one (cosine): the same subject again
    now_margin: float = 0.25  # the same two, for a question about how things are now
    now_subject: float = 0.30
    not_given: float = -1.0  # the score of a statement that does not give what is asked (language/asked.py)
    also_margin: float = 0.05  # another message this close to the best is quoted beside it (nearly a tie)
    # The reranker (engine/reranker.py), when on: its likelihood that a sentence answers, p, adds
    # rerank_weight * (p - 0.5) to the score of each of the best rerank_top; a message read as a question by
    # its form (not a value asked for by its words) whose best p is under rerank_gate is small talk.
    rerank_top: int = 10
    rerank_weight: float = 0.2  # 0.1 and 0.2 the best on sets it never saw (docs/benchmarks.md)
    rerank_gate: float = 0.0


WEIGHTS = Weights()
MIN_CONTENT_WORDS = 2  # a sentence with fewer content words answers nothing
MAX_MESSAGE_CHARS = 300  # a message this short is also a candidate whole, beside its sentences
QUOTE_WHOLE_CHARS = 240  # a message this short is quoted whole, not only its sentence that matched
RECALL_PAGES = 30  # past turns read for a question (a prompt's retrieval reads the space's top_pages, 10)
RECALL_KNOWLEDGE = 20


# --- What kind of answer a sentence holds ------------------------------------------------------------

# What a statement holds that gives a date, a year, an age or a count asked for in so many words (strict_kind).
_HOLDS = {
    WHEN: HOLDS_A_DATE,
    YEAR: HOLDS_A_YEAR,
    AGE: A_NUMBER,
    NUMBER: A_NUMBER,
    CLOCK: HOLDS_A_CLOCK_TIME,
}


def strict_kind(asked: str) -> Callable[[str], bool] | None:
    """Whether a statement can answer, when the words that ask (`asked`: intent.asked_part) ask for a phone number,
    a time of day, a date, a year, an age or a count in so many words (intent.asked_strictly): it holds a phone
    number, a clock time, a date (as answer_fit reads one), a year, a digit or a number word (for a count not of
    time, not only in the day of a month: "how much did gus quote me?" is not answered by "gus can look at it on 14
    May"); None when nothing is asked so. Pure."""
    kind = asked_strictly(asked)
    if kind is None:
        return None
    if kind == PHONE:  # "what's the vet's phone number": a run of digits, not a date
        return holds_a_phone_number
    holds = _HOLDS[kind]
    if kind == NUMBER and not COUNTS_TIME.search(asked.lower()):  # "how many days until...": a date may give it
        return lambda statement: holds.search(not_a_date(statement).lower()) is not None
    return lambda statement: holds.search(statement.lower()) is not None


def answer_fit(sentence: str, kind: str | None, weights: Weights = WEIGHTS) -> float:
    """How well `sentence` holds an answer of the kind asked for (intent.answer_kind): kind_bonus when it
    holds a date or time, a number or a proper name (naming_bonus more, to a question asking a name, when
    it names something of theirs: "my housemate Tash", "a cat called Pepper", "a Kenworth I call Big Sue"),
    -kind_penalty when it holds none, 0 when no kind is asked or it cannot tell (a name in a sentence
    written all in lower case). Pure."""
    if kind is None:
        return 0.0
    bonus, penalty = weights.kind_bonus, -weights.kind_penalty
    lowered = sentence.lower()
    if kind == WHEN:
        return bonus if WHEN_WORDS.search(lowered) else penalty
    if kind == NUMBER:
        return bonus if HOLDS_A_NUMBER.search(lowered) else penalty
    if kind == NAME and (NAMING.search(lowered) or NAMED_THING.search(sentence)):
        return bonus + weights.naming_bonus
    if sentence == lowered:
        return 0.0
    return bonus if names_in(sentence) else penalty


# --- Scoring the person's statements ---------------------------------------------------------------

_ASKING_WORDS = frozenset(content_tokens(" ".join(ASKING_WORDS)))


@dataclass(frozen=True)
class Statement:
    """One sentence the person said, and when."""

    text: str
    said_at: datetime
    page_id: int
    seq: int
    message: str = ""  # what its message told (its sentences that ask left out), quoted when short
    # A statement that stands corrected (engine/statement_marks.py): the words first said, and when corrected.
    first_said: str = ""
    corrected_at: datetime | None = None
    likelihood: float | None = None  # the reranker's, that it answers the question (None: it did not read it)

    @property
    def quote(self) -> str:
        """What a reply quotes: the whole message when it is short (QUOTE_WHOLE_CHARS), since the answer is
        often in the sentence beside the one that matched ("Need a birthday dinner idea for my husband
        Mattias. He doesn't eat fish."); else the sentence."""
        message = " ".join(self.message.split())
        return message if message and len(message) <= QUOTE_WHOLE_CHARS else self.text

    def as_dict(self) -> dict:
        """The statement as every door shows it (documents.QuotedDoc)."""
        return QuotedDoc.of(self).payload()

    def told(self, now: datetime) -> str:
        """How a reply gives it: when it was said and its words; a corrected statement in its words now, saying
        when it was corrected. The words first said are not given again: the person asked for them to be gone
        (they stay in the entry's history and in the turn as said, shown struck through)."""
        if self.corrected_at is None:
            return f"{when_said(self.said_at, now)}: \u201c{self.quote}\u201d"
        return (
            f"{when_said(self.said_at, now)}: \u201c{self.text}\u201d (corrected {when_said(self.corrected_at, now)})"
        )

    def about(self, *, asks_own_name: bool) -> str:
        """What the sentence says about the person, in the words a question about it would use ("my job,
        my work, ...: pastry chef"); "" when it states no profile value (profile_attributes.values_in). The
        person's own name only for a question about it (`asks_own_name`): "What's my boy called?" asks
        another name."""
        return "; ".join(
            f"{ASKED_AS.get(attribute, attribute)}: {value}"
            for attribute, value in values_in(self.text)
            if attribute != "name" or asks_own_name
        )


@dataclass(frozen=True)
class Recall:
    """A reply made of the person's own words: `quoted` are the statements it quotes (none: nothing the
    person said answers the question, and `text` says so); `read_as` names the rule that read the
    question (language/intent.py)."""

    text: str
    quoted: tuple[Statement, ...]
    read_as: str = ""


def score_statements(
    intent: Intent,
    statements: list[Statement],
    question_vector: np.ndarray,
    vectors: np.ndarray,
    about_vectors: np.ndarray,
    weights: Weights = WEIGHTS,
) -> list[float]:
    """How well each statement answers the question: the MiniLM cosine of the question (one vector, or
    several rows: the whole message and the part that asks) with the sentence or with what it says about
    the person (Statement.about; a zero row when nothing), whichever is closest, plus the share of the
    question's words either holds, plus or minus whether the sentence holds the kind of answer asked for.
    Pure."""
    words = set(content_tokens(intent.message)) - _ASKING_WORDS
    kind = intent.answer_kind
    scores = []
    questions_ = np.atleast_2d(question_vector)
    sentence_closeness = (vectors @ questions_.T).max(axis=1)
    about_closeness = (about_vectors @ questions_.T).max(axis=1)
    for statement, sentence, about in zip(statements, sentence_closeness, about_closeness, strict=True):
        cosine = max(float(sentence), float(about))
        if about >= sentence and about >= weights.same_subject:
            cosine += weights.value_bonus  # it states the value asked for, not merely the topic
        said = set(content_tokens(f"{statement.text} {statement.about(asks_own_name=intent.asks_own_name)}"))
        overlap = len(words & said) / len(words) if words else 0.0
        bonus = answer_fit(statement.text, kind, weights)
        if kind == NAME and not intent.asks_own_name and GIVES_OWN_NAME.search(statement.text.lower()):
            bonus = -weights.kind_penalty  # their name, to a question about someone else's
        scores.append(round(cosine + weights.lexical * overlap + bonus, 6))
    return scores


def reranked(
    intent: Intent, statements: list[Statement], scores: list[float], reranker, weights: Weights = WEIGHTS
) -> tuple[list[float], list[Statement]]:
    """The scores with the reranker's word (engine/reranker.py: `scores(question, sentences)` gives each
    sentence's likelihood of answering, p): each of the best weights.rerank_top gains rerank_weight * (p -
    0.5), the rest are read as p = 0, so they stay below; and the statements, those it read with their p.
    Pure apart from the reranker."""
    top = sorted(range(len(statements)), key=lambda i: -scores[i])[: weights.rerank_top]
    likelihood = np.zeros(len(statements))
    likelihood[top] = reranker.scores(intent.message, [statements[i].text for i in top])
    adjusted = [
        round(score + weights.rerank_weight * (p - 0.5), 6) for score, p in zip(scores, likelihood, strict=True)
    ]
    marked = list(statements)
    for i in top:
        marked[i] = replace(statements[i], likelihood=round(float(likelihood[i]), 4))
    return adjusted, marked


def choose(
    statements: list[Statement],
    scores: list[float],
    vectors: np.ndarray,
    *,
    enough: float = WEIGHTS.enough,
    asks_now: bool = False,
    weights: Weights = WEIGHTS,
) -> tuple[Statement, ...]:
    """The best statement, and a newer one on the same subject that scores nearly as well, or that sets aside
    a value of the best (grounding.sets_aside: "the hotel is Hotel Hanabusa, not Hotel Sakuraya", which may
    be further from a long first statement than the same subject again usually is), oldest first; () when
    none scores `enough`. Ties go to the newer statement. `asks_now` (the question asks how things are now:
    "where do I live these days?") lets a newer statement further from the best one in. Pure."""
    if asks_now:
        margin, subject = weights.now_margin, weights.now_subject
    else:
        margin, subject = weights.newer_margin, weights.same_subject
    if not statements:
        return ()
    order = sorted(range(len(statements)), key=lambda i: (-scores[i], -statements[i].seq))
    best = order[0]
    if scores[best] < enough:
        return ()
    newer = [
        i
        for i in order[1:]
        if statements[i].seq > statements[best].seq  # a later turn, so never the same message again
        and (
            float(vectors[i] @ vectors[best]) >= subject
            and (
                scores[i] >= max(scores[best] - margin, enough)
                # "update: they postponed the exam to the 21st": a later statement that says the fact changed
                or (scores[i] >= enough and CHANGED.search(statements[i].text.lower()) is not None)
            )
            # a correction that names the value it replaces ("the hotel is Hotel Hanabusa, not Hotel Sakuraya") or
            # tells the value moved ("party moved to Sunday the 13th" after "it's Saturday the 12th")
            or (
                float(vectors[i] @ vectors[best]) >= weights.now_subject
                and scores[i] >= enough
                and corrects(statements[best].text, statements[i].text)
            )
        )
    ]
    if not newer:
        return (statements[best],)
    return (statements[best], statements[newer[0]])  # the best of them


def corrects(earlier: str, later: str) -> bool:
    """Whether `later` sets aside a value `earlier` gave (grounding.sets_aside) or tells that a time, a date or a
    number moved to one `earlier` does not give (grounding.tells_a_change and grounding.changes). Whether the two
    are about the same thing is the caller's to know. Pure."""
    return sets_aside(earlier, later) or (tells_a_change(later) and changes(earlier, later))


def beside(
    statements: list[Statement],
    scores: list[float],
    chosen: Statement,
    *,
    enough: float = WEIGHTS.enough,
    weights: Weights = WEIGHTS,
) -> Statement | None:
    """The best statement of another message that scores within also_margin of the chosen one, quoted
    beside it: when two messages answer nearly as well, the reply shows both rather than guess. Pure."""
    best = max(scores)
    others = [
        (score, statement)
        for score, statement in zip(scores, statements, strict=True)
        if statement.page_id != chosen.page_id and score >= max(best - weights.also_margin, enough)
    ]
    return max(others, key=lambda pair: (pair[0], pair[1].seq))[1] if others else None


# --- The reply ---------------------------------------------------------------------------------------


def when_said(said_at: datetime, now: datetime) -> str:
    """How a person would say when something was said, seen from `now`: "earlier today", "yesterday",
    "on Monday", "on 3 March", "on 3 March 2025". Pure."""
    said, today = timezone.localtime(said_at), timezone.localtime(now)
    days = (today.date() - said.date()).days
    if days <= 0:
        return "earlier today"
    if days == 1:
        return "yesterday"
    if days < 7:
        return f"on {said:%A}"
    if said.year == today.year:
        return f"on {said.day} {said:%B}"
    return f"on {said.day} {said:%B} {said.year}"


def quote_reply(quoted: tuple[Statement, ...], now: datetime, *, sure: bool = True, then: str = "Then") -> str:
    """The reply that quotes the statements, in the order given (`sure=False`: as a guess), each after the
    first opened by `then` ("Then" for a fact that changed, "And" for one quoted beside another). Pure."""
    if not quoted:
        return NOT_TOLD
    first, *later = quoted
    opening = "You told me" if sure else "I'm not sure that's it, but you told me"
    parts = [f"{opening} {first.told(now)}"]
    parts += [f"{then} {s.told(now)}" for s in later]
    return " ".join(parts)


def replaces(earlier: Statement, later: Statement) -> bool:
    """Whether the later statement gives another value of an attribute that has one value at a time ("we live
    in Leeds", then "we moved to Bristol"), says that a time, a date or a number changed ("standup is at
    9:30", then "standup moved to 9:15": grounding.changes), or sets aside a value the earlier one gave ("I
    booked Hotel Sakuraya", then "the hotel is Hotel Hanabusa, not Hotel Sakuraya": grounding.sets_aside):
    then it is the latest, not a second answer. Pure."""
    before = {attribute: value for attribute, value in values_in(earlier.text) if not is_multi_valued(attribute)}
    changed_value = any(before.get(attribute) not in (None, value) for attribute, value in values_in(later.text))
    return changed_value or changes(earlier.text, later.text) or sets_aside(earlier.text, later.text)


def corrected_later(quoted: Statement, statements: list[Statement], kind: str | None = None) -> Statement | None:
    """The last statement said after `quoted` that corrects a value of it in so many words and shares another word
    with it, however it scores (grounding.corrected_value: "ferrous fumarate 210mg once a day", then "I was wrong,
    Rosalind said twice a day, not once", a correction in few words that scores far below what it corrects), or
    None. A question asking a `kind` of answer (intent.answer_kind) is corrected only in a value of that kind:
    "What is the name of my wife?" is not by "the final is on Sunday, not Saturday". Pure."""
    said = _unelided(quoted.text)
    found = None
    for later in (s for s in statements if s.seq > quoted.seq):
        old = corrected_value(quoted.text, later.text)
        asked_so = kind in ((None, WHEN, NUMBER) if is_figure(old) else (None, NAME, PROPER))
        if old and asked_so and said & _unelided(later.text) - _unelided(old):
            found = later
    return found


def told_now(quoted: Statement, statements: list[Statement], question: str, kind: str | None) -> Statement | None:
    """The last statement said after `quoted` that tells the value asked is now another, or None. What it replaces
    is the value of `quoted` nearest the question's own words. A name must be named again ("the lassie dealing wi
    it is Morag", then "Turns oot Morag's left, it's a guy called Euan now"); a figure is replaced by one of its
    shape, in a statement naming it again or sharing a word with both the question and `quoted` ("what ip ... for
    staging": "they re-ip'd the staging box, it's 10.42.9.40 now"); a word of time ("morning") is none. Such a
    message scores below what it replaces, having few of the question's words. Pure."""
    anchors = _unelided(question) - _NOT_ANCHORS
    names = kind in (NAME, PROPER)
    old = _nearest_value(quoted.text, anchors, names=names)
    # a figure of the same shape as the one it replaces ("10.42.8.17", then "10.42.9.40"), or as any figure of a
    # shape few others have (the address, when the hostname "vela-stg-03" is nearer the question's "staging")
    shapes = {shape(old)} | {shape(v) for v in _values_of(quoted.text, kind) if distinctive(v)} if old else set()
    found = None
    for later in (s for s in statements if s.seq > quoted.seq):
        said = plain(later.text)
        if not NOW_ANOTHER.search(said):
            continue
        named_again = bool(old) and mentions(said, old)
        if names:  # a name only where the one it replaces is named ("Morag's left, it's a guy called Euan now")
            new = {m.group(1).lower() for m in NAMED.finditer(later.text)} - set(
                plain(quoted.text + " " + question).split()
            )
            if new and named_again:
                found = later
            continue
        new = {v for v in _values_of(later.text, kind) if v not in quoted.text and shape(v) in shapes}
        if new and (named_again or anchors & _unelided(quoted.text) & _unelided(later.text)):
            found = later
    return found


def keyed_again(quoted: Statement, statements: list[Statement], question: str, kind: str | None) -> Statement | None:
    """The last statement said after `quoted` that gives another figure of a shape few figures have, after the same
    word of the question as `quoted` gives one ("Car is my old Toyota Corolla, reg ND 482-771", then "Polo reg is ND
    913-205."; "Reading yangu ilikuwa 158/96", then "Reading ya leo ni 138/88"), or None: a value told again with
    no word of change is the latest. Pure."""
    anchors = _unelided(question) - _NOT_ANCHORS
    keyed = {(shape(v), key) for v, keys in _keyed_values(quoted.text, kind) for key in keys & anchors}
    found = None
    for later in (s for s in statements if s.seq > quoted.seq):
        if any(
            (shape(v), key) in keyed and v not in quoted.text
            for v, keys in _keyed_values(later.text, kind)
            for key in keys
        ):
            found = later
    return found


KEY_WORDS = 4  # the words before a figure that may name what it is: "reg ND 482-771", "Reading ya leo ni 138/88"


def _keyed_values(text: str, kind: str | None) -> list[tuple[str, set[str]]]:
    """The figures of `text` of a shape few figures have, each with the content words of the KEY_WORDS words
    before it. Pure."""
    values = _values_of(text, kind)
    found = []
    for match in VALUE.finditer(text):
        if match.group(0) in values and distinctive(match.group(0)):
            before = HYPHENATED_WORD.findall(text[: match.start()])[-KEY_WORDS:]
            if not any(SOMEONE_ELSES.fullmatch(word.lower()) for word in before):  # "my sister's flight is LH 904-2"
                found.append((match.group(0), _unelided(" ".join(before))))
    return found


def _nearest_value(text: str, anchors: set[str], *, names: bool) -> str:
    """The value of `text` nearest a word of `anchors` in it (a name, or a figure), lower case; "" for none."""
    lowered = plain(text)
    places = [m.start() for m in HYPHENATED_WORD.finditer(lowered) if set(content_tokens(m.group(0))) & anchors]
    found = NAMED_WORDS.finditer(text) if names else VALUE.finditer(text)
    values = [(m.start(), m.group(0).lower().removesuffix("'s")) for m in found if m.start() > 0]
    # the question's own words ("Tayside Lets") are what it asks about, not what it asks
    if names:  # not a name the question says, nor a word like "Lets" that no name is
        values = [(at, value) for at, value in values if (words := set(content_tokens(value))) and not words & anchors]
    if not places or not values:
        return ""
    return min(values, key=lambda v: (min(abs(v[0] - at) for at in places), -v[0]))[1]  # a tie: the later ("X is Y")


def _values_of(text: str, kind: str | None) -> set[str]:
    """The figures of `text`; for a date or a time asked, only those that are one ("24th", "10:30", "11 May")."""
    values = set(VALUE.findall(text))
    if kind == WHEN:
        values = {v for v in values if DATE_LIKE.fullmatch(v)} | set(WEEKDAY.findall(plain(text)))
    return values


# Words no anchor: what says a change or a name, and words of time ("good morning", "on saturdays").
_NOT_ANCHORS = frozenset(
    content_tokens(
        " ".join(
            ("called named name now new changed updated moved switched instead again", *TIME_WORDS, *WEEKDAYS, *MONTHS)
        )
    )
)


def _unelided(text: str) -> set[str]:
    """The content words of `text` without an elided article or pronoun before them ("l'apt": "apt"), nor the
    other languages' short words ("le", "ist")."""
    return {ELISION.sub("", word) for word in content_tokens(text)} - _FUNCTION_WORDS - _OWNER_ARTICLES


def latest_reply(latest: Statement, earlier: Statement, now: datetime, *, sure: bool = True) -> str:
    """The reply to a question whose answer changed ("we live in Leeds", later "we moved to Bristol"): the
    latest statement first, said to be the latest, then the one before it. Pure."""
    opening = "The latest you told me" if sure else "I'm not sure that's it, but the latest you told me"
    return f"{_ended(f'{opening}, {latest.told(now)}')} Before that, {_ended(earlier.told(now))}"


def _ended(sentence: str) -> str:
    """`sentence` with a full stop, unless the quote it ends with ends one already (“... with supper.”). Pure."""
    return sentence if ENDS_A_SENTENCE.search(sentence) else f"{sentence}."


def statements_of(retrieval: Retrieval, asked: str, *, searching: bool = False) -> list[Statement]:
    """The person's own sentences on the pages the retrieval found: the recent turns, the past turns it
    ranked, and the turns its profile and knowledge entries came from, whether or not the prompt's token
    budget kept them. Questions, requests and sentences too slight to answer anything are left out, and so
    is the question being asked, and what a later message asked to forget in words no rule reads
    (not_asked_to_forget), unless `searching` for what a request names. Reads those pages."""
    page_ids = [item.id for item in (*retrieval.short_term, *retrieval.pages)]
    page_ids += [item.id for item in retrieval.cut if item.kind in ("short_term", "page")]
    for item in (*retrieval.profile, *retrieval.user_knowledge, *retrieval.cut):
        page_ids += item.provenance.get("source_page_ids", [])
    pages = Page.objects.filter(pk__in=set(page_ids)).only("seq", "user_input", "said", "timestamp").order_by("seq")
    corrections = statement_marks.corrections_in(set(page_ids))
    asked_words = " ".join(asked.lower().split())
    found: list[Statement] = []
    seen: set[str] = set()

    def add(text: str, page: Page, message: str) -> None:
        key = " ".join(text.lower().split())
        if key not in seen and key != asked_words and len(set(content_tokens(text))) >= MIN_CONTENT_WORDS:
            seen.add(key)  # "Morning!", "moved!" are too slight to answer anything
            mark = next((m for m in corrections.get(page.pk, []) if statement_marks.span(m.replacement, text)), None)
            found.append(
                Statement(
                    text=mark.replacement if mark else text,
                    said_at=page.timestamp,
                    page_id=page.pk,
                    seq=page.seq,
                    message="" if mark else message,
                    first_said=mark.sentence if mark else "",
                    corrected_at=mark.at if mark else None,
                )
            )

    forgetting: list[tuple[int, str]] = []  # (seq, clause): what each message asked to forget, in its words
    for page in pages:
        # A request to the memory tells nothing ("please forget my medicine"), nor what it names to forget:
        # neither is an answer, nor quoted beside one.
        # read in the words as said: once what it pointed at is forgotten, "PLEASE WIPE IT" points at nothing
        said = (page.said or {}).get("user_input") or page.user_input
        requests = memory_requests.read_all(said)
        asking = memory_requests.forgetting_clauses(said)  # however they open: never quoted
        if not any(r.kind == memory_requests.FORGET for r in requests):
            # a request read is carried out by curation (and Undo gives back what it forgot); one no rule reads is not
            forgetting += [(page.seq, clause) for clause in asking]
            if asking:
                continue  # it asks to forget what it does not name plainly: any of it may be what it means
        named = next((r.about for r in requests if r.kind == memory_requests.FORGET), "")
        clauses = tuple(plain(clause) for clause in (*(r.clause for r in requests if r.clause), *asking))
        candidates, message = told_in(page.user_input, keep=partial(_no_request, named=named, clauses=clauses))
        for text in candidates:
            add(text, page, message)
    return found if searching else not_asked_to_forget(found, forgetting)


def not_asked_to_forget(statements: list[Statement], forgetting: list[tuple[int, str]]) -> list[Statement]:
    """`statements` without those said up to a message asking to forget (`forgetting`: its seq and the clause that
    asks) that hold a word of the clause few statements have, in any of its forms ("Och glöm det jag sa om Vilgots
    diagnos" after "Vilgot fick diagnosen ADHD"; "sahau namba ya M-Pesa" after "M-Pesa yangu ni 0722 604 318"):
    what the person asked to forget is not quoted, whether or not the request was read and carried out; nor is the
    rest of a sentence that holds it. Pure."""
    if not forgetting:
        return statements
    said = [_unelided(s.text) for s in statements]
    few = max(1, len(statements) // 4)
    dropped: set[int] = set()
    for seq, clause in forgetting:
        # not a short word of another language ("och", "om"), which a few statements may hold by chance
        named = {word for word in _unelided(clause) if len(word) >= 4}
        before = [i for i, s in enumerate(statements) if s.seq <= seq]
        held = {i: {w for w in named if any(_one_word(w, other) for other in said[i])} for i in before}
        rare = {w for w in named if sum(w in words for words in held.values()) <= few}
        dropped.update(i for i, words in held.items() if words & rare)
    return [s for i, s in enumerate(statements) if i not in dropped]


def _one_word(word: str, other: str) -> bool:
    """Whether two words are forms of one: the same, or alike but for their last letter or two ("vilgots",
    "vilgot"; "diagnos", "diagnosen"), when five letters or more."""
    if word == other:
        return True
    alike = len(os.path.commonprefix((word, other)))
    return alike >= 5 and alike >= min(len(word), len(other)) - 1


def _no_request(text: str, *, named: str, clauses: tuple[str, ...] = ()) -> bool:
    """Whether `text` is neither a request to the memory (alone, one of the message's `clauses` that ask: "PLEASE
    WIPE IT FROM YOUR MEMORY." after what it points at, or one asking to forget however it opens: "Och glöm det jag
    sa om Vilgots diagnos") nor about
    `named`, what the message asked to forget (nor
    part of it: "the glaucoma and the drops both")."""
    said = plain(text)
    if memory_requests.read(text) is not None or any(clause in said for clause in clauses):
        return False
    return not (named and (plain(named) in said or said in plain(named)))


def told_in(user_input: str, keep: Callable[[str], bool] = lambda text: True) -> tuple[list[str], str]:
    """What a message tells, as recall reads it: its candidate answers (the sentences that tell, then the
    clauses that tell of a sentence that also asks, then the whole when short) and what a quote of it shows
    (the message in its order without what it asks), leaving out the sentences and clauses `keep` refuses.
    Pure when `keep` is."""
    sentences = [sentence for sentence in split_sentences(user_input) if keep(sentence)]
    tells = [is_statement(sentence) for sentence in sentences]
    told = [sentence for sentence, tell in zip(sentences, tells, strict=True) if tell]
    # The clauses of a sentence that also asks: "how much should I charge for a set menu, most of our
    # mains are around €24" tells in its second clause; "I drive a 2011 Skoda, should I get it serviced"
    # is clearer without the question.
    clauses_told = []
    for sentence in sentences:
        clauses = [clause.strip() for clause in sentence.split(",")]
        telling = [clause for clause in clauses if is_statement(clause) and not OPENS_REQUEST.match(plain(clause))]
        clauses_told.append(telling if len(telling) < len(clauses) else [])  # a clause asks: the rest tell
    # What the message tells, in its order, without what it asks: what a quote of it shows.
    message = " ".join(
        sentence if tell else ", ".join(telling)
        for sentence, tell, telling in zip(sentences, tells, clauses_told, strict=True)
        if tell or telling
    )
    candidates = [text for text in told + [clause for telling in clauses_told for clause in telling] if keep(text)]
    # The message too, when short: "My old Saab refused to start. It's 24 years old." answers "How old
    # was my car?" only whole.
    if len(told) > 1 and len(" ".join(told)) <= MAX_MESSAGE_CHARS:
        candidates.append(" ".join(told))
    return candidates, message


# Capitalised, but no one they told about: "my English is terrible", "any German podcasts?".
_LANGUAGES = frozenset(LANGUAGES)
_RELATIVES = frozenset(RELATIVES)  # "Mum's favourite flowers are ranunculus": "Mum" is no one's name


def names_used(statements: list[Statement]) -> set[str]:
    """The names the person used (capitalised words inside their sentences: "Rafael", "Pimville"), in lower
    case; days, months, languages and the like left out. Pure."""
    names = {name.lower() for statement in statements for name in names_in(statement.text)}
    return {name for name in names - _LANGUAGES - _RELATIVES if not WHEN_WORDS.fullmatch(name)}


ASKED_OF_ONE_TOLD_ABOUT = "asks what is told of one they told about"


def _asks_of_one_told_about(intent: Intent, statements: list[Statement]) -> bool:
    """Whether the message asks a name, an age, a date or an identifier (language/asked.py) of someone or something
    a statement speaks of, in any language: a question about what they told ("whats femke's last name", "cómo
    se llama la vet"), not about the world ("¿cómo se llama el presidente de Francia?")."""
    wanted = intent.wanted
    return wanted is not None and any(wanted.speaks_of(s.text) for s in statements)


def names_someone_known(question: str, statements: list[Statement]) -> bool:
    """Whether the question names someone or something the person told about ("what instrument does Rafael
    play?", "vihaan olympiad date?"): then it asks about what they said. Pure."""
    words = {word.lower().removesuffix("'s") for word in WORD.findall(straight(question))}
    return bool(words & names_used(statements))  # "Khaled's wife" names Khaled


def respond(
    intent: Intent,
    statements: list[Statement],
    encoder,
    now: datetime,
    weights: Weights = WEIGHTS,
    reranker=None,
) -> Recall | None:
    """The reply to the message read as `intent`, made of `statements` (what the person said, as
    statements_of reads them), scored with `encoder` (store.embeddings: `encode(texts)` gives unit rows),
    dated as seen from `now`; None when the model should answer: not a question about the person, nor one
    about someone or something that a statement answers well (MAYBE) or that they named
    (names_someone_known) in a message that does not ask the model's advice, and that the learnt reader
    (engine/asking.py) does not read as small talk. With a `reranker` (engine/reranker.py), the best
    statements are reranked by it (`reranked`). Pure apart from the encoder, the reranker and the reader's
    file."""
    if intent.kind != MEMORY and not intent.asks_the_model and _asks_of_one_told_about(intent, statements):
        # "whats femke's last name", "cómo se llama la vet?" after the person spoke of them: asked of theirs
        intent = intent.with_kind(MEMORY, ASKED_OF_ONE_TOLD_ABOUT)
    if intent.kind != MEMORY and not intent.asks_the_model and names_someone_known(intent.message, statements):
        intent = intent.with_kind(MEMORY, "names someone they told about")
    if intent.kind is None:
        return None
    if not statements:
        if intent.kind != MEMORY or _small_talk_to_the_reader(intent, encoder, encoder.encode([intent.message])[0]):
            return None
        return Recall(not_told(intent.message), (), intent.rule)
    abouts = [s.about(asks_own_name=intent.asks_own_name) for s in statements]
    vectors = encoder.encode(
        [intent.message, intent.asked_part, *(s.text for s in statements), *(a for a in abouts if a)]
    )
    question_vectors, sentence_vectors = vectors[:2], vectors[2 : len(statements) + 2]
    if _small_talk_to_the_reader(intent, encoder, question_vectors[0]):
        return None
    about_vectors = np.zeros_like(sentence_vectors)
    rows = iter(vectors[len(statements) + 2 :])
    for i, about in enumerate(abouts):
        if about:
            about_vectors[i] = next(rows)
    scores = score_statements(intent, statements, question_vectors, sentence_vectors, about_vectors, weights)
    if intent.wanted is not None:
        # "the name of my dentist": a sentence about the dentist that names no one is not an answer
        scores = [
            score if intent.wanted.gives(s.text, intent.message) else weights.not_given
            for score, s in zip(scores, statements, strict=True)
        ]
    if (strict := strict_kind(intent.asked_part)) is not None:
        # "how much was the salary offer?": a statement that holds no number does not give it, however close
        scores = [score if strict(s.text) else weights.not_given for score, s in zip(scores, statements, strict=True)]
    if intent.rule in (UNREAD, ELSEWHERE_OF_THEIRS) and intent.wanted is None:
        # words the rules do not read ("rego?", "¿Cómo se llama mi perra?"): a statement answers only with a word
        # of the message that few statements have ("perra"), not by the model's likeness alone, which is weak
        # outside English ("que", "para" are in most of what a Spanish speaker says); what language/asked.py reads of
        # it ("cómo se llama la vet") a statement gives or not, which says more
        scores = [
            score if shares else weights.not_given
            for score, shares in zip(scores, shares_a_rare_word(intent.message, statements), strict=True)
        ]
    if reranker is not None:
        scores, statements = reranked(intent, statements, scores, reranker, weights)
        best_likelihood = max(s.likelihood or 0.0 for s in statements)
        if best_likelihood < weights.rerank_gate and not intent.asks_a_value:
            logger.debug("recall %r: nothing answers, by the reranker (%.3f)", intent.message[:80], best_likelihood)
            return None
    enough = weights.enough if intent.kind == MEMORY else weights.strong
    quoted = choose(statements, scores, sentence_vectors, enough=enough, asks_now=intent.asks_now, weights=weights)
    sure = bool(quoted) and max(scores) >= weights.confident
    if logger.isEnabledFor(logging.DEBUG):
        ranked = sorted(zip(scores, statements, strict=True), key=lambda pair: -pair[0])[:3]
        logger.debug("recall %r (%s): %s", intent.message, intent.rule, [(score, s.text[:60]) for score, s in ranked])
    # "And how old is Sunny? I got him so long ago": a value asked by its words that nothing gives is not known,
    # whatever else the message says; so is a thing of theirs asked in another language ("Wie viele Zimmer hat
    # meine neue Wohnung?"), which a model knows no more of
    asks_what_none_gave = (intent.kind == MEMORY and intent.wanted is not None) or intent.rule == ELSEWHERE_OF_THEIRS
    if not quoted and (intent.kind == MAYBE or not intent.only_asks_memory) and not asks_what_none_gave:
        return None
    if not quoted:
        return Recall(not_told(intent.message), (), intent.rule)
    if len(quoted) == 2:  # a fact that changed: the latest first
        latest, earlier = quoted[1], quoted[0]
        return Recall(latest_reply(latest, earlier, now, sure=sure), (latest, earlier), intent.rule)
    correction = (
        corrected_later(quoted[0], statements, intent.answer_kind)
        or told_now(quoted[0], statements, intent.message, intent.answer_kind)
        or keyed_again(quoted[0], statements, intent.message, intent.answer_kind)
    )
    if correction is not None:
        return Recall(latest_reply(correction, quoted[0], now, sure=sure), (correction, quoted[0]), intent.rule)
    other = beside(statements, scores, quoted[0], enough=enough, weights=weights)
    if other is not None and replaces(*sorted((quoted[0], other), key=lambda s: s.seq)):
        earlier, latest = sorted((quoted[0], other), key=lambda s: s.seq)
        return Recall(latest_reply(latest, earlier, now, sure=sure), (latest, earlier), intent.rule)
    if other is not None:  # two messages answer nearly as well: both, in the order they were said
        quoted = tuple(sorted((quoted[0], other), key=lambda s: s.seq))
    then = "And" if other is not None else "Then"
    return Recall(quote_reply(quoted, now, sure=sure, then=then), quoted, intent.rule)


def shares_a_rare_word(message: str, statements: list[Statement]) -> list[bool]:
    """For each statement, whether it has a word of `message` that at most a quarter of `statements` have
    (and at least one), not a word that asks ("nome") nor a short word of another language ("que", "mi": in
    much a Spanish speaker says, however few statements hold them). Pure."""
    said = [set(content_tokens(s.text)) for s in statements]
    asked = set(content_tokens(message)) - _ASKING_WORDS - _FUNCTION_WORDS
    counts = {word: sum(word in words for words in said) for word in asked}
    rare = {word for word, count in counts.items() if 0 < count <= max(1, len(statements) // 4)}
    return [bool(words & rare) for words in said]


_FUNCTION_WORDS = frozenset(content_tokens(" ".join(FUNCTION_WORDS)))
_OWNER_ARTICLES = frozenset(content_tokens(" ".join(OWNER_ARTICLES)))


def related(message: str, statements: list[Statement], encoder, weights: Weights = WEIGHTS) -> tuple[Statement, ...]:
    """What the person said that bears on a message no model will answer (a request, advice: engine/
    plain_voice.py): the statement that answers it as a question would be answered, when it scores
    `weights.enough` (a guess's score: it is offered as what may help, not as an answer), and the one beside
    it; () otherwise. Pure apart from the encoder."""
    if not statements:
        return ()
    intent = read(message)
    vectors = encoder.encode([intent.message, intent.asked_part, *(s.text for s in statements)])
    sentence_vectors = vectors[2:]
    scores = score_statements(
        intent, statements, vectors[:2], sentence_vectors, np.zeros_like(sentence_vectors), weights
    )
    chosen = choose(statements, scores, sentence_vectors, enough=weights.enough, weights=weights)
    if len(chosen) != 1:
        return chosen
    other = corrected_later(chosen[0], statements, intent.answer_kind) or beside(
        statements, scores, chosen[0], enough=weights.enough, weights=weights
    )
    return tuple(sorted((chosen[0], other), key=lambda s: s.seq)) if other is not None else chosen


def _small_talk_to_the_reader(intent: Intent, encoder, vector) -> bool:
    """Whether the learnt reader (engine/asking.py, for the encoder's model) reads as small talk a message the
    rules took for a question about the person by its form (not a value asked for by its words)."""
    learnt = asking.reader_for(getattr(encoder, "label", None))
    if learnt is None or intent.asks_a_value or not learnt.small_talk(vector):
        return False
    logger.debug("recall %r: small talk by the learnt reader (%s)", intent.message[:80], intent.rule)
    return True


UNBOUNDED = 10**6  # the token budget of recall's look: no budget


def retrievals(
    space: MemorySpace,
    query: str,
    *,
    top_pages: int | None = None,
    top_knowledge: int | None = None,
    token_budget: int | None = None,
) -> tuple[Retrieval, Retrieval]:
    """A weak model's reply's two views of one retrieval: the prompt's (the space's depths and budget, or
    those given: retrieve) and recall's deeper one (RECALL_PAGES pages, RECALL_KNOWLEDGE entries, no
    budget), both cut from one search (retriever.narrowed). Read-only: nothing is heated."""
    fill_pages = memory_settings().fill_pages
    top_pages = space.top_pages if top_pages is None else top_pages
    top_knowledge = space.top_knowledge if top_knowledge is None else top_knowledge
    budget = space.context_token_budget if token_budget is None else token_budget
    deepest = retrieve(
        space,
        query,
        top_pages=max(RECALL_PAGES, top_pages + fill_pages),
        top_knowledge=max(RECALL_KNOWLEDGE, top_knowledge),
        token_budget=UNBOUNDED,
        fill_pages=0,
        count_hits=False,
    )
    prompt = narrowed(deepest, top_pages=top_pages, top_knowledge=top_knowledge, fill_pages=fill_pages, budget=budget)
    deep = narrowed(deepest, top_pages=RECALL_PAGES, top_knowledge=RECALL_KNOWLEDGE, fill_pages=0, budget=UNBOUNDED)
    return prompt, deep


def used_by(deep: Retrieval, quoted: tuple[Statement, ...], *, token_budget: int) -> Retrieval:
    """What a reply quoting `quoted` used of recall's retrieval: the turns it quotes, and the profile and
    knowledge entries that came from them; nothing for a reply that quotes nothing ("you haven't told me").
    `token_budget` is the prompt's, for the record. Pure."""
    quoted_pages = {statement.page_id for statement in quoted}

    def from_quoted(item: Item) -> bool:
        if item.kind in ("short_term", "page"):
            return item.id in quoted_pages
        return bool(quoted_pages & set(item.provenance.get("source_page_ids", [])))

    used = Retrieval(query=deep.query, token_budget=token_budget)
    for name in ("short_term", "pages", "profile", "user_knowledge", "assistant_knowledge"):
        setattr(used, name, [item for item in getattr(deep, name) if from_quoted(item)])
    sessions = {item.provenance.get("session_id") for item in used.pages}
    used.sessions = [session for session in deep.sessions if session.id in sessions]
    used.tokens_used = sum(item.tokens for item in used.items())
    return used


def answer(
    space: MemorySpace, query: str, *, now: datetime | None = None, deep: Retrieval | None = None
) -> Recall | None:
    """The reply to `query` made of what the person said (`respond`), or None when the model should
    answer. The message is read once (intent.read); its statements come from `deep`, recall's view of the
    reply's retrieval (`retrievals`), made here when not given, read-only: nothing is heated or stored."""
    intent = read(query)
    if intent.kind is None and not intent.asks_plainly:
        return None
    if deep is None:
        _, deep = retrievals(space, query)
    now = now or timezone.now()
    encoder = get_embedder()
    result = respond(intent, statements_of(deep, query), encoder, now, reranker=get_reranker())
    return asks_what_was_forgotten(space, intent, result, encoder) or result


FORGOTTEN_CLOSE = 0.6  # a question this close (MiniLM cosine) to a statement asked to be forgotten asks for it ...
# ... chosen on two sets read for it (docs/benchmarks.md): the questions about what was forgotten scored 0.59-0.88,
# the other questions of the same conversations at most 0.66 (one), mostly under 0.35.
MAX_FORGOTTEN = 200  # the latest statements forgotten that a question is held against
ASKED_TO_FORGET = "I was asked to forget that, so I no longer have it."  # by the person, or in the admin
_FORGOTTEN_VECTORS = RecentVectors(size=4 * MAX_FORGOTTEN)  # the marks' vectors, by the model's label


def asks_what_was_forgotten(space: MemorySpace, intent: Intent, result: Recall | None, encoder) -> Recall | None:
    """The reply to a question about what the person asked to forget ("escalation pager number?" after "drop the
    escalation number from memory"): the statement closest to the question among those forgotten (curation's
    marks, which keep the words for Undo) is at least FORGOTTEN_CLOSE and closer than anything `result` quotes, and
    nothing it quotes told the same again since (as close to it).
    The reply says so and gives nothing of what was forgotten (nor when: a history imported carries out its
    requests when imported, not when they were said); None otherwise. Reads the marks."""
    if intent.kind not in (MEMORY, MAYBE):
        return None
    forgotten = list(
        StatementMark.objects.filter(space=space, kind=StatementMark.Kind.FORGOTTEN, field="user_input")
        .order_by("-at", "-pk")
        .values_list("sentence", "page__seq")[:MAX_FORGOTTEN]
    )
    if not forgotten:
        return None
    quoted = result.quoted if result is not None else ()
    asked = [intent.message, intent.asked_part or intent.message]
    label = getattr(encoder, "label", type(encoder).__name__)
    kept = _FORGOTTEN_VECTORS.get_many(  # the same marks for every question: each encoded once a process
        [f"{label}\x00{sentence}" for sentence, _ in forgotten],
        lambda keys: encoder.encode([key.partition("\x00")[2] for key in keys]),
    )
    vectors = np.vstack([encoder.encode([*asked, *(s.text for s in quoted)]), kept])
    closeness = (vectors[: len(asked)] @ vectors[len(asked) :].T).max(axis=0)
    quoted_best = float(closeness[: len(quoted)].max()) if quoted else -1.0
    marks = closeness[len(quoted) :]
    best = int(np.argmax(marks))
    if marks[best] < FORGOTTEN_CLOSE or marks[best] <= quoted_best:
        return None
    quoted_vectors, forgotten_vector = (
        vectors[len(asked) : len(asked) + len(quoted)],
        vectors[len(asked) + len(quoted) + best],
    )
    if any(
        s.seq > forgotten[best][1] and float(v @ forgotten_vector) >= FORGOTTEN_CLOSE
        for s, v in zip(quoted, quoted_vectors, strict=True)
    ):
        return None  # told again since ("forget my old number", then "my number is now ..."): the quote answers
    return Recall(ASKED_TO_FORGET, (), intent.rule)
