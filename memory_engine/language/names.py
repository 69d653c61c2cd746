"""Names in what was said: a person naming themselves ("I'm Sam", "call me Tash"), naming a thing of theirs ("a
cat called Pepper", "my housemate Tash"), the capitalised words that are names, and a query without the names
of the two people talking. Used by engine/recall.py (a statement that names what a question asks), engine/
generator.py (the names the assistant must never claim) and engine/retriever.py (topic_query).
"""

import re

from memory_engine.language.reading import ends_no_sentence
from memory_engine.language.rules import rule
from memory_engine.language.word_lists import NAMING_ONESELF, NAMING_WORDS, NOT_A_NAME, alternation

__all__ = [
    "GIVES_OWN_NAME",
    "NAMED",
    "NAMED_THING",
    "NAMED_WORDS",
    "NAMING",
    "SELF_NAMING",
    "WORD",
    "names_in",
    "without_names",
]

# A sentence giving the person's own name (read in lower case): no answer to "what's my GP's name?".
GIVES_OWN_NAME = rule(
    rf"\b{alternation(NAMING_ONESELF)}\b",
    finds=("my name is sam and i'm a nurse", "call me tash", "i'm called ines"),
    misses=("my dentist's name is dr okafor",),
)
# A word that names something (read in lower case): "a cat called Pepper", "a Kenworth I call Big Sue".
NAMING = rule(
    rf"\b{alternation(NAMING_WORDS)}\b",
    finds=("i have a cat called pepper", "my housemate goes by tash", "a kenworth i call big sue"),
    misses=("i have a cat and a dog",),
)
# "my housemate Tash", "our cat Mango", "my monstera, Don Fermín", "Pepper (my cat)" (read as written).
NAMED_THING = rule(
    r"\b(?i:my|our)\s+(?:[a-z\-]+\s+){0,2}?[a-z\-]+,?\s+(?:(?:Dr|Mr|Mrs|Ms|Prof|Don|Doña)\.?\s+)?[A-Z][\w\-]+"
    r"|\b[A-Z][\w\-]+\s*\((?i:my|our)\s+[a-z\- ]+\)",
    finds=("my housemate Tash is moving out", "My monstera, Don Fermín, is thriving", "Pepper (my cat) is sick"),
    misses=("my housemate is moving out", "I told my boss. Then I left."),
)
# The name a statement gives after a word that names (read as written): "it's a guy called Euan now".
NAMED = rule(
    r"(?:\bcalled|\bnamed|\bname:|\bname is|\bit's|\bis)\s+([A-ZÀ-Ý][\w'-]+)",
    finds=("Turns out Morag's left, it's a guy called Euan now", "new name: Biscuit", "the landlord is Morag"),
    misses=("it's a guy from the agency now",),
)
# A capitalised word that does not open a sentence after another: a name, in well-written text.
NAMED_WORDS = rule(
    r"(?<![.!?]\s)\b[A-ZÀ-Ý][\w'-]+",
    finds=("the lassie dealing wi it is Morag", "Tayside Lets sent the lease"),
    misses=("the lassie dealing wi it is morag", "it moved. Then it stopped"),
)
# A word, letters only, with an apostrophe inside ("Khaled's").
WORD = rule(
    r"[^\W\d_]+(?:'[^\W\d_]+)?",
    finds=("Khaled's wife", "rafael instrument?"),
    misses=("10:30",),
)

# How a user names themselves in their own words; such a name must never be claimed by the assistant.
_INTRODUCING_ONESELF = ("i'm", "i am", "this is", "it's")  # a name after: "I'm Sam", "this is Mike"
_NAME = r"[A-Z\u00c0-\u00d6\u00d8-\u00de][^\W\d_A-Z]{1,30}"  # "Sam", "Tomás", "Émile"
SELF_NAMING = rule(
    rf"\b(?i:{alternation((*NAMING_ONESELF, *_INTRODUCING_ONESELF))})\s+({_NAME})\b"
    # "hey. Mike Brennan, firefighter, Chicago.", "Mike here": a name that opens a message introduces its writer
    rf"|(?:^|[.!?]\s+)({_NAME})(?:\s{_NAME},|\s(?i:here)\b)",
    finds=("Hi, I'm Sam and I teach piano", "hey. Mike Brennan, firefighter, Chicago.", "Mike here, quick question"),
    misses=("I'm tired today",),
)

_NOT_A_NAME = frozenset(NOT_A_NAME)


def names_in(sentence: str) -> list[str]:
    """The capitalised words of `sentence` that do not open it (after a full stop, a question or exclamation mark
    or a colon, with any quote or bracket between): names, in well-written text, without a possessive's "'s"
    (written with either apostrophe); "I", "OK" and the like left out. Pure."""
    found = []
    for match in WORD.finditer(sentence):
        word = match.group(0)
        if not word[0].isupper() or word.lower() in _NOT_A_NAME:
            continue
        before = sentence[: match.start()].rstrip(" \"'\u201c(")
        words_before = before[:-1].split()  # "Dr. Okafor": the name after a title is no sentence's opener
        after_a_title = before.endswith(".") and bool(words_before) and ends_no_sentence(words_before[-1])
        if before and (before[-1] not in ".!?:" or after_a_title):
            found.append(word[:-2] if word.lower().endswith("'s") else word)  # "Sam's", "SAM'S": as "Sam’s"
    return found


def without_names(text: str, names: list[str]) -> str:
    """`text` without each of `names` (and its "'s"), whole words in any case, its spaces made single ("What did
    Caroline's sister paint?" without "Caroline": "What did sister paint?"); `text` itself when no name is
    given. Pure."""
    wanted = [re.escape(name) for name in names if name and name.strip()]
    if not wanted:
        return text
    return " ".join(re.sub(rf"\b(?:{'|'.join(wanted)})(?:'s)?\b", " ", text, flags=re.IGNORECASE).split())
