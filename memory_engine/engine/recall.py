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
when another message scores within a hair of the best (ALSO_MARGIN), both are quoted rather than one
guessed. A weak match is offered as a guess ("I'm not sure that's it, but ..."); when nothing matches,
the reply says so. Small talk and requests for advice stay with the model; a question that names someone
the person told about ("rafael instrument?") is about what they said, however it is worded.

Measured: SmolLM2-135M asked under a grammar to pick the note that answers a question picked the first of
four in 215 cases of 215, so the choice is made here, by score. How each weight was chosen, and what the
answers are worth on conversations written by others: docs/benchmarks.md, "Chat with no key".

`question_kind` and the scoring are pure; `answer` reads the pages a retrieval points at.
"""

import logging
import re
from dataclasses import dataclass
from datetime import datetime

import numpy as np
from django.utils import timezone

from memory_engine.engine import curation
from memory_engine.engine.asked import asked_of
from memory_engine.engine.grounding import CHANGED, changes
from memory_engine.engine.profile_attributes import ASKED_AS, is_multi_valued, values_in
from memory_engine.engine.retriever import Retrieval, retrieve
from memory_engine.engine.summaries import split_sentences
from memory_engine.models import MemorySpace, Page
from memory_engine.store.embeddings import get_embedder
from memory_engine.store.keywords import content_tokens

logger = logging.getLogger(__name__)

NOT_TOLD = "I don't think you've told me that yet."
# "what's my blood type?", "the name of my dentist?": the thing of theirs a question asks for, at the end of
# the clause that asks.
_WORDS = r"(?:[a-z0-9][a-z0-9'\-]*\s+){0,3}?[a-z0-9][a-z0-9'\-]*"
_CLAUSE_END = (
    r"(?:\s+(?:is|was|are|were))?(?:\s+(?P<called>called|named))?"
    r"(?:\s+(?:again|now|these days|exactly|pls|please|then))?\s*[?.!]*$"
)
_THE_X_OF_MINE = re.compile(rf"\bthe\s+({_WORDS})\s+of\s+(?:my|our)\s+({_WORDS}){_CLAUSE_END}")
_MINE = re.compile(rf"\b(?:my|our)\s+({_WORDS}){_CLAUSE_END}")


def not_told(question: str) -> str:
    """What a reply says when the person never told what they ask, in their terms: "You haven't told me your
    blood type yet." for "What's my blood type?", "your dentist's name" for "the name of my dentist";
    NOT_TOLD when it cannot say what they asked for. Pure."""
    if (asked := asked_of(question)) is not None:
        return f"You haven't told me {asked.in_their_terms(question)} yet."
    # The words as they wrote them ("ID", not the chat spelling "i'd"), in the sentences that ask.
    lowered = " ".join(question.replace("\u2019", "'").lower().split())
    for sentence in _SENTENCES.findall(lowered):
        if not _questions(_plain(sentence)):
            continue
        for clause in sentence.split(","):
            if found := _THE_X_OF_MINE.search(clause.strip()):
                return f"You haven't told me your {found.group(2)}'s {found.group(1)} yet."
            if found := _MINE.search(clause.strip()):
                thing = f"{found.group(1)}'s name" if found.group("called") else found.group(1)
                return f"You haven't told me your {thing} yet."
    return NOT_TOLD


# --- Which messages are questions about the person ------------------------------------------------

# Chat spelling, as people type on a phone, in the forms the patterns below expect.
_CHAT_SPELLING = {
    "u": "you", "ur": "your", "r": "are", "whats": "what's", "wheres": "where's", "whens": "when's",
    "whos": "who's", "hows": "how's", "im": "i'm", "ive": "i've", "id": "i'd", "dont": "don't",
    "didnt": "didn't", "cant": "can't", "wat": "what", "wot": "what", "pls": "please", "plz": "please",
}  # fmt: skip
_CHAT_WORD = re.compile(r"\b(?:" + "|".join(_CHAT_SPELLING) + r")\b")
_WH_WORDS = r"(?:what|what's|which|who|who's|whose|where|where's|when|when's|how|how's)"
_AUX_WORDS = r"(?:do|does|did|is|are|am|was|were|have|has|had|can|could|would|will|should|shall|tell me|remind me|any)"
# A question opens its sentence, perhaps after a filler or a topic ("quick check: which city ...", "and the
# furball, what's his name?"), or ends with a question mark.
_FILLER = r"(?:and|so|but|now|wait|ok|okay|btw|also|hey|um|hmm|oh|lol|haha|random|quick check|quick question)"
_OPENS_QUESTION = re.compile(rf"^(?:{_FILLER}[\s,:]+)*(?:{_WH_WORDS}|{_AUX_WORDS})\b")
_OPENS_REQUEST = re.compile(r"^(?:should|shall|could|can|would|will|do|does|is|are) (?:i|we|you)\b")
# A clause that asks (not a relative clause: "I moved to Leeds, which is nice" tells).
_OPENS_WH = re.compile(
    r"^(?:what's|when's|where's|(?:what|when|where) (?:is|was|were|are|did|do|does)|(?:what|which) (?:time|day|one)|"
    r"who (?:did|do|does))\b"
)
_WH = re.compile(r"\b(?:what|what's|which|who|who's|whose|where|where's|when|when's|how many|how old)\b")
_FIRST_PERSON = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself|we|we're|we've|our|ours|us)\b")
_POSSESSIVE = re.compile(r"\b(?:my|our)\b")
# "which antibiotic should I warn them about": asks for a thing of a kind, not what to do ("what should I cook").
_WH_THING = re.compile(
    r"\b(?:which|what|whose) (?!(?:should|shall|can|could|would|might|must|do|does|did|is|are|was|were|will|to|"
    r"about|if|else|i|you|we|they|he|she|it|a|an|the|kind|sort|type)\b)[a-z]+"
)
# Someone asking for a value of theirs, told as a statement: "the broker wants to know who I haul for now",
# "pharmacy's asking for my date of birth".
_ASKED_FOR = re.compile(
    r"\b(?:wants? to know|needs? to know|(?:is|are|was|were|keeps?|kept) asking(?: me)?(?: for| about)?|"
    r"asked (?:me )?(?:for|about)|wants? (?:my|our)|needs? (?:my|our))\b"
)
_SENTENCES = re.compile(r"[^.!?]+[.!?]*")
# A question asked inside a run-on sentence, as people type on a phone: "im making a sticker of my hamster
# what did i say his name was", "my assistant wants to plan her week when is my deadline again". A
# relative clause has no verb straight after its wh-word ("that's where my mum lives") and is not one.
_EMBEDDED_WH = re.compile(
    r"\b(?:what|when|where|which|who|whose|how many|how old|how much)(?: \w+)? (?:is|was|are|were|did|do|does) "
    r"(?:i|my|we|our|he|his|she|her|they|their|the)\b"
    r"|\b(?:what's|when's|where's|who's) (?:my|our|his|her|their|the)\b"
    r"|\bhow (?:much|many|long|big|far|old) (?:is|was|are|were|did|do|does)\b"
)
# Asking for a value of theirs without a question: "tell me the name i told you", "the groomer's form
# wants the dog's name", "can you add her name to the email". The value is theirs or known ("the", "her"),
# not one to be made up ("a name for my dog") or a manner of speaking ("at the same time"), and wanted
# ("no need for the full address" is not).
_TOLD_YOU = re.compile(
    r"\b(?:i(?:'ve)? (?:told|tell|gave|give|quoted|mentioned|said)(?: it| them)?(?: to)? (?:you|u)|"
    r"what (?:i|did i) (?:said|say|told|tell))\b"
)
# A value asked for in a few words, with no verb to ask it: "Dentist's surname needed for the claim.",
# "exam date now pls", "Span of the crossing?".
_WANTED_NOUNS = "name|date|time|year|make|model|address|city|town|area|place|number|age|birthday|title"
_VALUE_NOUNS = (
    rf"(?:{_WANTED_NOUNS}|surname|day|postcode|price|cost|rate|rent|sum|total|amount|fee|span|size|length|height|"
    r"weight|dose|strength|code|reference|extension|ext)"
)
_TERSE_VALUE = re.compile(rf"\b{_VALUE_NOUNS}s?\b.*(?:\?|\b(?:please|pls|plz|needed|confirm|again|now)\b)")
TERSE_WORDS = 12  # a message this short asking for a value asks for one of theirs
_VALUE_WANTED = re.compile(
    r"(?<!no )(?<!n't )\b(?:wants?|needs?|asks?|asking|asked|tell me|spell out|give me|remind me of|put|add|"
    r"fill in|filling in)\b[^.?!]{0,40}?\b(?:the|my|our|his|her|their|its|\w+'s)\s+"
    r"(?:(?!same|best|whole|wrong|next|last)\w+\s+){0,2}?"
    rf"(?:{_WANTED_NOUNS})\b"
)
# Asking to be reminded of something said: a question about memory, whatever else it asks.
_MEMORY_CUE = re.compile(
    r"\b(?:remind me|remember|recall|did i (?:tell|say|mention)|have i (?:told|said|mentioned)|"
    r"i (?:told|said|mentioned)|i forgot|i forget|forgot what|blanking|"
    r"(?:do )?you know (?:(?:what|where|when|who|which|how many|how old|if|whether)\s+(?:\w+\s+){0,2}?)?"
    r"(?:my|i|i'm|i've|me|we|our))\b"
    # "whats his name again, my brain is full of boxes": asked again, inside a request or not
    r"|\b(?:what|what's|when|when's|where|where's|who|who's|which|whose)\b[^,.?!]{0,30}\bagain\b"
)
# "I'm buying him kit for his birthday, remind me what position he plays": asked in passing, no question mark.
_REMIND = re.compile(
    r"\b(?:remind me|tell me again)(?: of| about)? (?:what|where|when|who|which|whose|how many|how much|how old|"
    r"the|my|our|his|her|their)\b"
)
_YOU_REMEMBER = re.compile(r"\byou (?:still )?(?:remember|recall)\b.*\b(?:my|our|i|we)\b")
_AGAIN = re.compile(r"\bagain\b\W*$")  # "what's his name again?": a memory question, unless it asks advice
# Asking for advice, an opinion, knowledge of the world or something made up: small talk for the model,
# even when it is about the person ("is it too late to learn at my age?").
_REQUEST = re.compile(
    r"\b(?:should|shall|ought to)\b|\b(?:could|can|would|might) (?:i|we)\b|"
    r"\bhow (?:do|can|could|would|might) (?:i|we|you)\b|\b(?:i|we) (?:can|could|might|would)\b(?!'t)|"
    r"\bhow (?:long|much|many|often) (?:should|can|could) (?:i|we)\b|"
    r"\b(?:recommend|recommendation|suggest|suggestion|advice|advise|tips?|ideas?|help me|opinion|"
    r"(?:do|did) you (?:\w+ )?(?:think|reckon)|you reckon|what would you|would you|could you|"
    r"can you (?!remind|tell me what|"
    r"tell me where|tell me when|tell me who|tell me how many)|your (?:take|view|opinion|thoughts)|"
    r"what do you make of|is it (?:\w+ )?(?:worth|ok|okay|good|bad|normal|safe|true|too|better|possible)|"
    r"is there|are there|do you know (?:any|a|an|how|why|if there)|"
    r"tell me (?:a|an|something|some|about|more|why|how)|joke|pun|story|poem|fun fact|explain|translate|"
    r"write|difference between|what does \w+(?: \w+)? mean|would go|goes (?:well )?with|"
    r"what (?:do|can) (?:i|you|we) (?:\w+ )?(?:do(?! for (?:a living|work))|say|tell|make|cook|get|buy|wear|bring)|"
    r"what(?:'s| is) (?:a|an|the) (?:good|best|easy|quick|nice|fun)|good way to|best way to)\b"
)
_OWN_NAME = re.compile(r"\bmy name\b|\bwho am i\b|\bam i called\b|\bcall me\b|\bmy full name\b")
# A sentence giving the person's own name: no answer to "what's my GP's name?".
_GIVES_OWN_NAME = re.compile(r"\b(?:my name is|my name's|call me|i'm called|i am called)\b")
MEMORY = "memory"
MAYBE = "maybe"


def _plain(message: str) -> str:
    text = " ".join(message.replace("\u2019", "'").lower().split())
    return _CHAT_WORD.sub(lambda match: _CHAT_SPELLING[match.group(0)], text)


def _questions(text: str) -> list[str]:
    """The sentences of `text` (plain) that ask something: ending with "?", opening as a question, or
    ending with a clause that opens with a wh-word ("the insurer wants the make of my car, what was it
    again")."""
    found = []
    for match in _SENTENCES.finditer(text):
        sentence = match.group(0).strip()
        last_clause = sentence.rsplit(",", 1)[-1].strip()
        if (
            sentence.endswith("?")
            or _OPENS_QUESTION.match(sentence)
            or _OPENS_WH.match(last_clause)
            or _EMBEDDED_WH.search(sentence)
        ):
            found.append(sentence)
    return found


def _asking_clauses(question: str) -> list[str]:
    """The clauses of a sentence that asks which do the asking: "who's the friend that ran the marathon, I
    want to ask her for tips" asks who, and wants tips in a clause that asks nothing. The whole sentence
    when no clause alone asks. Pure."""
    clauses = [clause.strip() for clause in question.split(",")]
    asking = [clause for clause in clauses if _questions(clause)]
    return asking or [question]


def question_kind(message: str) -> str | None:
    """What `message` asks. MEMORY: about something the person said or is (their cat's name, where they
    live, when their trip is): a question with a first-person word, or one asking to be reminded. MAYBE: a
    question about someone or something, in no one's words ("Whose wedding is in January?"), which a
    statement of theirs may answer, and so may a request about something of theirs ("what town should I
    put as my address?"). None: no question, or a request for advice, an opinion, knowledge of the world
    or something made up (small talk for the model). Only the sentences that ask are read: "I've
    tried everything. What helps with jet lag?" asks nothing about the person. Pure."""
    text = _plain(message)
    asked = _questions(text)
    if _TOLD_YOU.search(text) or _VALUE_WANTED.search(text):
        return MEMORY
    if len(text.split()) <= TERSE_WORDS and _TERSE_VALUE.search(text) and not any(map(_REQUEST.search, asked)):
        return MEMORY
    if not asked:
        # "let's see if you remember my wife's name": asked without a question
        recalls = text.startswith(("tell me what", "tell me where", "tell me when")) or bool(_REMIND.search(text))
        if recalls or _YOU_REMEMBER.search(text):
            return MEMORY
        asked_for = _ASKED_FOR.search(text)
        return MEMORY if asked_for and _FIRST_PERSON.search(text[asked_for.start() :]) else None
    requests = [question for question in asked if any(map(_REQUEST.search, _asking_clauses(question)))]
    if any(_MEMORY_CUE.search(question) for question in asked) or (_MEMORY_CUE.search(text) and not requests):
        return MEMORY
    if requests:
        # "what town should I put as my address on this form?": a request, but for a value of theirs that
        # a statement may hold; "should I take antihistamines?" or "is it normal to be scared at my age?"
        # ask for advice or an opinion, which no statement of theirs answers.
        values = [
            q
            for q in requests
            if (_POSSESSIVE.search(q) and _WH.search(q)) or (_FIRST_PERSON.search(q) and _WH_THING.search(q))
        ]
        return MAYBE if values else None
    if any(_AGAIN.search(question) for question in asked):
        return MEMORY
    if any(_FIRST_PERSON.search(question) for question in asked):
        return MEMORY
    return MAYBE if any(_WH.search(question) for question in asked) else None


# Who wants the answer, before what they want: "the dentist wants to know", "the removal guy asked".
_ASKER = re.compile(
    r"^.*?\b(?:wants? to know|needs? to know|(?:is|are|was|keeps?) asking(?: me)?|asked(?: me)?|wants|needs)\b\s*"
)


def asked_part(message: str) -> str:
    """The part of `message` that asks: its sentences that ask, without who is asking ("the insurance guy
    wants to know the make of my car, what was it again" -> "the make of my car, what was it again");
    the whole message when no sentence asks. Pure."""
    asked = _questions(_plain(message)) or [_plain(message)]
    return " ".join(_ASKER.sub("", sentence, count=1) or sentence for sentence in asked)


def is_statement(sentence: str) -> bool:
    """Whether a sentence tells something rather than asks it: it neither ends with a question mark nor
    opens as a question ("btw do u think its worth buying a used laptop" asks). A request that tells
    something on the way ("my husband Otieno says I should rehearse") is a statement. Pure."""
    return not _questions(_plain(sentence))


def asks_about_memory(message: str) -> bool:
    """Whether `message` asks about something the person said or is (question_kind is MEMORY). Pure."""
    return question_kind(message) == MEMORY


# --- What kind of answer a question wants -------------------------------------------------------

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_WHEN_WORDS = re.compile(
    rf"\b(?:{_MONTHS}|monday|tuesday|wednesday|thursday|friday|saturday|sunday|mon|tue|tues|wed|thu|thurs|fri|"
    r"sat|sun|today|tonight|tomorrow|yesterday|weekend|week|month|year|ago|next|last|morning|afternoon|"
    r"evening|noon|midnight|christmas|easter|summer|winter|spring|autumn|fall|birthday|"
    r"\d{1,2}(?:st|nd|rd|th)|\d{1,2}[:.]\d{2}|\d{1,2}/\d{1,2}|\d{4}|\d{1,2}\s?(?:am|pm)|o'clock)\b"
)
_NUMBER_WORDS = re.compile(
    r"(?:[$\u20ac\u00a3]?\b\d+(?:[.,]\d+)*(?:k|m|bn|%)?(?!\w))"  # 24, 92k, \u20ac24, 60%, 1,200
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety|"
    r"hundred|thousand|a couple|a few|several|dozen|twins|triplets)\b"
)
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)?")
_NOT_NAMES = frozenset(["I", "I'm", "I've", "I'd", "I'll", "OK", "Ok"])
_NAMING = re.compile(r"\b(?:called|named|name is|name's|names are|i call|we call|goes by|nicknamed)\b")
# "my housemate Tash", "our cat Mango", "my monstera, Don Fermín", "Pepper (my cat)".
_NAMED_THING = re.compile(
    r"\b(?i:my|our)\s+(?:[a-z\-]+\s+){0,2}?[a-z\-]+,?\s+(?:(?:Dr|Mr|Mrs|Ms|Prof|Don|Doña)\.?\s+)?[A-Z][\w\-]+"
    r"|\b[A-Z][\w\-]+\s*\((?i:my|our)\s+[a-z\- ]+\)"
)

WANTS_WHEN = re.compile(
    r"\b(?:when|what date|which date|what day|which day|what time|what month|what year|how long ago)\b"
)
WANTS_NUMBER = re.compile(
    r"\b(?:how many|how much|how old|what age|how long|how far|how often|what number|what mark|what grade|"
    r"what score|what price)\b"
)
WANTS_NAME = re.compile(r"\b(?:who|whom|whose|name|names|call|called|named)\b")
# A place, a make, a team: a proper name, but not one given to something of theirs ("my wife, Eileen").
WANTS_PROPER = re.compile(
    r"\b(?:where|(?:what|which) (?:\w+ )?(?:city|town|country|place|"
    r"team|street|school|company|firm|brand|make|shop|store|restaurant|hospital|clinic|club|band|airline|"
    r"airport|uni|university|college|neighbourhood|neighborhood|area|suburb|village|gym|pub|bar|cafe|"
    r"church|hotel|venue|breed|model))\b"
)


def answer_kind(question: str) -> str | None:
    """ "when", "number", "name" (of a person or a pet) or "proper" (a place, a make, a team) when the
    question asks for one; else None."""
    text = question.lower()
    if WANTS_WHEN.search(text):
        return "when"
    if WANTS_NUMBER.search(text):
        return "number"
    if WANTS_NAME.search(text):
        return "name"
    if WANTS_PROPER.search(text):
        return "proper"
    return None


def answer_fit(sentence: str, kind: str | None) -> float:
    """How well `sentence` holds an answer of the kind asked for: KIND_BONUS when it holds a date or time,
    a number or a proper name (NAMING_BONUS more, to a question asking a name, when it names something of
    theirs: "my housemate Tash", "a cat called Pepper", "a Kenworth I call Big Sue"), -KIND_PENALTY when
    it holds none, 0 when no kind is asked or it cannot tell (a name in a sentence written all in lower
    case). Pure."""
    if kind is None:
        return 0.0
    lowered = sentence.lower()
    if kind == "when":
        return KIND_BONUS if _WHEN_WORDS.search(lowered) else -KIND_PENALTY
    if kind == "number":
        return KIND_BONUS if _NUMBER_WORDS.search(lowered) else -KIND_PENALTY
    if kind == "name" and (_NAMING.search(lowered) or _NAMED_THING.search(sentence)):
        return KIND_BONUS + NAMING_BONUS
    if sentence == lowered:
        return 0.0
    return KIND_BONUS if any(_is_name(sentence, match) for match in _WORD.finditer(sentence)) else -KIND_PENALTY


def _is_name(sentence: str, match: re.Match) -> bool:
    """A capitalised word that does not open a sentence: a name, in well-written text."""
    word = match.group(0)
    if not word[0].isupper() or word in _NOT_NAMES:
        return False
    before = sentence[: match.start()].rstrip(" \"'\u201c(")
    return bool(before) and before[-1] not in ".!?:"


# --- Scoring the person's statements ---------------------------------------------------------------

# Words of a question that say it is a question about memory, not what it is about.
_ASKING_WORDS = frozenset(
    content_tokens(
        "remind remember recall told tell said say mention mentioned forgot forget name called named again "
        "know current currently now exactly actually kind sort"
    )
)
LEXICAL_WEIGHT = 0.25  # a question's own words found in the statement, as a share of its words
KIND_BONUS = 0.12  # the statement holds the kind of answer asked for (a date, a number, a name)
KIND_PENALTY = 0.12  # it does not
NAMING_BONUS = 0.16  # it names something of theirs, to a question asking a name
CONFIDENT = 0.42  # from this score the quote is given as the answer ...
ENOUGH = 0.25  # ... from this one as a guess ("I'm not sure, but ..."); below it, nothing answers
VALUE_BONUS = 0.10  # the statement states a profile value of what the question asks about
STRONG = 0.52  # a question that may be about something else (MAYBE) is answered from memory from this score
MIN_CONTENT_WORDS = 2  # a sentence with fewer content words answers nothing
MAX_MESSAGE_CHARS = 300  # a message this short is also a candidate whole, beside its sentences
RECALL_PAGES = 30  # past turns read for a question (a prompt's retrieval reads the space's top_pages, 10)
RECALL_KNOWLEDGE = 20
NEWER_MARGIN = 0.12  # a newer statement this close to the best is quoted after it ...
SAME_SUBJECT = 0.45  # ... when it is this close to the best one (cosine): the same subject, told again
NOW_MARGIN, NOW_SUBJECT = 0.25, 0.30  # the same, for a question about how things are now
NOT_GIVEN = -1.0  # the score of a statement that does not give what the question asks (engine/asked.py)
ALSO_MARGIN = 0.05  # another message this close to the best is quoted beside it (nearly a tie)
QUOTE_WHOLE_CHARS = 240  # a message this short is quoted whole, not only its sentence that matched


@dataclass(frozen=True)
class Statement:
    """One sentence the person said, and when."""

    text: str
    said_at: datetime
    page_id: int
    seq: int
    message: str = ""  # what its message told (its sentences that ask left out), quoted when short
    # A statement that stands corrected (engine/curation.py): the words first said, and when corrected.
    first_said: str = ""
    corrected_at: datetime | None = None

    @property
    def quote(self) -> str:
        """What a reply quotes: the whole message when it is short (QUOTE_WHOLE_CHARS), since the answer is
        often in the sentence beside the one that matched ("Need a birthday dinner idea for my husband
        Mattias. He doesn't eat fish."); else the sentence."""
        message = " ".join(self.message.split())
        return message if message and len(message) <= QUOTE_WHOLE_CHARS else self.text

    def as_dict(self) -> dict:
        """The statement as the API and the inspector show it."""
        out = {"page_id": self.page_id, "seq": self.seq, "text": self.quote, "said_at": self.said_at.isoformat()}
        if self.corrected_at is not None:
            out.update(first_said=self.first_said, corrected_at=self.corrected_at.isoformat())
        return out

    def told(self, now: datetime) -> str:
        """How a reply gives it: when it was said and its words; a corrected statement as "first told me X;
        corrected on <day> to Y", never the words first said as if they were current."""
        if self.corrected_at is None:
            return f"{when_said(self.said_at, now)}: \u201c{self.quote}\u201d"
        return (
            f"{when_said(self.said_at, now)}: \u201c{self.first_said}\u201d; "
            f"corrected {when_said(self.corrected_at, now)} to \u201c{self.text}\u201d"
        )

    def about(self, question: str) -> str:
        """What the sentence says about the person, in the words a question about it would use ("my job,
        my work, ...: pastry chef"); "" when it states no profile value (profile_attributes.values_in). The
        person's own name only for a question about it: "What's my boy called?" asks another name."""
        asks_own_name = bool(_OWN_NAME.search(question.lower().replace("\u2019", "'")))
        return "; ".join(
            f"{ASKED_AS.get(attribute, attribute)}: {value}"
            for attribute, value in values_in(self.text)
            if attribute != "name" or asks_own_name
        )


@dataclass(frozen=True)
class Recall:
    """A reply made of the person's own words: `quoted` are the statements it quotes (none: nothing the
    person said answers the question, and `text` says so)."""

    text: str
    quoted: tuple[Statement, ...]


def score_statements(
    question: str,
    statements: list[Statement],
    question_vector: np.ndarray,
    vectors: np.ndarray,
    about_vectors: np.ndarray,
) -> list[float]:
    """How well each statement answers the question: the MiniLM cosine of the question (one vector, or
    several rows: the whole message and the part that asks, asked_part) with the sentence or with what it
    says about the person (Statement.about; a zero row when nothing), whichever is closest, plus the
    share of the question's words either holds, plus or minus whether the sentence holds the kind of
    answer asked for. Pure."""
    words = set(content_tokens(question)) - _ASKING_WORDS
    kind = answer_kind(question)
    asks_own_name = bool(_OWN_NAME.search(_plain(question)))
    scores = []
    questions = np.atleast_2d(question_vector)
    sentence_closeness = (vectors @ questions.T).max(axis=1)
    about_closeness = (about_vectors @ questions.T).max(axis=1)
    for statement, sentence, about in zip(statements, sentence_closeness, about_closeness, strict=True):
        cosine = max(float(sentence), float(about))
        if about >= sentence and about >= SAME_SUBJECT:
            cosine += VALUE_BONUS  # it states the value asked for, not merely the topic
        said = set(content_tokens(f"{statement.text} {statement.about(question)}"))
        overlap = len(words & said) / len(words) if words else 0.0
        bonus = answer_fit(statement.text, kind)
        if kind == "name" and not asks_own_name and _GIVES_OWN_NAME.search(statement.text.lower()):
            bonus = -KIND_PENALTY  # their name, to a question about someone else's
        scores.append(round(cosine + LEXICAL_WEIGHT * overlap + bonus, 6))
    return scores


_NOW = re.compile(r"\b(?:now|these days|currently|at the moment|any ?more|nowadays|lately|latest|new|still)\b")


def choose(
    statements: list[Statement],
    scores: list[float],
    vectors: np.ndarray,
    *,
    enough: float = ENOUGH,
    asks_now: bool = False,
) -> tuple[Statement, ...]:
    """The best statement, and a newer one on the same subject that scores nearly as well, oldest first;
    () when none scores `enough`. Ties go to the newer statement. `asks_now` (the question asks how things
    are now: "where do I live these days?") lets a newer statement further from the best one in. Pure."""
    margin, subject = (NOW_MARGIN, NOW_SUBJECT) if asks_now else (NEWER_MARGIN, SAME_SUBJECT)
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
        and float(vectors[i] @ vectors[best]) >= subject
        and (
            scores[i] >= max(scores[best] - margin, enough)
            # "update: they postponed the exam to the 21st": a later statement that says the fact changed
            or (scores[i] >= enough and CHANGED.search(statements[i].text.lower()) is not None)
        )
    ]
    if not newer:
        return (statements[best],)
    return (statements[best], statements[newer[0]])  # the best of them


def beside(
    statements: list[Statement], scores: list[float], chosen: Statement, *, enough: float = ENOUGH
) -> Statement | None:
    """The best statement of another message that scores within ALSO_MARGIN of the chosen one, quoted
    beside it: when two messages answer nearly as well, the reply shows both rather than guess. Pure."""
    best = max(scores)
    others = [
        (score, statement)
        for score, statement in zip(scores, statements, strict=True)
        if statement.page_id != chosen.page_id and score >= max(best - ALSO_MARGIN, enough)
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
    told = "you first told me" if first.corrected_at is not None else "you told me"
    opening = told[0].upper() + told[1:] if sure else f"I'm not sure that's it, but {told}"
    parts = [f"{opening} {first.told(now)}"]
    parts += [f"{then} {s.told(now)}" for s in later]
    return " ".join(parts)


def replaces(earlier: Statement, later: Statement) -> bool:
    """Whether the later statement gives another value of an attribute that has one value at a time ("we live
    in Leeds", then "we moved to Bristol"), or says that a time, a date or a number changed ("standup is at
    9:30", then "standup moved to 9:15": grounding.changes): then it is the latest, not a second answer.
    Pure."""
    before = {attribute: value for attribute, value in values_in(earlier.text) if not is_multi_valued(attribute)}
    changed_value = any(before.get(attribute) not in (None, value) for attribute, value in values_in(later.text))
    return changed_value or changes(earlier.text, later.text)


def latest_reply(latest: Statement, earlier: Statement, now: datetime, *, sure: bool = True) -> str:
    """The reply to a question whose answer changed ("we live in Leeds", later "we moved to Bristol"): the
    latest statement first, said to be the latest, then the one before it. Pure."""
    opening = "The latest you told me" if sure else "I'm not sure that's it, but the latest you told me"
    return f"{opening}, {latest.told(now)}. Before that, {earlier.told(now)}."


def statements_of(retrieval: Retrieval, asked: str) -> list[Statement]:
    """The person's own sentences on the pages the retrieval found: the recent turns, the past turns it
    ranked, and the turns its profile and knowledge entries came from, whether or not the prompt's token
    budget kept them. Questions, requests and sentences too slight to answer anything are left out, and so
    is the question being asked. Reads those pages."""
    page_ids = [item.id for item in (*retrieval.short_term, *retrieval.pages)]
    page_ids += [item.id for item in retrieval.cut if item.kind in ("short_term", "page")]
    for item in (*retrieval.profile, *retrieval.user_knowledge, *retrieval.cut):
        page_ids += item.provenance.get("source_page_ids", [])
    pages = Page.objects.filter(pk__in=set(page_ids)).only("seq", "user_input", "timestamp").order_by("seq")
    corrections = curation.corrections_in(set(page_ids))
    asked_words = " ".join(asked.lower().split())
    found: list[Statement] = []
    seen: set[str] = set()

    def add(text: str, page: Page, message: str) -> None:
        key = " ".join(text.lower().split())
        if key not in seen and key != asked_words and len(set(content_tokens(text))) >= MIN_CONTENT_WORDS:
            seen.add(key)  # "Morning!", "moved!" are too slight to answer anything
            mark = next((m for m in corrections.get(page.pk, []) if curation.span(m.replacement, text)), None)
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

    for page in pages:
        sentences = split_sentences(page.user_input)
        tells = [is_statement(sentence) for sentence in sentences]
        told = [sentence for sentence, tell in zip(sentences, tells, strict=True) if tell]
        # The clauses of a sentence that also asks: "how much should I charge for a set menu, most of our
        # mains are around €24" tells in its second clause; "I drive a 2011 Skoda, should I get it serviced"
        # is clearer without the question.
        clauses_told = []
        for sentence in sentences:
            clauses = [clause.strip() for clause in sentence.split(",")]
            telling = [
                clause for clause in clauses if is_statement(clause) and not _OPENS_REQUEST.match(_plain(clause))
            ]
            clauses_told.append(telling if len(telling) < len(clauses) else [])  # a clause asks: the rest tell
        # What the message tells, in its order, without what it asks: what a quote of it shows.
        message = " ".join(
            sentence if tell else ", ".join(telling)
            for sentence, tell, telling in zip(sentences, tells, clauses_told, strict=True)
            if tell or telling
        )
        for sentence in told:
            add(sentence, page, message)
        for telling in clauses_told:
            for clause in telling:
                add(clause, page, message)
        # The message too, when short: "My old Saab refused to start. It's 24 years old." answers "How old
        # was my car?" only whole.
        if len(told) > 1 and len(" ".join(told)) <= MAX_MESSAGE_CHARS:
            add(" ".join(told), page, message)
    return found


# Capitalised, but no one they told about: "my English is terrible", "any German podcasts?".
_LANGUAGES = frozenset(
    re.findall(
        r"\w+",
        "english british american german french spanish italian portuguese dutch polish swedish norwegian "
        "danish finnish russian ukrainian greek turkish arabic hebrew hindi urdu bengali chinese mandarin "
        "cantonese japanese korean vietnamese thai indonesian filipino tagalog swahili yoruba igbo zulu afrikaans "
        "irish scottish welsh european african asian latin christian muslim jewish",
    )
)  # fmt: skip


def names_used(statements: list[Statement]) -> set[str]:
    """The names the person used (capitalised words inside their sentences: "Rafael", "Pimville"), in lower
    case; days, months, languages and the like left out. Pure."""
    names = {
        match.group(0).lower()
        for statement in statements
        for match in _WORD.finditer(statement.text)
        if _is_name(statement.text, match)
    }
    return {name for name in names - _LANGUAGES if not _WHEN_WORDS.fullmatch(name)}


def names_someone_known(question: str, statements: list[Statement]) -> bool:
    """Whether the question names someone or something the person told about ("what instrument does Rafael
    play?", "vihaan olympiad date?"): then it asks about what they said. Pure."""
    return bool({word.lower() for word in _WORD.findall(question)} & names_used(statements))


def _only_asks_memory(message: str) -> bool:
    """Whether "you haven't told me" is the right reply when nothing the person said answers `message`:
    it asks to be reminded or for a value of theirs, or it asks what, when, who... and tells nothing else.
    A message that tells things and asks in passing, or asks for a yes or no ("we're all wearing sage
    green, so maybe a green theme?"), is the model's to answer."""
    text = _plain(message)
    if _MEMORY_CUE.search(text) or _TOLD_YOU.search(text) or _VALUE_WANTED.search(text):
        return True
    asked = _questions(text)
    if any(_POSSESSIVE.search(q) and _WH.search(q) for q in asked):
        return True
    if not any(_WH.search(q) for q in asked):
        return False  # a yes or no, or a suggestion: "maybe a green theme?"
    return not any(
        len(set(content_tokens(s))) >= MIN_CONTENT_WORDS for s in split_sentences(message) if is_statement(s)
    )


def _asks_plainly(message: str) -> bool:
    """Whether some sentence of `message` asks without asking for advice or a favour."""
    return any(not _REQUEST.search(question) for question in _questions(_plain(message)))


def answer(space: MemorySpace, query: str, *, now: datetime | None = None) -> Recall | None:
    """The reply to `query` made of what the person said, or None when it is not a question about the
    person (small talk, a request: the model's to answer), nor a question about someone or something that
    a statement of theirs answers well (question_kind MAYBE) or that they named (names_someone_known). Its
    statements come from a retrieval deeper than a prompt's (RECALL_PAGES pages, RECALL_KNOWLEDGE knowledge
    entries, no token budget), read-only: nothing is heated or stored."""
    kind = question_kind(query)
    if kind is None and not _asks_plainly(query):
        return None
    deep = retrieve(
        space,
        query,
        top_pages=RECALL_PAGES,
        top_knowledge=RECALL_KNOWLEDGE,
        token_budget=10**6,
        fill_pages=0,
        count_hits=False,
    )
    statements = statements_of(deep, query)
    if kind != MEMORY and names_someone_known(query, statements):
        kind = MEMORY
    if kind is None:
        return None
    if not statements:
        return Recall(text=not_told(query), quoted=()) if kind == MEMORY else None
    embedder = get_embedder()
    abouts = [s.about(query) for s in statements]
    asked = asked_part(query)
    vectors = embedder.encode([query, asked, *(s.text for s in statements), *(a for a in abouts if a)])
    question_vectors, sentence_vectors = vectors[:2], vectors[2 : len(statements) + 2]
    about_vectors = np.zeros_like(sentence_vectors)
    rows = iter(vectors[len(statements) + 2 :])
    for i, about in enumerate(abouts):
        if about:
            about_vectors[i] = next(rows)
    scores = score_statements(query, statements, question_vectors, sentence_vectors, about_vectors)
    if (wanted := asked_of(query)) is not None:
        # "the name of my dentist": a sentence about the dentist that names no one is not an answer
        scores = [
            score if wanted.gives(s.text, query) else NOT_GIVEN for score, s in zip(scores, statements, strict=True)
        ]
    asks_now = bool(_NOW.search(_plain(query)))
    enough = ENOUGH if kind == MEMORY else STRONG
    quoted = choose(statements, scores, sentence_vectors, enough=enough, asks_now=asks_now)
    sure = bool(quoted) and max(scores) >= CONFIDENT
    if logger.isEnabledFor(logging.DEBUG):
        ranked = sorted(zip(scores, statements, strict=True), key=lambda pair: -pair[0])[:3]
        logger.debug("recall %r: %s", query, [(score, s.text[:60]) for score, s in ranked])
    if not quoted and (kind == MAYBE or not _only_asks_memory(query)):
        return None
    if not quoted:
        return Recall(text=not_told(query), quoted=())
    if len(quoted) == 2:  # a fact that changed: the latest first
        latest, earlier = quoted[1], quoted[0]
        return Recall(text=latest_reply(latest, earlier, now or timezone.now(), sure=sure), quoted=(latest, earlier))
    other = beside(statements, scores, quoted[0], enough=enough) if quoted else None
    if other is not None and replaces(*sorted((quoted[0], other), key=lambda s: s.seq)):
        earlier, latest = sorted((quoted[0], other), key=lambda s: s.seq)
        return Recall(text=latest_reply(latest, earlier, now or timezone.now(), sure=sure), quoted=(latest, earlier))
    if other is not None:  # two messages answer nearly as well: both, in the order they were said
        quoted = tuple(sorted((quoted[0], other), key=lambda s: s.seq))
    then = "And" if other is not None else "Then"
    return Recall(text=quote_reply(quoted, now or timezone.now(), sure=sure, then=then), quoted=quoted)
