"""Whose thing a sentence is about: a question about the person's own things ("what's my blood type?", "the name
of my dentist?"), a clause that asks the assistant something rather than tells, and the words that say a thing
is someone else's. Used by engine/recall.py, to say what was never told in the person's terms and to keep a
figure of someone else's from answering for theirs.
"""

from memory_engine.language.rules import rule

__all__ = [
    "ASKS_IN_IT",
    "ELISION",
    "ENDS_A_SENTENCE",
    "MINE",
    "MINE_DOES",
    "OPENS_REQUEST",
    "SOMEONE_ELSES",
    "THE_X_OF_MINE",
]

# "what's my blood type?", "the name of my dentist?": the thing of theirs a question asks for, at the end of
# the clause that asks (read in lower case, a clause at a time).
_WORDS = r"(?:[a-z0-9][a-z0-9'\-]*\s+){0,3}?[a-z0-9][a-z0-9'\-]*"
_CLAUSE_END = (
    r"(?:\s+(?:is|was|are|were))?(?:\s+(?P<called>called|named))?"
    r"(?:\s+(?:again|now|these days|exactly|pls|please|then))?\s*[?.!]*$"
)
THE_X_OF_MINE = rule(
    rf"\bthe\s+({_WORDS})\s+of\s+(?:my|our)\s+({_WORDS}){_CLAUSE_END}",
    finds=("what's the name of my dentist?", "the breed of our dog again?"),
    misses=("what's the name of the street?",),
)
MINE = rule(
    rf"\b(?:my|our)\s+({_WORDS}){_CLAUSE_END}",
    finds=("what's my blood type?", "what is my boy called?", "our wifi password again?"),
    misses=("what did my eye specialist say about the drops yesterday",),
)
# A word that asks, anywhere in a clause that may not end with "?".
ASKS_IN_IT = rule(
    r"\b(?:what|what's|whats|which|who|who's|whose|where|when|how)\b",
    finds=("what's my blood type", "where does my sister live"),
    misses=("my truck, a rusty old silverado",),
)
# A thing of theirs that does something ("what did my eye specialist diagnose"), not one asked for.
MINE_DOES = rule(
    r"\b(?:did|does|do|will|would|can|could|should|has|have|had)\s+(?:my|our)\b",
    finds=("what did my eye specialist diagnose", "when does our lease end"),
    misses=("what's my blood type",),
)
# A clause that opens as a request to the assistant or about what to do: "should I get it serviced" (plain text).
OPENS_REQUEST = rule(
    r"^(?:should|shall|could|can|would|will|do|does|is|are) (?:i|we|you)\b",
    finds=("should i get it serviced", "can you remind me tomorrow"),
    misses=("so should i get it serviced", "i drive a 2011 skoda"),
)
# A word that says what follows is someone else's, read whole (fullmatch) in lower case: "my sister's flight is
# LH 904-2" is not the person's flight.
SOMEONE_ELSES = rule(
    r"his|her|their|(?!(?:it|that|what|who|there|here|he|she)'s)[\w-]+'s",
    finds=("his", "sister's", "their", "mum's"),
    misses=("it's", "that's", "my", "sisters"),
    whole=True,
)
# An elided article or pronoun before a word ("l'apt", "dell'ufficio"), left out of the word.
ELISION = rule(
    r"^(?:l|d|j|c|qu|n|s|m|t|dell|all|nell|sull)'",
    finds=("l'apt", "dell'ufficio", "qu'il"),
    misses=("let's", "apt"),
)
# A quote that ends a sentence already (“... with supper.”), so a reply adds no full stop after it.
ENDS_A_SENTENCE = rule(
    r"[.!?\u2026][\u201d\"']?$",
    finds=(
        "You told me on Monday: \u201cI have a cat called Pepper.\u201d",
        "Before that, on 3 March: \u201cNo.\u201d",
    ),
    misses=("You told me on Monday: \u201cI live in Porto\u201d",),
)
