"""How a message is read, in one place: its apostrophes, its chat spelling, its sentences, whether a
sentence speaks of the speaker, and whether it tells or asks. Promotion (engine/long_term.py: which
sentences become the person's knowledge), the prompt (engine/generator.py: which facts are quoted as
theirs), summaries and the answering path (engine/recall.py) all read text through these functions, so
what is kept and what is quoted cannot disagree about what a sentence is. The words the rules use are
data, in language/word_lists.py. Everything here is pure.
"""

import re

from memory_engine.language.keywords import strip_speaker_labels
from memory_engine.language.rules import rule
from memory_engine.language.text import straight  # every apostrophe straight: what every layer reads alike
from memory_engine.language.word_lists import (
    ABBREVIATIONS,
    AUX_WORDS,
    CHAT_SPELLING,
    FILLERS,
    FIRST_PERSON,
    IMPERATIVES,
    OWNING_WORDS,
    WH_WORDS,
    alternation,
)

__all__ = [
    "asks",
    "ends_no_sentence",
    "TELLS_WHAT_TO_REMIND",
    "is_statement",
    "opens_as_imperative",
    "opens_as_request",
    "plain",
    "questions",
    "second_person",
    "speaks_of_self",
    "split_sentences",
    "straight",
    "tells_what_to_remind",
]


_CHAT_WORD = rule(
    r"\b" + alternation(CHAT_SPELLING) + r"\b",
    finds=("whats ur address", "i'm at the gym, u coming?", "pls remind me abt the dentist"),
    misses=("what's your address?", "my daughter's name is ines"),
)


def plain(text: str) -> str:
    """`text` as the rules read it: lower case, whitespace collapsed, apostrophes straight, chat spelling
    written out ("whats ur address" -> "what's your address"). plain(plain(x)) == plain(x)."""
    lowered = " ".join(straight(text).lower().split())
    return _CHAT_WORD.sub(lambda match: CHAT_SPELLING[match.group(0)], lowered)


_FIRST_PERSON = rule(
    r"\b" + alternation(FIRST_PERSON) + r"\b",
    re.IGNORECASE,
    finds=("My daughter's name is Ines", "We moved to Leeds in May", "I'm allergic to penicillin"),
    misses=("What time does the museum open?", "The dentist moved to Friday"),
)


def speaks_of_self(text: str) -> bool:
    """Whether `text` has a first-person word (word_lists.FIRST_PERSON: "I", "my", "we", "us"...)."""
    return _FIRST_PERSON.search(straight(text)) is not None


# --- Sentences ------------------------------------------------------------------------------------

_BOUNDARY = rule(
    r"[.!?…]+[\"'”’)\]]*\s+",
    finds=("I moved to Leeds. It's lovely there", "Really? I thought it was Tuesday", 'She said "no." Then she left'),
    misses=("My dentist is at 3.30 tomorrow", "What time is my appointment?"),
)
_LAST_WORD = rule(
    r"(\w+(?:\.\w+)*)$",
    finds=("My appointment is with Dr", "Bring snacks, e.g", "I'm reading the new one by J"),
    misses=("that was so funny :)", "see you then!!"),
)
_HAS_WORD = rule(
    r"[^\W_]",
    finds=("ok", "Thanks 🙏", "3pm works"),
    misses=("...", "🙂🙂", "___"),
)
_ABBREVIATIONS = frozenset(ABBREVIATIONS)


def split_sentences(text: str) -> list[str]:
    """Split chat or prose into sentences, with speaker labels removed and whitespace collapsed.

    Boundaries: line breaks, a speaker label (see ``keywords.strip_speaker_labels``), and ".", "!",
    "?" or "…" followed by a space, except after a known abbreviation ("Dr.", "e.g.") or a single-letter
    initial ("J. K. Rowling"). Fragments without any letter or digit (a lone emoji, "...") are dropped.
    Safe on any string.
    """
    if not text:
        return []
    sentences: list[str] = []
    for line in strip_speaker_labels(text).splitlines():
        start = 0
        for match in _BOUNDARY.finditer(line):
            if _is_abbreviation(line[start : match.start()], match.group()):
                continue
            _append_sentence(sentences, line[start : match.end()])
            start = match.end()
        _append_sentence(sentences, line[start:])
    return sentences


def _is_abbreviation(before: str, punctuation: str) -> bool:
    if not punctuation.startswith(".") or punctuation.startswith(".."):
        return False
    last = _LAST_WORD.search(before[-64:])  # the word before the point; not the whole line again each time
    if not last:
        return False
    return ends_no_sentence(last.group(1))


def ends_no_sentence(word: str) -> bool:
    """Whether a full stop after `word` ends no sentence: a known abbreviation ("Dr.", "e.g.") or an initial
    ("J. K. Rowling"). The person's messages and a model's reply are split alike (llm/base.py)."""
    word = word.lower()
    return word in _ABBREVIATIONS or (len(word) == 1 and word.isalpha())


def _append_sentence(sentences: list[str], fragment: str) -> None:
    fragment = " ".join(fragment.split())
    if _HAS_WORD.search(fragment):
        sentences.append(fragment)


# --- Telling or asking ----------------------------------------------------------------------------

# A question opens its sentence, perhaps after a filler or a topic ("quick check: which city ...", "and the
# furball, what's his name?"), or ends with a question mark.
_OPENS_QUESTION = rule(
    rf"^(?:{alternation(FILLERS)}[\s,:]+)*(?:{alternation(WH_WORDS + AUX_WORDS)})\b",
    finds=(
        "quick check: which city did i say",
        "do i have a meeting tomorrow",
        "btw when is my flight",
        "why did i move",
    ),
    misses=("whatever you think is best", "i moved to leeds in may", "whyever not"),
)
# A clause that asks (not a relative clause: "I moved to Leeds, which is nice" tells).
_OPENS_WH = rule(
    r"^(?:what's|when's|where's|(?:what|when|where) (?:is|was|were|are|did|do|does)|(?:what|which) (?:time|day|one)|"
    r"who (?:did|do|does))\b",
    finds=("what was it again", "where's my passport", "which day is the party"),
    misses=("which is nice", "when i was little"),
)
# A question asked inside a run-on sentence, as people type on a phone: "im making a sticker of my hamster
# what did i say his name was", "my assistant wants to plan her week when is my deadline again". A
# relative clause has no verb straight after its wh-word ("that's where my mum lives") and is not one.
_EMBEDDED_WH = rule(
    r"\b(?:what|when|where|which|who|whose|how many|how old|how much)(?: \w+)? (?:is|was|are|were|did|do|does) "
    r"(?:i|my|we|our|he|his|she|her|they|their|the)\b"
    r"|\b(?:what's|when's|where's|who's) (?:my|our|his|her|their|the)\b"
    r"|\bhow (?:much|many|long|big|far|old) (?:is|was|are|were|did|do|does)\b",
    finds=(
        "i'm making a sticker of my hamster what did i say his name was",
        "my assistant wants to plan her week when is my deadline again",
        "need to budget how much is the rent",
    ),
    misses=("that's where my mum lives", "i know what you mean"),
)


# What follows "remind me" when it tells what to be reminded of, rather than asking it: "remind me my fishing
# buddy lyle's birthday is june 18th"; not "remind me my wifi password is it the one with the dog", which asks.
TELLS_WHAT_TO_REMIND = (
    r" (?:that )?(?:my|our|his|her|their|the)\b[^.?!]*\s(?:is|are|was|were)\s+(?!(?:it|they|that|this|he|she)\b)\w"
)
_TOLD_TO_REMIND = rule(
    rf"^(?:{alternation(FILLERS)}[\s,:]+)*remind me{TELLS_WHAT_TO_REMIND}",
    finds=("remind me my fishing buddy lyle's birthday is june 18th", "ok remind me that our rent is due on the 1st"),
    misses=("remind me my wifi password is it the one with the dog", "remind me to call the dentist"),
)


def tells_what_to_remind(sentence: str) -> bool:
    """Whether a sentence (plain) tells what to be reminded of ("remind me my X is Y"), asking nothing."""
    return _TOLD_TO_REMIND.match(sentence) is not None


# An exclamation, not a question, when no question mark ends it: "what a week", "how lovely", "what fun".
_EXCLAIMS = rule(
    rf"^(?:{alternation(FILLERS)}[\s,:]+)*(?:what (?:a|an) (?:[a-z']+[^\w,]*){{1,3}}|"
    r"how (?!(?:many|much|long|old|far|often|come|about|so|is|are|was|were|do|does|did)\b)[a-z']+[^\w,]*)$",
    finds=("what a week", "how lovely", "oh what an amazing day!"),
    misses=("how many days until my birthday", "how long is the drive to leeds", "what a week it has been at work"),
)


def asks(sentence: str) -> bool:
    """Whether a sentence (plain: see `plain`) asks something: it ends with "?", opens as a question, ends
    with a clause that opens with a wh-word ("the insurer wants the make of my car, what was it again"),
    or asks inside a run-on sentence. An exclamation ("what a week!", "how lovely") does not, nor "remind me
    my X is Y", which tells."""
    last_clause = sentence.rsplit(",", 1)[-1].strip()
    first, _, rest = sentence.partition(",")
    if not sentence.endswith("?") and _EXCLAIMS.match(first):  # "what a week, honestly"; "what a mess, where's it"
        return bool(rest.strip()) and asks(rest.strip())
    if not sentence.endswith("?") and tells_what_to_remind(sentence):
        return False
    return (
        sentence.endswith("?")
        or _OPENS_QUESTION.match(sentence) is not None
        or _OPENS_WH.match(last_clause) is not None
        or _EMBEDDED_WH.search(sentence) is not None
    )


def questions(text: str) -> list[str]:
    """The sentences of `text` that ask (`asks`), plain."""
    return [sentence for sentence in split_sentences(plain(text)) if asks(sentence)]


def is_statement(sentence: str) -> bool:
    """Whether a sentence tells something rather than asks it: it neither ends with a question mark nor
    opens as a question ("btw do u think its worth buying a used laptop" asks), nor asks in the imperative
    with nothing of the person's in it ("redo the tile calc with the right area"). A request that tells
    something on the way ("my husband Otieno says I should rehearse", "write a card for my sister Ines") is a
    statement."""
    said = plain(sentence)
    if questions(sentence):
        return False
    return not opens_as_imperative(said) or tells_what_to_remind(said) or _CARRIES_A_VALUE.search(sentence) is not None


# A request that carries something of the person's: a figure, a name after its first word, or a thing of theirs
# ("help me draft a reminder for invoice INV-0317, amount EUR 2,340", "add something about our late father",
# "y pon el nombre de mi perrita"); not "redo the tile calc with the right area".
_THEIRS = alternation((*OWNING_WORDS, "i", "we", "we're", "we've", "i'm", "i've", "ich", "yo", "eu", "je", "ik"))
_CARRIES_A_VALUE = rule(
    rf"\d|(?<=\s)[A-ZÀ-Ý]|(?i:(?<![\w']){_THEIRS}(?![\w']))",
    finds=(
        "help me draft a reminder for invoice INV-0317",
        "add something about our late father",
        "y pon el nombre de mi perrita",
        "write a card for Ines",
    ),
    misses=("redo the tile calc with the right area", "make it shorter"),
)


# A request in the imperative, perhaps after a filler or a please: "redo the flyer con el precio correcto",
# "Schreiben Sie bitte eine kurze Adressänderung"; not the same word telling ("plan is to fly", "help, it's gone",
# "list of my allergies").
_IMPERATIVE = rule(
    rf"^(?:(?:{alternation((*FILLERS, 'please', 'pls', 'plz', 'pl', 'bitte', 'porfa', 'por favor'))})\W+)*"
    rf"{alternation(IMPERATIVES)}(?![\w'\-:,!])(?!\s+(?:is|was|are|were|has|had|of)\b)",
    finds=("redo the flyer con el precio correcto", "please write a card for my sister", "ok so translate this for me"),
    misses=("plan is to fly on friday", "help, it's gone", "list of my allergies"),
)


def opens_as_imperative(sentence: str) -> bool:
    """Whether a sentence (plain) opens as a request in the imperative (IMPERATIVES)."""
    return _IMPERATIVE.match(sentence.strip()) is not None


# A sentence that opens as a request is no statement about oneself, question mark or not ("can you remind
# me what I said", "please note the time").
_REQUEST_OPENING = rule(
    r"^(?:can|could|would|will|do|does|did|should|shall|what|which|who|where|when|why|how|is|are|am|"
    r"please|tell me|remind me|let me know|any)\b",
    re.IGNORECASE,
    finds=("Can you remind me what I said?", "please note the time", "Let me know when it's ready"),
    misses=("Anyway, the party moved to Saturday", "I said the party is on Friday"),
)


def opens_as_request(sentence: str) -> bool:
    """Whether `sentence` opens as a question or a request ("please ...", "let me know ...")."""
    return _REQUEST_OPENING.match(sentence.strip()) is not None


# --- Saying the person's words back -----------------------------------------------------------------

# The person said back in the second person: the longest forms first ("i'm" before "i").
_YOU = (
    ("i am", "you are"), ("i'm", "you're"), ("i was", "you were"), ("i've", "you've"), ("i'll", "you'll"),
    ("i'd", "you'd"), ("we're", "you're"), ("we've", "you've"), ("we'll", "you'll"), ("we are", "you are"),
    ("we were", "you were"), ("myself", "yourself"), ("mine", "yours"), ("my", "your"), ("our", "your"),
    ("ours", "yours"), ("me", "you"), ("us", "you"), ("i", "you"), ("we", "you"),
)  # fmt: skip
_YOU_WORDS = rule(
    r"\b(?:" + "|".join(re.escape(a) for a, _ in _YOU) + r")\b",
    re.IGNORECASE,
    finds=("I have a beagle called Biscuit", "my medicine is on the shelf", "We're moving in June"),
    misses=("Meet Thomas at the museum", "The dentist is at three"),
)


def second_person(text: str) -> str:
    """The person's words said back to them: "I have a beagle called Biscuit" -> "you have a beagle called
    Biscuit", "my medicine" -> "your medicine". Pure."""
    swaps = dict(_YOU)
    said = _YOU_WORDS.sub(lambda match: swaps[match.group(0).lower()], straight(text).strip())
    return said[:1].lower() + said[1:] if said[:3].lower() == "you" else said
