"""Requests to the memory itself, read from a message: forget something, or say what it holds.

The conversation is a door to curation: "please forget my medicine", "don't keep my passport number",
"delete what I said about my diagnosis", "I mentioned my cousin's DUI. Please don't retain that.", "forget
that" (the last thing told), "what do you know about me?". services/spoken_curation.py carries a request
out through the services the chat page's × uses, whatever model replies; this module only reads.

A forget request asks the assistant to forget, delete or stop keeping something the person told. Three
things make one, each read the same way in every language the word lists hold:
- a verb of forgetting (word_lists.FORGET_VERBS), or one of keeping under a negation (KEEP_VERBS: "don't
  keep", "stop remembering", "no need to hold on to");
- said to the assistant: the verb opens its clause (after "please", "can you" and the like), or a way of
  asking comes before it ("I'd like you to remove ..."), or it ends the clause on what it names ("that thing
  about my ex, wipe it", "delete kar do"); never with a subject of its own ("I always forget my PIN", "my ex
  deleted our photos", "before I forget", "don't let me forget") nor as "don't forget", which asks to be
  reminded;
- what it names is the person's or something they told (word_lists.OWN_WORDS: "my", "I", "mon", "mein"):
  said after the verb, or before it in the message when the verb names it with a pronoun ("I'm not
  comfortable with you knowing my HIV status. Please delete it."); "that", alone, is the last thing told.
  A thing of nobody's in particular is an edit of something written ("remove the word 'deplorable'",
  "forget about work"), not of the memory.

A request to list is a question about what the memory holds about the person (MEMORY_WORDS and ABOUT_ME:
"what do you remember about me?", "que sais-tu de moi ?"). Everything here is pure.
"""

import re
from dataclasses import dataclass, replace

from memory_engine.language.reading import asks, plain, split_sentences
from memory_engine.language.rules import rule
from memory_engine.language.word_lists import (
    ABOUT_ME,
    AGREEING,
    FORGET_VERBS,
    FORGET_VERBS_ENGLISH,
    KEEP_VERBS,
    MEMORY_WORDS,
    OWN_WORDS,
    OWNING_WORDS,
    TOLD_ABOUT,
    alternation,
)

FORGET, LIST = "forget", "list"
VERB_LAST = (
    "bhool jao", "bhool jaana", "bhul jao", "bhool ja", "bhul ja", "delete kar do", "hata do", "mita do", "unut", "sil",
)  # fmt: skip
LAST_THING = ("that", "this", "that last bit", "what i just said", "what i just told you", "all that", "all of that")
_PRONOUNS = (
    "it", "that", "this", "them", "those", "these", "das", "es", "ça", "ca", "lo", "la", "isso", "quello", "dat", "tym",
    "bunu", "onu", "şunu", "bunları", "onları",
    # the saying of it: "forget i said that", "forget I mentioned it"
    "i said that", "i said it", "i said this", "i mentioned that", "i mentioned it", "i told you that",
    "i told you this", "i told you it", "i typed that", "i typed it", "i wrote that",
)  # fmt: skip
# Before a verb of keeping, what makes it one of not keeping: "don't keep", "no longer need you to remember".
_NOT_KEEPING = (
    "don't", "do not", "dont", "not", "never", "stop", "no", "no need to", "without", "don't need to",
    "do not need to", "no longer need you to", "don't want you to", "do not want you to", "you don't have to",
    "you don't need to", "you do not need to", "you no longer need to",
)  # fmt: skip


def _verbs(forgetting: tuple[str, ...]) -> str:
    """The verbs that ask to forget: `forgetting`'s, "don't keep ...", "scratch that from your memory"."""
    return (
        rf"(?:{alternation(forgetting)}|(?:{alternation(_NOT_KEEPING)})\s+(?:{alternation(KEEP_VERBS)})"
        r"|scratch (?:that|it|this) from (?:your )?memory)"
    )


_VERB = _verbs(FORGET_VERBS)
# The English verbs, which "i" before them makes a statement ("i forget where i put it"); before another
# language's verb, "i" and "a" are Polish "and" ("a, i zapomnij proszę ...").
_ENGLISH_VERB = _verbs(FORGET_VERBS_ENGLISH)
_FOUND_VERB = rule(
    rf"(?<![\w-]){_VERB}(?![\w-])",
    finds=("please forget my medicine", "don't keep my passport number", "scratch that from your memory"),
    misses=("i'm so forgetful these days", "please remember my birthday"),
)
# A way of asking, before the verb: "please", "can you", "I'd like you to", "kannst du bitte".
_ASKING = rule(
    r"\b(?:please|kindly|can you|could you|would you|will you|if you would|can i ask you to|i(?:'d| would) like you to|"
    r"i want you to|i need you to|i(?:'d| would) prefer (?:it )?(?:if )?you|you can|you could|you should|you may|"
    r"you must|"
    r"you don't need to|you do not need to|no longer need you to|no need to|just|bitte|kannst du|könntest du|"
    r"por favor|puedes|podrías|stp|s'il te plaît|s'il vous plaît|per favore|por favor|proszę|lütfen|alsjeblieft|"
    r"je veux que tu|quiero que|yaar|bhai|ok so|so)\b",
    finds=("could you delete my address", "i'd like you to remove my old job", "kannst du bitte meine adresse löschen"),
    misses=("my ex deleted our photos", "can i see my notes?"),
)
# What may open the clause before the verb, in the languages people mix in: "ah y olvida ...", "et oublie ...",
# "bro borra ...", "aur haan ... bhool ja".
_OPENING = rule(
    r"^(?:(?:oh|ok|okay|and|n(?=\s)|also|so|hey|yo|btw|actually|right|sorry|wait|anyway|um|hmm|ah|bro|nvm|oops|"
    r"ugh|omg|lol|well|y|e|et|und|aber|mais|pero|oye|ay|aur|haan|na|tsaka|saka|aslında|aslinda)\W+)*",
    finds=("oh and forget my address", "bro borra eso", "aur haan bhool ja"),
)
# The memory named as what the verb takes from: "drop the escalation number from memory".
_FROM_MEMORY = rule(
    r"\bfrom (?:your |the )?(?:memory|records)\b|\bin (?:your|ur) memory\b|\bsa memory\b",
    finds=("drop the escalation number from memory", "delete that from your records", "is it still in your memory?"),
    misses=("remove it from the list", "i have a terrible memory"),
)
# A thing told, named by what it was about: "anything about Felix's diagnosis", "the bit about Dan", "lo del
# despido", "lo de mi ex".
_ABOUT_TOLD = rule(
    r"^(?:(?:anything|everything|all|the (?:bit|part|thing|stuff|info|information))\s+(?:about|on|re)|lo del?|eso del?"
    rf"|{alternation(TOLD_ABOUT)})\s+\w",
    finds=("anything about felix's diagnosis", "the bit about dan", "lo del despido", "what i told you about my ex"),
    misses=("my medicine", "the door code"),
)
_TOLD_FRAME = rule(
    rf"^{alternation(TOLD_ABOUT)}\s+\w",
    finds=("what i told you about my ex", "o que te disse sobre o meu salário", "lo que te dije sobre mi hermana"),
    misses=("anything about felix's diagnosis", "the bit about dan"),
)
_ENGLISH = rule(
    _ENGLISH_VERB,
    finds=("forget", "delete", "don't keep"),
    misses=("vergiss", "zapomnij", "forgetful"),
    whole=True,
)
_ENGLISH_FOUND = rule(
    rf"(?<![\w-]){_ENGLISH_VERB}(?![\w-])",
    finds=("please forget my medicine", "can you delete my address", "stop remembering my weight"),
    misses=("vergiss meine adresse", "i'm so forgetful these days"),
)
# Polish "and", before its verb: "a, i zapomnij ..."
_AND_ELSEWHERE = rule(r"^(?:(?:a|i|oraz)\W+)*", finds=("a, i zapomnij proszę numer", "i zapomnij o tym"))
_PLEASE_FIRST = rule(
    r"^(?:(?:please|pls|bitte|proszę|por favor|per favore|alsjeblieft|stp|kindly)\s+)+",
    finds=("please forget my medicine", "bitte vergiss meine adresse", "por favor borra eso"),
    misses=("forget my medicine please", "pleased to meet you"),
)
# The verb with a subject of its own, or asking to be reminded: no request to the memory.
_NOT_ASKED = rule(
    rf"\b(?:we|he|she|they|it|people|ex)\s+(?:(?!you\b)[\w']+\s+){{0,3}}?{_VERB}"
    rf"|\bi\s+(?:(?!you\b)[\w']+\s+){{0,3}}?{_ENGLISH_VERB}"
    rf"|(?:\w\s+(?:and|or)|(?<!\byou )\bto|\bhelped \w+|\bsteer)\s+{_VERB}"
    r"|\b(?:don't|do not|dont|never)\s+(?:forget|let me)\b|\bbefore i\b|\bhow (?:do|can|to|would) (?:i|we|you)\b"
    r"|\bhelp (?:me|us)\b",
    finds=(
        "i always forget my pin",
        "my ex deleted our photos",
        "don't forget my dentist appointment",
        "before i forget, my flight is at 6",
    ),
    misses=("please forget my medicine", "don't keep my passport number"),
)
# The verb then names something written, not the memory: "remove it from the list", "delete my number from the letter".
_EDITING = rule(
    r"\bfrom (?:the|this|that|my|our|his|her|their) (?!memory\b|records\b|head\b)\w+",
    finds=("remove it from the list", "delete my number from the letter"),
    misses=("drop the escalation number from memory", "get that out from my head"),
)
_OWN = rule(
    rf"(?<![\w'])(?:{alternation(OWN_WORDS)})(?![\w'])",
    finds=("forget my medicine", "delete what i told you", "oublie mon adresse"),
    misses=("forget about work", "remove the word deplorable"),
)
_OWNING = rule(
    rf"(?<![\w'])(?:{alternation(OWNING_WORDS)})(?![\w'])",
    finds=("my passport number", "vergiss meine adresse", "borra lo de mi ex"),
    misses=("i'm not comfortable with that", "tell me later"),
)
_PRONOUN = rule(
    rf"^(?:{alternation(_PRONOUNS)})$", finds=("it", "that", "i mentioned it"), misses=("my medicine", "that last bit")
)
_POLITE_END = rule(
    r"(?:[\s,]+(?:please|pls|plz|porfa|thanks|thank you|thx|ok|okay|too|as well|entirely|completely|now|anymore|"
    r"any more|for good|stp|bitte|por favor|per favore|lol|haha|po|ha|from (?:your )?memory|in (?:your|ur) memory|"
    r"sa memory(?: mo)?|from your records|from whatever memory you keep|sofort|right away))+$",
    finds=(" my address, thanks", " it from your memory", " that now please"),
    misses=(" my medicine", " please my medicine"),
)
_LEAD = rule(
    r"^(?:(?:from (?:your )?(?:records|memory)|(?:everything|anything|all|what) you (?:know|have|remember|keep) "
    r"(?:about|on|of)|about|all about|everything about|anything about|all of|of|o|sur|über|"
    r"de|di|over|please|pls|bitte|alsjeblieft|por favor|per favore|proszę|na lang|lang)\s+)+",
    finds=("about my ex", "everything you know about my sister", "de mi salario"),
    misses=("my medicine", "overtime hours at work"),
)
# "forget the door code", "vergiss den Token", "forget Lorraine's phone number", "forget his number": a thing named,
# with a verb that can only mean the memory (not "forget Tuesday, let's do Wednesday").
_DEFINITE = rule(
    r"^(?:the|that|those|these|all that|den|die|das|le|la|les|el|los|las|o|os|a|as|il|lo|gli|de|het|yung|ang|"
    r"his|her|their|(?!(?:it|that|what|who|there|he|she|let|here|where|how|this)'s)[\w-]+'s)\s+\w",
    finds=("the door code", "den token", "lorraine's phone number", "his number"),
    misses=("what's on my list", "tuesday, let's do wednesday"),
)
_ASKED_FIRST = rule(
    r"^(?:kannst du|könntest du|kun je|wil je|puedes|podrías|podes|pode|potresti|puoi)\b",
    finds=("kannst du die gehaltszahlen bitte löschen", "puedes borrar eso", "kun je dat verwijderen"),
    misses=("can you delete my address", "du kannst das löschen"),
)
_FORGETTING = rule(
    r"forget|vergiss|vergessen sie|oublie|oubliez|olvida|olvide|esquece|esqueça|esqueca|dimentica|vergeet|zapomnij|unut"
    r"|lupakan|lupain|glöm|glem|sahau|zapomeň|uită|kaydetme",
    finds=("forget my medicine", "vergiss meine adresse", "oublie mon adresse"),
    misses=("delete my address", "borra lo que te dije"),
)
# The verbs of forgetting said some other way ("olvídalo", "bhool jao", "paki-forget", "unlearn"): not deleting.
_ALSO_FORGETTING = rule(
    r"forget|olvíd|olvid|bhool|bhul|kalimutan|unlearn|unremember|un-remember|unut|dimentic",
    finds=("olvídalo", "bhool jao yaar", "paki-forget mo yan", "unlearn that"),
    misses=("delete my address", "borra eso"),
)
_DELETING = rule(
    alternation(tuple(v for v in FORGET_VERBS if not (_FORGETTING.fullmatch(v) or _ALSO_FORGETTING.search(v)))),
    finds=("delete", "borra", "löschen"),
    misses=("forget", "vergiss", "delete my address"),
    whole=True,
)
# "forget that she's pregnant": a thing told, whoever it is about.
_TOLD = rule(
    r"^that \w+(?:'s|'re|'ve|'d|\s+(?:is|are|was|were|has|have|had|got|\w+s|\w+ed))\b",
    finds=("that she's pregnant", "that dan got fired"),
    misses=("that last bit", "that thing about my ex"),
)
_LIST = rule(
    rf"\b(?:{alternation(MEMORY_WORDS)})\b.*(?<![\w'])(?:{alternation(ABOUT_ME)})(?![\w'])"
    r"(?!\s+(?:being|as|and|when|if|or|doing)\b)"
    rf"|(?<![\w'])(?:{alternation(ABOUT_ME)})(?![\w']).*\b(?:{alternation(MEMORY_WORDS)})\b",
    finds=("what do you know about me?", "que sais-tu de moi ?", "what do you remember about me"),
    misses=("do you remember about me being late?", "tell me about yourself"),
)
# Asked for, not told: a question, or "show me", "list", "give me a rundown".
_SHOW = rule(
    r"\b(?:show|list|tell|give|dump|read back|summar\w*|provide|see|voir|zeig)\b",
    finds=("show me what you have on me", "list everything you remember", "give me a rundown"),
    misses=("what do you know about me?", "i showed him my notes"),
)


@dataclass(frozen=True)
class MemoryRequest:
    kind: str  # FORGET or LIST
    about: str = ""  # what it names, as said ("my medicine"); one of LAST_THING: the last thing told
    clause: str = ""  # the clause that asks it
    # What it names is a thing, not said to be theirs: "forget the door code", "vergiss den Token". Carried out
    # only when the memory surely holds it (services/spoken_curation.py), so "forget the formal tone" stays a
    # request to the model.
    tentative: bool = False
    # It names what it forgets with a pronoun, `about` being the earlier clause it points at ("My PIN is 2208.
    # Please delete it."): that clause may be what this very message told.
    pointed: bool = False

    @property
    def last_thing(self) -> bool:
        """Whether it names the last thing told ("forget that") rather than what it says."""
        return plain(self.about).strip(" .!?") in LAST_THING


# "yes", "yes please, forget it", "oui merci": the whole message agrees
_AGREES = rule(
    rf"^(?:{alternation(AGREEING)})(?:[\s,.!]+(?:please|pls|thanks|thank you|forget (?:it|them|that|those|both)|"
    r"both|delete (?:it|them)|merci|gracias|danke|grazie|obrigad[oa]))*[\s.!]*$",
    finds=("yes", "yes please, forget it", "oui merci"),
    misses=("yes but not my address", "yesterday was rough"),
)


def agrees(message: str) -> bool:
    """Whether the whole of `message` says yes (word_lists.AGREEING): an answer to a question the memory asked
    ("Did you mean ...?": services/spoken_curation.py), not a request of its own."""
    return _AGREES.match(plain(message).strip()) is not None


# between the clauses of a sentence
_CLAUSE_BREAK = rule(
    r"\s*(?:[,;:]|\s[\u2014\u2013-])\s+",
    finds=("My PIN is 2208, please delete it.", "That thing about my ex — wipe it."),
    misses=("Please forget my medicine.", "My well-being matters to me."),
)


def read(message: str) -> MemoryRequest | None:
    """The first request to the memory `message` makes, or None."""
    found = read_all(message)
    return found[0] if found else None


def read_all(message: str) -> list[MemoryRequest]:
    """Every request to the memory `message` makes, in its order: "delete what I told you about X. And forget my
    NHS number too." makes two."""
    placed = [
        (number, clause.strip(" \u2014\u2013-"))
        for number, sentence in enumerate(split_sentences(message))
        for clause in _CLAUSE_BREAK.split(sentence)
    ]
    placed = [(number, clause) for number, clause in placed if clause]
    clauses = [clause for _, clause in placed]
    requests = []
    for place, clause in enumerate(clauses):
        found = _request_in(clause, clauses[:place], clauses[place + 1] if place + 1 < len(clauses) else "")
        if found is not None and found.kind == FORGET and not found.pointed and not found.last_thing:
            # "forget what I told you about my eyes, the glaucoma and the drops both": the list goes on
            same_sentence = [c for number, c in placed[place + 1 :] if number == placed[place][0]]
            found = _named_on(found, same_sentence)
        if found is not None and found not in requests:
            requests.append(found)
    return requests


# A clause that goes on naming what the one before named: "the glaucoma and the drops both", "and my address".
_NAMES_ON = rule(
    r"^(?:(?:and|or|plus|also|as well as)\s+)?(?:the|my|our|his|her|their|those|these|all)\s+\w",
    finds=("and my address", "the glaucoma and the drops both", "plus our home phone"),
    misses=("and it", "please forget my medicine"),
)
_NAMES_ON_WORDS = 8


def _named_on(request: MemoryRequest, following: list[str]) -> MemoryRequest:
    """`request` naming also the clauses after it in its sentence that go on naming things (`_NAMES_ON`, short, no
    verb of forgetting), up to the first that does not."""
    more = []
    for clause in following:
        text = plain(clause)
        if not _NAMES_ON.match(text) or len(text.split()) > _NAMES_ON_WORDS or _FOUND_VERB.search(text):
            break
        more.append(clause.strip(" .!?"))
    if not more:
        return request
    return replace(request, about=", ".join([request.about, *more]))


def _request_in(clause: str, before: list[str], following: str) -> MemoryRequest | None:
    """The request `clause` makes; `before`: the message's clauses before it, where a pronoun's thing is named;
    `following`: the clause after it ("" at the end)."""
    text = plain(clause)
    if _asks_to_forget(text):
        return _forget(clause, text, before, following)
    if _LIST.search(text) and (asks(text) or _SHOW.search(text)):
        return MemoryRequest(LIST, clause=clause)
    return None


def _forget(clause: str, text: str, before: list[str], following: str) -> MemoryRequest | None:
    """The forget request of a clause that asks to forget (`text`: the clause, plain), if it names a thing of
    the person's: after the verb, before it ("that thing I said about my ex, wipe it"), in an earlier clause
    for a pronoun ("Please delete it"), or the last thing told ("forget that")."""
    verb = _FOUND_VERB.search(text)
    after = _POLITE_END.sub("", " " + text[verb.end() :].strip(" .!?")).strip(" .!?")
    told_about = _ABOUT_TOLD.match(_ASKING.sub("", after).strip()) is not None
    framed = _PLEASE_FIRST.sub("", after)
    said = _ASKING.sub("", framed).strip()
    from_memory = _FROM_MEMORY.search(text[verb.end() :]) is not None
    after = _LEAD.sub("", after)
    if _TOLD_FRAME.match(framed):  # with its frame, which spoken curation reads whole ("o que te disse sobre ...")
        return MemoryRequest(FORGET, about=_said_as(clause, framed), clause=clause)
    if after and not _PRONOUN.match(after) and (_OWN.search(after) or _TOLD.match(after) or told_about or from_memory):
        return MemoryRequest(FORGET, about=_said_as(clause, after), clause=clause)
    if (_FORGETTING.fullmatch(verb.group(0)) or from_memory) and _DEFINITE.match(said) and not _PRONOUN.match(after):
        # a thing, not "about the X"; carried out when the memory surely holds it
        return MemoryRequest(FORGET, about=_said_as(clause, after), clause=clause, tentative=True)
    ahead = _ASKING.sub("", _OPENING.sub("", text[: verb.start()])).strip(" ,.")
    if _OWN.search(ahead):
        return MemoryRequest(FORGET, about=_said_as(clause, ahead), clause=clause)
    if not after and _DEFINITE.match(ahead) and not _ENGLISH.fullmatch(verb.group(0)) and _ASKED_FIRST.match(text):
        # the verb last, asked for before the thing it names: "Kannst du die Gehaltszahlen von vorhin bitte löschen"
        return MemoryRequest(FORGET, about=_said_as(clause, ahead), clause=clause, tentative=True)
    if after and not _PRONOUN.match(after):
        return None
    # "Kannst du bitte löschen, was ich dir ...": what it names follows; a verb that holds its object ("scratch
    # that from your memory") or comes last ("... delete kar do") names what came before.
    holds_object = verb.group(0) in VERB_LAST or verb.group(0).startswith("scratch")
    if holds_object and not after and ahead and not _PRONOUN.match(ahead):
        return MemoryRequest(FORGET, about=_said_as(clause, ahead), clause=clause)  # "salary wali baat bhool jao"
    if not after and not holds_object:
        return MemoryRequest(FORGET, about=following, clause=clause) if _OWN.search(plain(following)) else None
    # "Please delete it": named before, by a thing of theirs ("meine Adresse, ich will nicht, dass ... Just forget
    # it": the address, not "ich will nicht"), else by anything of theirs
    for owned in (_OWNING, _OWN):
        for earlier in reversed(before):
            if owned.search(plain(earlier)):
                return MemoryRequest(FORGET, about=earlier, clause=clause, pointed=True)
    if after in LAST_THING:
        return MemoryRequest(FORGET, about=after, clause=clause)
    return None


def asks_to_forget(message: str) -> bool:
    """Whether some clause of `message` asks the assistant to forget or not to keep, whether or not `read_all`
    can tell what ("Słuchaj, to o pożyczce od teściowej — zapomnij o tym", "Actually abeg, don't save that one");
    not with a verb of deleting, which edits something written as often ("Please remove the sultanas")."""
    for sentence in split_sentences(message):
        for clause in _CLAUSE_BREAK.split(sentence):
            text = plain(clause)
            if _asks_to_forget(text) and not _DELETING.fullmatch(_FOUND_VERB.search(text).group(0)):
                return True
    return False


# a verb of forgetting anywhere, not told of someone ("my mum forgets", "forgetting", "forgetful")
_FORGETTING_ANYWHERE = rule(
    rf"(?<![\w-])(?:{_FORGETTING.pattern}|{_ALSO_FORGETTING.pattern}|zapomnie)(?!s\b|ting|ten|table|ful)",
    finds=("och glöm det jag sa om vilgots diagnos", "abeg forget that bvn", "a, i proszę zapomnieć numer pesel"),
    misses=("my mum forgets everything", "i'm so forgetful", "that film was unforgettable"),
)


def mentions_forgetting(sentence: str) -> bool:
    """Whether `sentence` asks, anywhere in it and however it opens, to forget or not to keep: a verb of forgetting
    or of not keeping with no subject of its own ("Och glöm det jag sa om Vilgots diagnos", "Abeg forget that BVN wey
    I type for you", "A, i proszę zapomnieć numer PESEL mojej siostry"). Wider than asks_to_forget, which must tell
    a request to act on: what recall never quotes as something told. Not a verb of deleting alone. Pure."""
    text = plain(sentence)
    verb = _FOUND_VERB.search(text)
    forgetting = _FORGETTING_ANYWHERE.search(text) is not None
    if not forgetting and (verb is None or _DELETING.fullmatch(verb.group(0))):
        return False
    return _NOT_ASKED.search(text) is None


def forgetting_clauses(message: str) -> list[str]:
    """The clauses of `message` that ask to forget or not to keep (mentions_forgetting), read however they open:
    what they name is never quoted, whether or not `read_all` could tell what it is. Pure."""
    return [
        clause
        for sentence in split_sentences(message)
        for clause in _CLAUSE_BREAK.split(sentence)
        if mentions_forgetting(clause)
    ]


def asks_in_english(request: MemoryRequest) -> bool:
    """Whether a request asks with an English verb ("please forget my ..."), so that what it names is said back in
    the second person; not "zapomnij o tym co pisałam o Bartku i pracy"."""
    return _ENGLISH_FOUND.search(plain(request.clause)) is not None


def _asks_to_forget(text: str) -> bool:
    """Whether the clause (plain) asks the assistant to forget: its verb said to the assistant, no subject of
    its own, not about something written."""
    verb = _FOUND_VERB.search(text)
    if verb is None or _NOT_ASKED.search(_OPENING.sub("", text)) or _EDITING.search(text):
        return False
    ahead = text[: verb.start()]
    rest = _POLITE_END.sub("", " " + text[verb.end() :].strip(" .!?")).strip(" .!?")
    opens = not _OPENING.sub("", ahead).strip() or (
        not _ENGLISH.fullmatch(verb.group(0)) and not _AND_ELSEWHERE.sub("", ahead).strip()
    )
    # "that thing I said about my ex, wipe it"; "meri ex ka naam delete kar do" (the verb last, in Hindi)
    ends = _PRONOUN.match(rest) is not None or (not rest and verb.group(0) in VERB_LAST)
    return opens or ends or _ASKING.search(ahead) is not None


def _said_as(clause: str, about: str) -> str:
    """`about` (read from the plain clause) in the clause's own spelling, where it can be found there."""
    found = re.search(re.escape(about).replace(r"\ ", r"\s+"), clause, re.IGNORECASE)
    return found.group(0) if found else about
