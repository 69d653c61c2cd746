"""What a question asks of its subject, and whether a statement gives it.

A guess shares a question's subject but not what is asked of it: "What is the name of my dentist?" against
"I have a rendez-vous at the dentist on Thursday", "what's my truck number?" against a sentence about
dispatch. Recall (engine/recall.py) quotes only statements that give what is asked, and says "you haven't
told me your dentist's name" when none does.

These kinds of asking are read, each with its own test; any other question is left to recall's scores:

- a name ("the name of my dentist", "who's my team lead", "what's my dog called"): the statement speaks of
  the same one (OWNER_WORDS: the word itself, a relative's other words, a pet's kinds) and holds a name the
  question does not; a surname ("femke's last name", "my landlord's surname") by a name after the first name,
  a full or titled name, or "surname is ...";
- an identifier ("my passport number", "my blood type", "the rego on my ute", "my shoe size"): the
  statement says what it is of ("passport", "blood", "rego") and, when the question names an owner, of it;
- a date or an age of someone ("when is my wife's birthday", "how old is Tarçın"): the statement speaks of
  them, says what the date is of when the question does ("birthday"), and holds a date or a number;
- a dose ("what dose was I on again?", "quanti milligrammi"): the statement holds a dose ("10mg", "five
  milligrams").

`holds` says whether a statement holds a word named, in another form too ("despido"/"despidieron"), a dose
for a medicine or a figure beside another word held: spoken curation's match (services/spoken_curation.py).

Pure: regular expressions and word lists, no model.
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field

from memory_engine.language.keywords import content_tokens
from memory_engine.language.names import WORD
from memory_engine.language.reading import plain, split_sentences
from memory_engine.language.rules import rule
from memory_engine.language.text import APOSTROPHES
from memory_engine.language.word_lists import (
    AGE_UNITS,
    COUNTING_WORDS,
    DATE_WORDS,
    FIGURE_WORDS,
    HOW_OLD,
    MEDICINE_WORDS,
    MONTHS,
    NAME_ASKED,
    NAME_ASKED_AFTER,
    NAMING_WORDS,
    NOT_A_NAME,
    NOT_AN_OWNER,
    OWNER_ARTICLES,
    OWNING_WORDS,
    RELATIVES,
    TURNS_WORDS,
    alternation,
)

NAME = "name"
IDENTIFIER = "identifier"
_NOT_A_NAME_START = r"(?:my|our|your|his|her|their|a|an|the|so|very|not|in|at|from|on)"
DOSE = "dose"  # a dose asked ("what dose was I on", "quanti milligrammi"): given by a dose
SURNAME = "surname"  # the thing of a name asked when it is the family name ("whats femke's last name")
WHEN = "when"
AGE = "age"

# What identifies one thing of theirs among all others; asked for with what it is of ("passport number").
_IDENTIFIERS = frozenset(
    """number id no plate rego registration combo combination code pin password size type group score pb
    licence license passport postcode zipcode handle username vin ref reference line""".split()  # noqa: SIM905
)
# Identifiers that say nothing of what they identify: "my truck number" is told with "truck" and a number.
_GENERIC_IDENTIFIERS = frozenset(content_tokens("number id no code"))
_NAME_WORDS = frozenset("name names called named surname".split())  # noqa: SIM905
# Things whose name is the answer, told without the word: "the name of my town" is "Seogwipo".
_NAMED_PLACES = frozenset(
    content_tokens(
        "town city village country street road company business firm shop store bakery cafe restaurant hotel "
        "school college university uni team band club project supplier brand farm church gym pub bar "
        # the same, as the other languages of NAME_ASKED say them
        "resto restaurante ristorante école escuela escola escolinha scuola schule szkoła empresa entreprise "
        "azienda ditta bedrijf tienda loja negozio boutique laden winkel clínica clinique klinik clinica "
        "hôtel albergo hospital hôpital ospedale krankenhaus ziekenhuis ciudad cidade città ville stadt "
        "pueblo dorf calle rue strada straße straat"
    )
)
# Words a person uses for the same one: a relative, a pet, a boss. A word in several groups has them all.
_SAME_ONE_GROUPS = (
    "mom mum mother mama mam ma amma mommy mummy",
    "dad father papa pa appa daddy",
    "grandpa grandfather granddad grandad gramps lolo abuelo nonno",
    "grandma grandmother gran granny nana nan lola abuela nonna halmeoni",
    "wife missus",
    "husband hubby",
    "boyfriend bf",
    "girlfriend gf",
    "son boy lad",
    "daughter girl",
    "kid kids child children",
    "doctor dr gp physician",
    "professor prof dr supervisor lecturer",
    "boss manager supervisor",
    "roommate roomate flatmate housemate",
    "house home flat apartment apt address",
    "landlord landlady",
    "bird budgie parrot cockatiel canary parakeet",
    "cat kitten kitty",
    "operation op surgery",
)
# ... and words that stand for many: "my partner" may be told as "my husband", "my dog" as "my greyhound".
_ONE_OF = {
    "half": "partner spouse husband wife hubby boyfriend girlfriend fiance fiancé fiancee fiancée",
    "partner": "spouse husband wife hubby boyfriend girlfriend fiance fiancé fiancee fiancée",
    "spouse": "partner husband wife hubby",
    "kid": "son daughter boy girl",
    "child": "son daughter boy girl",
    "dog": "pup puppy labrador retriever spaniel terrier poodle dachshund greyhound collie beagle shepherd "
    "husky pug bulldog boxer whippet chihuahua corgi schnauzer rottweiler dalmatian",
    "lizard": "gecko iguana chameleon skink",
    "reptile": "gecko iguana chameleon skink lizard snake tortoise turtle",
    "pet": "dog cat bird budgie parrot hamster rabbit bunny gecko lizard snake tortoise turtle fish ferret horse",
    "birthday": "bday born turns turning",
    "bday": "birthday born turns turning",
}


# The same ones in the other languages people mix with English ("mon proprio", "la vet", "dulhe ka naam"): a
# question in those words is answered by a sentence in English or in theirs, never the other way round, since
# some are English words too ("chat", "pies", "mari").
_ELSEWHERE_GROUPS = (
    ("proprio propriétaire casero casera senhorio vermieter verhuurder", "landlord landlady"),
    ("veterinario veterinaria vétérinaire tierarzt tierärztin dierenarts weterynarz", "vet"),
    ("dentista dentiste zahnarzt zahnärztin tandarts dentysta", "dentist"),
    ("profesor profesora professeur professeure maestra professore professoressa lehrer lehrerin leraar lerares "
     "nauczyciel nauczycielka", "teacher"),
    ("jefe jefa chefe patron patronne capo baas szef szefowa", "boss manager"),
    ("dulha dulhe novio noivo marié sposo bräutigam bruidegom", "groom"),
    ("dulhan novia noiva mariée sposa braut bruid", "bride"),
    ("marido mari marito ehemann mąż pati", "husband hubby"),
    ("esposa femme moglie ehefrau żona patni biwi", "wife"),
    ("hija hijita filha fille figlia tochter dochter córka beti", "daughter girl"),
    ("hijo hijito filho fils figlio sohn zoon syn beta", "son boy"),
    ("chat chaton gato gata gatito gatita gatto gatta gatinho gatinha katze kater kot kotek", "cat kitten kitty"),
    ("perro perra perrito perrita cão cachorro cachorra cadela chien chienne cane cagnolino hund hond pies",
     "dog pup puppy"),
)  # fmt: skip


def _same_one() -> dict[str, frozenset[str]]:
    words: dict[str, set[str]] = {}
    for group in _SAME_ONE_GROUPS:
        tokens = set(content_tokens(group))
        for token in tokens:
            words.setdefault(token, set()).update(tokens)
    for word, others in _ONE_OF.items():
        for token in content_tokens(word):
            words.setdefault(token, {token}).update(content_tokens(others))
    for elsewhere, english in _ELSEWHERE_GROUPS:
        tokens = content_tokens(elsewhere)
        for token in tokens:  # a word of another language: its own forms and the English ones
            words.setdefault(token, {token}).update(tokens, content_tokens(english))
    return {word: frozenset(others) for word, others in words.items()}


_SAME_ONE = _same_one()
# Words for a relative: a sentence naming one speaks of that one ("husband Luc turns 55").
_RELATIVES = frozenset(content_tokens(" ".join(RELATIVES)))

_OWNER = r"(?:my|our|his|her|their|the|[a-z][\w\-]*'s)"
_NOUNS = r"((?:[a-z][\w\-]*'s\s+)?(?:[a-z0-9][\w\-]*\s+){0,2}?[a-z0-9][\w\-]*(?:'s\s+[a-z][\w\-]*)?)"
_ENDS = (
    r"(?=\s*(?:$|[?,.!;:]|\s(?:again|now|is|was|are|were|did|do|does|i|you|that|for|to|on|in|at|from|dear|"
    r"pls|please|exactly|called|named|had|has|have|so|but|and|when|before|who|which|where|whose)\b))"
)
_TOLD = r"(?:did )?i (?:tell|told|say|said|give|gave|mention|mentioned) (?:you|ya)"
_TITLES = ("mr", "mrs", "ms", "dr", "prof", "st")
_SURNAME = r"(?:(?:de|van|von|der|den|da|di|del|la|le|du|dos|das|al|bin|ibn)\s+)*[A-ZÀ-Ý][\w'\-]+"
_FULL_NAME = rule(  # "is Sofia Lindqvist", "Femke de Vries"
    rf"(?<=\s)[A-ZÀ-Ý][a-zà-ÿ]+\s+{_SURNAME}",
    finds=("My boss is Sofia Lindqvist.", "our new landlord is Femke de Vries", "I met Ahmed Al Rashid today"),
    misses=("Sofia Lindqvist is my boss.", "my boss is sofia lindqvist"),
)
_TITLED = rule(
    rf"(?i:\b(?:{'|'.join(t for t in _TITLES if t != 'st')}|miss|doctor))\.?\s+[A-ZÀ-Ý][\w'\-]+",
    finds=("my landlord is Mr Okafor, he never answers", "I'll raise it with Mrs. Bello.", "saw doctor Hughes today"),
    misses=("my landlord is mr okafor", "we live on St Kilda Road", "I saw the doctor today"),
)
_BETWEEN = rf"(?:{alternation(OWNER_ARTICLES)})\s+"
# the one asked about in another language, after the articles, possessives and fillers before it (group 1), and
# whose it is (group 3, after "de", "di", "von"...)
_ELSEWHERE = (
    rf"((?:{_BETWEEN})*)([^\W\d_][\w\-]*)"
    rf"(?:\s+(?:de|del|da|do|di|della|du|des|von|van|vom)\s+(?:{_BETWEEN})*([^\W\d_][\w\-]*))?"
)
_NOT_AN_OWNER = frozenset(NOT_AN_OWNER)
_OWNING = frozenset(OWNING_WORDS)
_DOSE_ASKED = ("dose", "dosage", "dosis", "dosering", "dosaggio")
_ASKING = (
    # "what dose was I on", "AND WHAT DOSE IS MY WATER TABLET", "quanti milligrammi": a dose, given by a dose
    ("dose", rule(
        r"\b(?:what|which|welke?|che|quale?|quali|quel(?:le)?s?|qu[eé]|qual|quais|welche[snmr]?|jakie|jaki)\s+"
        rf"(?:{alternation(_DOSE_ASKED)})\b|\b(?:how many|quanti|quantos|cu[aá]ntos|wie viele|hoeveel|ile)\s+"
        r"(?:milligrams?|mg|milligrammi|miligramas|miligramos|milligramm|miligramów)\b",
        finds=("what dose was i on again?", "and what dose is my water tablet", "e quanti milligrammi?"),
        misses=("how many tablets do i take a day?", "what statin did my gp put me on?"),
    )),
    # "what is the name of my dentist", "the licence plate of my car", "remind me the name of Yasmin's fiancé"
    ("of", rule(
        rf"\b(?:what|which|remind me|tell me)(?:'s| is| was| are| were)? the {_NOUNS} of {_OWNER}\s+{_NOUNS}{_ENDS}",
        finds=(
            "what is the name of my dentist again?",
            "and what is the licence plate of my car?",
            "kindly remind me the name of yasmin's fiancé.",
        ),
        misses=("what is the capital of australia?", "i forgot the name of my dentist"),
    )),
    # "what's the rego on my ute"
    ("of", rule(
        rf"\b(?:what|which)(?:'s| is| was)? the {_NOUNS} (?:on|for) {_OWNER}\s+{_NOUNS}{_ENDS}",
        finds=("what's the rego on my ute, did i give it to ya?", "what is the password for my laptop?"),
        misses=("what's the best tyre for a ute?",),
    )),
    # "what name did I give you for my mother"
    ("of", rule(
        rf"\bwhat (name) {_TOLD} (?:for|of) {_OWNER}\s+{_NOUNS}{_ENDS}",
        finds=("what name did i give you for my mother?", "what name did i tell you for our cat?"),
        misses=("what name should i give my new puppy?",),
    )),
    # "what's my dog called"
    ("called", rule(
        rf"\bwhat(?:'s| is| was)? (?:my|our|\w+'s)\s+{_NOUNS}(?: again)? (?:called|named)\b",
        finds=("what's my dog called?", "what was my old boat called", "what's gran's cat named again"),
        misses=("what's my dog allergic to?",),
    )),
    # "what did I tell you my brother's called", "what I told you my cholesterol number was"
    ("mine", rule(
        rf"\bwhat {_TOLD} (?:my|our|his|her|their)\s+{_NOUNS}{_ENDS}",
        finds=("what did i tell you my brother's called", "remind me what i told you my cholesterol number was"),
        misses=("what did i tell you about my brother?",),
    )),
    # "what IELTS score I told you I have"
    ("mine", rule(
        rf"\b(?:what|which) {_NOUNS} {_TOLD}\b",
        finds=("what ielts score i told you i have", "which gym did i tell you i joined?"),
        misses=("what did you tell me?",),
    )),
    # "what's my blood type", "whats noodle's morph", "what's Keisha's science teacher's name"
    ("mine", rule(
        rf"\b(?:what|which)(?:'s| is| was| are| were)? (?:my|our|his|her|their)\s+{_NOUNS}{_ENDS}",
        finds=("what's my blood type", "what is my flight number?", "what was my father's name again?"),
        misses=("what's your name?",),
    )),
    # "what is Mr. Fennimore's direct line", "what is Halvorsen Maritime's VAT number"
    ("mine", rule(
        rf"\b(?:what|which)(?:'s| is| was| are| were)? (?:(?:{alternation(_TITLES)})\.?\s+)?"
        rf"((?:(?!(?:the|a|an|that|this|these|those|my|our|your|his|her|their|st)\s)[a-z][\w\-]*\s+)?"
        rf"[a-z][\w\-]*'s\s+{_NOUNS[1:-1]}){_ENDS}",
        finds=(
            "what is mr. fennimore's direct line?",
            "what is halvorsen maritime's vat number?",
            "what's keisha's science teacher's name",
        ),
        misses=("what's the doctor's name?", "what is this week's menu?"),
    )),
    # "what shoe size am i", "what blood type do i have"
    ("mine", rule(
        rf"\b(?:what|which) {_NOUNS} (?:am i|i am|i'm|do i (?:have|wear|take|use|drive))\b",
        finds=("what shoe size am i? buying new runners", "what blood type do i have", "what car do i drive?"),
        misses=("what should i wear tonight?",),
    )),
    # "who's my team lead", "who is doing my knee op"; not "who's the friend that ...", told by what she did
    ("who", rule(
        rf"\bwho(?:'s| is| was| are)?(?: doing)? (?:my|our|his|her|their)\s+{_NOUNS}{_ENDS}",
        finds=("who's my team lead again, need to cc them", "who is doing my knee op?", "who's my sous chef now?"),
        misses=("who's the friend that's done loads of marathons?",),
    )),
    # "when is my wife's birthday"
    ("when", rule(
        rf"\bwhen(?:'s| is| was) {_OWNER}\s+{_NOUNS}{_ENDS}",
        finds=("when is my wife's birthday, did i mention it?", "when's my girlfriend's bday again?"),
        misses=("when are my exams?", "when should my son start school?"),
    )),
    # "how old is Tarçın", "remind me how old Momo is"
    ("old", rule(
        r"\bhow old (?:is |was |are |were )?"
        r"(?:(my|our) (?:[a-z]+ (?!again|now|then|exactly|these|this|turning|pls|please)(?=[a-z]))?)?"
        r"([a-z][\w\-]*)(?: is| was)?\b",
        finds=("how old is tarçın, did i tell you?", "remind me how old momo is", "how old is my middle lad again"),
        misses=("how long is my passport valid?",),
    )),
    # "client's name again?"
    ("mine", rule(
        rf"^(?:and |so |oh |also )?([a-z][\w\-]*'s\s+(?:[a-z]+\s+)?(?:name|number|id)){_ENDS}",
        finds=("client's name again?", "vale's last name? booking a table under her name", "so mum's phone number?"),
        misses=("what's the client's name?", "client's names are on the list"),
    )),
    # an age or a name asked in other languages, of someone's ("el marido de mi hermana"): "cuántos años tiene
    # Chispa", "cómo se llama la vet", "wie heißt mein Zahnarzt", "dulhe ka naam kya hai"
    ("aged", rule(
        rf"(?<!\w){alternation(HOW_OLD)}\s+{_ELSEWHERE}",
        finds=("cuántos años tiene chispa?", "wie alt ist tim?", "quantos anos a neusa tem?"),
        misses=("¿cuántos años tienes?", "how old is chispa?"),
    )),
    ("named", rule(
        rf"(?<!\w){alternation(NAME_ASKED)}\s+{_ELSEWHERE}",
        finds=("cómo se llama la vet otra vez?", "wie heißt der zahnarzt?", "c'est quoi le nom de mon proprio déjà?"),
        misses=("cómo se llama?", "what's the vet called?"),
    )),
    ("named", rule(
        rf"(?<!\w)()([^\W\d_][\w\-]*)()\s+{alternation(NAME_ASKED_AFTER)}\b",
        finds=("dulhe ka naam kya hai, card pe likhna hai", "meri beti ki name kya hai?"),
        misses=("mera naam kya hai",),
    )),
    # "- my gym membership number? renewal form", "ingrid's direct line?": a thing of theirs asked in a few words
    ("terse", rule(
        r"^(?:[-*\u2022]\s*)?(?:and |so |oh |also |remind me:?\s)?"
        r"(?:(?:my|our)\s+|(?=(?!(?:what|where|how|who|when|why|that|it|there|here|he|she)'s)[a-z][\w\-]*'s\s))"
        r"((?:[a-z][\w\-]*'s\s+)?(?:[a-z0-9][\w\-]*\s+){0,2}[a-z0-9][\w\-]*)\s*\?",
        finds=("- my gym membership number? renewal form", "- ingrid's direct line? want to call not email", "my dog?"),
        misses=("is my flight on time?", "my car keeps making a weird noise, any idea why?", "where's my passport?",
                "how's my credit score?"),
    )),
)  # fmt: skip

# A capital letter inside a sentence, after a space: a name written as one ("the TA is Priya Raman").
_CAPITAL_INSIDE = rule(
    r"(?<=\s)[A-ZÀ-Ý][a-zà-ÿ]",
    finds=("the TA is Priya Raman", "Sofia married Tom, her surname is Brandt now."),
    misses=("ya write the email pls the TA is priya raman", "Sofia is my boss."),
)


@dataclass(frozen=True)
class Asked:
    """What a question asks (`kind`), what of (`thing`: "passport number", "birthday"; "" for a name or an
    age) and of whom (`owner`: "dentist", "euan's bride"; "" when of the person themselves), and whether it
    was asked in English, so that a reply can say it back in the question's words."""

    kind: str
    thing: str
    owner: str
    in_english: bool = field(default=True, compare=False)  # asked in English: told back in its words

    def in_their_terms(self, question: str) -> str:
        """What was asked, as a reply tells it back: "your dentist's name", "Keisha's science teacher's
        name", "your truck number", "your wife's birthday", "how old Tarçın is". Pure."""
        if self.kind == DOSE:
            return "the dose"
        owner = _as_written(self.owner, question)
        if not self.in_english:  # "the name of “dulhe”", "how old Chispa is", not "the dulhe's name"
            if self.kind == AGE:
                return (
                    f"how old {owner} is"
                    if owner
                    else f"how old your \u201c{_as_written(self.thing, question)}\u201d is"
                )
            return f"the name of \u201c{_as_written(self.owner_head, question)}\u201d"
        if self.kind == AGE:
            if owner:
                return f"how old {owner} is"
            return f"how old your {_as_written(self.thing, question)} is" if self.thing else "how old you are"
        if owner:  # "your dentist", "the client", "Keisha's science teacher"
            whose = _whose(self.owner, question) or ("" if owner[0].isupper() else "the")
            owner = f"{whose} {owner}" if whose else owner
        thing = (self.thing or "name") if self.kind == NAME else _as_written(self.thing, question)
        if not owner:
            return f"your {thing}"
        return f"{owner}'s {thing}"

    def gives(self, statement: str, question: str) -> bool:
        """Whether `statement` gives what is asked, in one of its sentences (with the next one when it goes
        on about the same one: "We hired the new sous chef!! Her name is Fernanda."): see the module's
        description. Pure."""
        sentences = _sentences(statement)
        for i, sentence in enumerate(sentences):
            following = sentences[i + 1] if i + 1 < len(sentences) else ""
            if _GOES_ON.match(following):
                sentence = f"{sentence} {following}"
            if self._gives(sentence, question):
                return True
        return False

    def _gives(self, sentence: str, question: str) -> bool:
        said = set(content_tokens(sentence))
        if self.kind == DOSE:
            return _DOSE.search(sentence) is not None
        if self.kind == NAME and self.thing == SURNAME:
            # told after their name ("Sofia Lindqvist"), or said to be one ("her surname is Lindqvist")
            if not _CAPITAL_INSIDE.search(sentence):  # "the TA is priya raman": written in lower case,
                # two words after it are all one can tell
                head = self.owner_head.removesuffix("s")  # "my TAs last name"
                told = rf"\b{re.escape(head)}s?\s+(?:is|was|called|named)\s+(?!{_NOT_A_NAME_START}\b)\w+\s+\w+"
                return re.search(told, sentence, re.IGNORECASE) is not None
            # of a role ("my boss is Sofia Lindqvist", "my landlord is Mr Okafor"): a full name or a titled one; of
            # someone named ("Sofia"), only a name after hers
            named = re.search(rf"\b{re.escape(self.owner_head.capitalize())}\b", sentence) is not None
            if not named and self._of_owner(said) and (_TITLED.search(sentence) or _FULL_NAME.search(sentence)):
                return True
            after_name = rf"(?i:\b{re.escape(self.owner_head)})\s+{_SURNAME}"
            return re.search(rf"{after_name}|(?i:surname|last name|family name)\b.*\b[A-ZÀ-Ý]", sentence) is not None
        if self.kind == NAME:
            if self.owner_head in _NAMED_PLACES:
                return _names_one(sentence, question)
            # a name in a sentence written all in lower case cannot be told from other words
            return self._of_owner(said) and (
                sentence == sentence.lower() or _names_one(sentence, question, person=True, near=self._owner_words())
            )
        if self.kind != WHEN and not self._of_owner(said):
            return False
        if self.kind == IDENTIFIER:
            if shape := _SHAPES.get(_shape_of(self.thing)):
                # an address or a number told without its word; a date is no phone number
                return bool(shape.search(_ISO_DATE.sub(" ", not_a_time(sentence))))
            words = [word for word in content_tokens(self.thing) if not word[0].isdigit()]
            specific = [word for word in words if word not in _GENERIC_IDENTIFIERS]
            number_too = len(specific) < len(words) or not specific  # "truck number": "truck" and a number
            return all(_said(word, said) for word in specific) and (not number_too or _has_digit(not_a_time(sentence)))
        if self.kind == WHEN:
            if self.owner and not self._of_owner(said) and said & _RELATIVES:
                return False  # "husband Luc turns 55" does not give my mom's birthday; "Noor's birthday" may
            return any(_said(word, said) for word in content_tokens(self.thing)) and bool(
                _WHEN_WORDS.search(sentence.lower())
            )
        return bool(_AN_AGE.search(sentence.lower()))  # AGE

    def speaks_of(self, statement: str) -> bool:
        """Whether `statement` speaks of the one asked about (`owner`), or of the thing of theirs (`thing`) when
        it is no one else's. Pure."""
        said = set(content_tokens(statement))
        if self.owner:
            return self._of_owner(said)
        words = [word for word in content_tokens(self.thing) if not word[0].isdigit()]
        return bool(words) and all(_said(word, said) or _begun_alike(word, said) for word in words)

    @property
    def owner_head(self) -> str:
        words = content_tokens(self.owner.rpartition("'s ")[2])
        return words[-1] if words else ""

    def _owner_words(self) -> frozenset[str] | None:
        """The words a sentence may use for the owner, when the owner is a relative ("mother": "mum", "mom"...),
        whose name is told beside the word for them; None for anyone or anything else ("my old boat, the Mary
        Ellen")."""
        words = frozenset({self.owner_head, *_SAME_ONE.get(self.owner_head, ())})
        return words if words & _RELATIVES else None

    def _of_owner(self, said: set[str]) -> bool:
        """Whether the sentence speaks of the owner: its head word ("wholesaler" of "fabric wholesaler")
        and whose it is ("euan" of "euan's bride"); asked in another language, a word of the sentence may begin
        as the head does ("proprio", "propriétaire"), since a word there has more forms than the reply reads."""
        if not self.owner:
            return True
        whose, _, owner = self.owner.rpartition("'s ")
        needed = [self.owner_head, *(content_tokens(whose)[-1:] if whose else [])]
        return all(_said(word, said) or (not self.in_english and _begun_alike(word, said)) for word in needed if word)


def _asked_elsewhere(form: str, found: re.Match) -> Asked | None:
    """A name or an age asked in another language (forms "named" and "aged"): of the one named after the words
    that ask, and whose it is ("el marido de mi hermana": "hermana's marido"); an age of a thing of theirs ("mi
    hija") as in English (`_age`); None for the assistant, a thing pointed at or the world ("wie heißt du?").
    "... ka naam" names the one before it."""
    between, who, whose = (found.group(i) or "" for i in (1, 2, 3))
    if who in _NOT_AN_OWNER or whose in _NOT_AN_OWNER:
        return None
    if form == "aged":
        mine = bool(set(between.split()) & _OWNING)
        return Asked(AGE, who if mine else "", "" if mine else who, in_english=False)
    return Asked(NAME, "", f"{whose}'s {who}" if whose else who, in_english=False)


def _age(possessive: str | None, who: str) -> Asked | None:
    """The age asked by "how old ...": of someone named ("how old is Tarçın": any statement of theirs with an age
    gives it), of a thing of theirs ("how old is my horse": `thing`, told in words of its own, "my mare Sable,
    she's 19", so any age told gives it), or their own ("how old am I", "how old did I say I was"); not the
    assistant's ("how old are you")."""
    if possessive:
        return Asked(AGE, who, "")
    if who in ("you", "u", "ya", "the", "a", "an", "this", "that", "it"):
        return None  # the assistant's, or a thing of the world's: "how old is the universe"
    return Asked(AGE, "", "" if who in _ASKING_OWN else who)


_ASKING_OWN = frozenset(("am", "i", "did", "do", "does", "will", "would", "should", "was", "were"))
_GOES_ON = rule(
    r"(?i)^(?:he|she|they|his|her|their|its|it's|it is)\b",
    finds=("Her name is Fernanda Ocampo.", "He starts on Monday.", "It's a grey Peugeot."),
    misses=("Hers is the red one.", "Then she called me back."),
)


def _sentences(text: str) -> list[str]:
    """The sentences of `text` (language.split_sentences), and the parts of each between semicolons."""
    return [part for sentence in split_sentences(text) for part in sentence.split("; ") if part]


def asked_of(question: str) -> Asked | None:
    """What `question` asks of its subject, when it asks a name, an identifier, a date or an age in a way
    read here (the first of _ASKING's forms that reads one); None for anything else. Pure."""
    text = plain(question)
    for form, pattern in _ASKING:
        if (found := pattern.search(text)) is None:
            continue
        if (asked := _read(form, found)) is not None:
            return asked
        if form in ("mine", "terse") and (asked := _an_acronym(found.group(1), question)) is not None:
            return asked
    return None


def _an_acronym(thing: str, question: str) -> Asked | None:
    """An identifier asked by its letters ("what's my RFC?", "my PAN?"): the thing's last word written in capitals
    in the question, not a word for someone ("my GP")."""
    owner, _, thing = thing.rpartition("'s ")
    last = thing.rsplit(" ", 1)[-1]
    if not (2 <= len(last) <= 5 and last.isalpha()) or last in _SAME_ONE:
        return None
    return Asked(IDENTIFIER, thing, owner) if re.search(rf"\b{last.upper()}\b", question) else None


# Whose the owner is, before its words: "my dentist", "the knee doctor"; not "euan's bride".
_WHOSE_FIRST = rule(
    r"^(?:my|our|his|her|their|the) ",
    finds=("my dentist", "the knee doctor", "her fiancé"),
    misses=("yasmin's fiancé", "mythology teacher"),
)


def _read(form: str, found: re.Match) -> Asked | None:
    groups = [group for group in found.groups() if group is not None]
    if form == "of":  # the owner as asked: "euan's bride", not "bride"
        owner = found.group(0).rsplit(" of ", 1)[-1].rsplit(" on ", 1)[-1].rsplit(" for ", 1)[-1]
        asked = _asked(groups[0], _WHOSE_FIRST.sub("", owner))
        told_by_deeds = _TOLD_BY_DEEDS.match(found.string, found.end())
        if asked and asked.kind == NAME and told_by_deeds and asked.owner_head not in _NAMED_PLACES:
            return None  # "the gentleman who is looking after my eyes": known by what he does, not the word
        return asked
    if form == "dose":  # a dose asked ("what dose", "how many milligrams"); the medicine itself is left to the
        # scores: it is told in too many ways ("I'm on lithium", "switched me to venlafaxine") to refuse a statement
        return Asked(DOSE, DOSE, "")
    if form in ("who", "called"):
        return Asked(NAME, "", groups[0])
    if form in ("named", "aged"):
        return _asked_elsewhere(form, found)
    if form == "old":
        return _age(found.group(1), found.group(2))
    owner, _, thing = groups[0].rpartition("'s ")
    if form == "terse":  # "my gym membership number?", not "my BF name?" (read by the words for them)
        asked = _asked(thing, owner)
        return asked if asked is not None and asked.kind == IDENTIFIER else None
    if form == "when":
        return Asked(WHEN, thing, owner) if thing.split()[-1] in ("birthday", "bday") else None
    return _asked(thing, owner)


_TOLD_BY_DEEDS = rule(
    r"\s+(?:who|that|whose)\b",
    finds=("the surname of the gentleman who is looking after my eyes", "the friend that's done loads of marathons"),
    misses=("the name of my dentist", "the plumber whom i called"),
)
_YOUR = {"my": "your", "our": "your", "his": "his", "her": "her", "their": "their", "the": "the"}


def _whose(owner: str, question: str) -> str:
    """Whose the owner is, as a reply says it: "your" for "my dentist", "the" for "the knee doctor"."""
    found = re.search(rf"\b(my|our|his|her|their|the)\s+{re.escape(owner.split()[0])}", plain(question))
    return _YOUR[found.group(1)] if found else ""


# Any apostrophe memory_engine.language.text straightens, as the question may spell it.
APOSTROPHE = "[" + "'" + "".join(chr(code) for code in APOSTROPHES) + "]"


def _as_written(words: str, question: str) -> str:
    """`words` (read in lower case) as the question spells them: "Keisha's science teacher", "IELTS score"."""
    if not words:
        return ""
    found = re.search(re.escape(words).replace("'", APOSTROPHE), question, re.IGNORECASE)
    return found.group(0) if found else words


def _asked(thing: str, owner: str) -> Asked | None:
    words = thing.split()
    if not words:
        return None
    if words[-1] in _NAME_WORDS:
        surname = words[-1] == "surname" or (len(words) > 1 and words[-2] in ("last", "family"))
        if not surname and len(words) > 1 and words[-2] in ("full", "second", "middle"):
            return None
        owner = owner or " ".join(words[: -2 if surname and words[-1] == "name" else -1])
        return Asked(NAME, SURNAME if surname else "", owner) if owner else None
    if words[-1] in _IDENTIFIERS or _shape_of(thing):
        return Asked(IDENTIFIER, thing, owner)
    if words[-1] in ("birthday", "bday"):
        return Asked(WHEN, thing, owner)
    return None


# What some identifiers look like, whatever words tell them: an email address has an "@" ("reach her at
# m.marwyck@uni.ac.uk"), a phone number a run of six digits or more ("call 0412 555 019"), not a date.
_EMAIL, _PHONE = "email", "phone"
_ISO_DATE = rule(
    r"\b\d{4}-\d{1,2}-\d{1,2}\b",
    finds=("Mom's surgery is on 2026-12-14", "my passport expires 2031-3-9"),
    misses=("my passport expires 14/03/2031", "call me on 0412 555 019"),
)
_SHAPES = {
    _EMAIL: rule(
        r"\S@\S",
        finds=("You can reach Prof. Marwyck at h.marwyck@uni.ac.uk", "My email is k.jones@gmail.com"),
        misses=("meet me @ the cafe at 3", "my email is down again"),
    ),
    _PHONE: rule(
        r"(?<![\d/])\+?\d(?:[\s.\-()]*\d){5,}",
        finds=("you can call Mr Fennimore on 020 7946 0321", "her mobile is +61 412 555 019", "ring 555-0192"),
        misses=("the gate code is 4471", "my flight is on 12/05/2025", "the report is due by 09/11/2026"),
    ),
}
_SHAPE_WORDS = (
    (
        _EMAIL,
        rule(
            r"\b(?:e-?mail(?: address)?|mail address)$",
            finds=("email address", "her e-mail", "work mail address"),
            misses=("email password", "email signature"),
        ),
    ),
    (
        _PHONE,
        rule(
            r"\b(?:(?:phone|telephone|mobile|cell|whatsapp) (?:number|no)|direct line|landline)$",
            finds=("mobile number", "direct line", "mum's landline"),
            misses=("phone case", "mobile number plan"),
        ),
    ),
)


def holds_a_phone_number(sentence: str) -> bool:
    """Whether `sentence` holds what a phone number is written as (a run of six digits or more), not a date. Pure."""
    return _SHAPES[_PHONE].search(_ISO_DATE.sub(" ", not_a_time(sentence))) is not None


def _shape_of(thing: str) -> str:
    """_EMAIL or _PHONE when `thing` ("her email address", "mobile number", "direct line") is one; else ""."""
    return next((shape for shape, words in _SHAPE_WORDS if words.search(thing)), "")


BEGUN_ALIKE = 5  # letters two forms of a word of another language share at least: "proprio", "propriétaire"


def _begun_alike(word: str, said: set[str]) -> bool:
    """Whether a word of `said` begins as `word` does, and is not the same word of another gender ("hermano",
    "hermana"; "figlio", "figlia")."""
    return len(word) >= BEGUN_ALIKE and any(
        other[:BEGUN_ALIKE] == word[:BEGUN_ALIKE] and not (len(other) == len(word) and other[:-1] == word[:-1])
        for other in said
    )


def _said(word: str, said: set[str]) -> bool:
    """Whether the statement's words (`said`) hold `word`, another word a person uses for the same one, or
    the word misspelt by a letter ("roomate")."""
    if word in said or _SAME_ONE.get(word, frozenset()) & said:
        return True
    return len(word) >= 6 and any(len(other) >= 5 and _one_letter_apart(word, other) for other in said)


_FIGURE_WORDS = frozenset(content_tokens(" ".join(FIGURE_WORDS)))
_MEDICINE_WORDS = frozenset(content_tokens(" ".join(MEDICINE_WORDS)))
# A dose: milligrams and the like, not millilitres of formula or units of alcohol.
_DOSE = rule(  # "10mg", "five milligrams"
    rf"(?i)\b(?:\d+(?:[.,]\d+)?|{alternation(COUNTING_WORDS)})\s*(?:mg|mcg|µg|ug|iu|milligrams?|micrograms?)\b",
    finds=(
        "the doc put me on methylphenidate 10mg.",
        "I take amlodipine, five milligrams each morning",
        "Vitamin D 1000 IU daily",
    ),
    misses=("my baby drinks 120ml of formula every 3 hours", "I had 3 units last night"),
)


def holds(word: str, sentence: str, said: frozenset[str] | None = None) -> str:
    """What `sentence` (its words `said`, as content_tokens gives them, when known) holds of a word named (as
    content_tokens gives it): WORD for the word, another word for it (`_said`) or another form of it in any
    language ("diagnosis": "got diagnosed", "despido": "me despidieron"); DOSE for a medicine named by its kind
    when the sentence holds a dose ("the meds": "methylphenidate 10mg"); FIGURE for a value's word when it holds
    a figure ("the price": "1.380 Euro"), which says it only beside another word held; "" for none. Pure."""
    said = frozenset(content_tokens(sentence)) if said is None else said
    if _said(word, said) or any(_another_form(word, other) for other in said):
        return HELD_WORD
    if word in _MEDICINE_WORDS and _DOSE.search(sentence):
        return HELD_DOSE
    if word in _FIGURE_WORDS and _has_digit(not_a_date(sentence)):
        return HELD_FIGURE
    return ""


HELD_WORD, HELD_DOSE, HELD_FIGURE = "word", "dose", "figure"
# What ends two forms of one word after what they share: "diagnos"/"diagnosis", "despid-o"/"despid-ieron"; not
# "frank"/"frankfurt", "doctor"/"doctorate", "intern"/"interview", "grandma"/"grandpa", "harris"/"harrison",
# "paint"/"painter".
_ENDINGS = frozenset(
    ("", "s", "es", "e", "ed", "d", "ing", "is", "o", "os", "ón", "ido", "ida", "ieron", "ió", "io", "ar", "ir",
     "en", "ung", "t", "te", "i", "ando", "endo", "ados", "idos")
)  # fmt: skip
_GENDER_ENDINGS = ({"", "a"}, {"o", "a"}, {"os", "as"}, {"", "e"}, {"e", "a"})  # "Daniel"/"Daniela", "amigo"/"amiga"


def _another_form(word: str, other: str) -> bool:
    """Whether two words are forms of one: they share their first BEGUN_ALIKE letters or more, and what follows in
    each is an ending (`_ENDINGS`), not the other gender's ("hermano", "hermana")."""
    shared = len(os.path.commonprefix((word, other)))
    ends = {word[shared:], other[shared:]}
    return word != other and shared >= BEGUN_ALIKE and ends <= _ENDINGS and ends not in _GENDER_ENDINGS


_MONTHS = rf"(?:{alternation(MONTHS)})\b\.?"
# A date, a time, a year or a while: "on 7 May", "Mon 06:40", "a 2016 with", "45 min", not what identifies a thing
_DAY_OF_MONTH = (
    rf"\d{{1,2}}(?:st|nd|rd|th)?(?:\s+of)?\s+{_MONTHS}(?:\s+\d{{4}})?|{_MONTHS}\s+\d{{1,2}}(?:st|nd|rd|th)?"
    r"(?:,?\s+\d{4})?"
)
_TIME_TOLD = rule(
    rf"(?i)\b(?:{_DAY_OF_MONTH}|\d{{1,2}}[:.]\d{{2}}(?:\s*[ap]\.?m\.?)?|\d{{1,2}}\s*[ap]\.?m\b|"
    r"(?:in|since|from|a|an) (?:19|20)\d{2}|"
    r"\d+[\s-]*(?:min|mins|minutes?|hours?|hrs?|h|days?|weeks?|months?|years?|yrs?|km|kg|miles?)\b|\d{1,2}(?:st|nd|rd|th))\b",
    finds=("My flight is on 7 May", "train leaves Mon 06:40", "we moved here in 2016", "it's a 45 min drive"),
    misses=("my locker code is 4471", "call me on 0412 555 019"),
)
# a day of a month only: a price ("4.50"), a time of day ("8:30 to 4:30") and "a 1900 calorie plan" are counts
_DATE_ONLY = rule(
    rf"(?i)\b(?:{_DAY_OF_MONTH})",
    finds=("the quote comes on 3 May", "her birthday is March 3rd", "we fly out on the 9th of August"),
    misses=("the coffee was 4.50", "I work 8:30 to 4:30"),
)


def not_a_time(sentence: str) -> str:
    """`sentence` without what it says of a date, a time, a year or a while (`_TIME_TOLD`)."""
    return _TIME_TOLD.sub(" ", sentence)


def not_a_date(sentence: str) -> str:
    """`sentence` without its days of a month ("on 3 March", "May 2nd"): what a count asked for may be, when
    not one of time."""
    return _DATE_ONLY.sub(" ", sentence)


def _has_digit(text: str) -> bool:
    return any(character.isdigit() for character in text)


def _one_letter_apart(one: str, other: str) -> bool:
    if abs(len(one) - len(other)) > 1:
        return False
    return difflib.SequenceMatcher(None, one, other).ratio() >= 1 - 2 / (len(one) + len(other))


_WHEN_WORDS = rule(
    rf"\b(?:{alternation(DATE_WORDS)}|\d{{1,2}}(?:st|nd|rd|th)|\d{{1,2}}[:./]\d{{1,2}}|\d{{4}})\b",
    finds=("note to self: noor's birthday is march 3rd", "her birthday is on the 14th", "mum was born in 1962"),
    misses=("my wife's birthday is coming up", "she loves birthday cake"),
)
_NUMBER = rule(
    rf"\b\d+\b|\b{alternation(COUNTING_WORDS)}\b",
    finds=("my son leo is 7", "the twins turn five in june"),
    misses=("someone left a note on my car", "we played tennis after work"),
)
# A number told as an age: "9 years", "a 3-year-old", "turns 90", "the twins are 7", "she'll be nearly 5";
# not "the last two days", "ate 2 crickets".
_AN_AGE = rule(
    rf"(?:\b(?:turn|turns|turned|turning|aged?|is|are|was|were|be|i.m|im|am|he.s|she.s|they.re|it.s|at)\s+"
    rf"(?:(?:nearly|almost|about|around|only|just|already|now)\s+)?(?:{_NUMBER.pattern}))(?!\s*(?:%|percent|kg|km))"
    rf"|(?:{_NUMBER.pattern})\s*-?\s*(?:years?|yrs?|months?|mos?|weeks?|y/?o|yo|{alternation(AGE_UNITS)})\b"
    rf"|\b(?:{alternation(TURNS_WORDS)})\s+(?:{_NUMBER.pattern})"
    rf"|\b[^\W\d_]+\s+(?:{alternation(AGE_UNITS)})\b",  # "neun Jahre", "siete años": a number in words there
    finds=(
        "still keep a mare, sable, she's 19 now",
        "tarçın turns 3 in may, a 3-year-old tabby.",
        "mein sohn lukas ist neun jahre alt.",
    ),
    misses=(
        "my parakeet sunny has been very quiet the last two days.",
        "the gecko ate 2 crickets",
        "my weight is 80 kg",
    ),
)
_NOT_A_NAME = frozenset(NOT_A_NAME)
_NAMING = rule(
    rf"\b{alternation(NAMING_WORDS)}\s+(\S+)",
    finds=("our dog is called toby.", "her name's ines", "i have a greyhound named comet.", "he goes by jim"),
    misses=("what's her nickname?", "the name escapes me"),
)


def _names_one(statement: str, question: str, *, person: bool = False, near: frozenset[str] | None = None) -> bool:
    """Whether `statement` holds a name the question does not: a capitalised word inside a sentence, or the
    word after "called"/"named". A `person`'s name is not one after "in", "at", "from": "my mother lives in
    Onitsha" names a town. With `near` (the words for a relative asked about: "mother", "mum", "mom"), it
    is also within NEAR_WORDS words of one of them: "my mother Ngozi", "Ngozi, my mum", not "my mother
    lives in Onitsha and wants to learn WhatsApp"."""
    asked_words = {word.lower() for word in WORD.findall(question)}
    names = {found.group(1).strip(".,!?;:").lower() for found in _NAMING.finditer(statement.lower())}
    words = list(WORD.finditer(statement))
    beside = [] if near is None else [i for i, found in enumerate(words) if set(content_tokens(found.group(0))) & near]
    for index, found in enumerate(words):
        word = found.group(0)
        before = statement[: found.start()].rstrip(" \"'\u201c(")
        opens = not before or (before[-1] in ".!?:" and before.lower().rstrip(".").rsplit(" ", 1)[-1] not in _TITLES)
        if near is not None and opens and _NAME_THEN_WHO.match(statement, found.end()):
            opens = False  # "Ngozi, my mum, ...", "Bradley is my grandson"
        if not word[0].isupper() or opens or word.lower() in _NOT_A_NAME:
            continue
        if person and before.lower().rsplit(" ", 1)[-1] in _PLACE_WORDS:
            continue
        if near is not None and not any(abs(index - at) <= NEAR_WORDS for at in beside):
            continue
        names.add(word.lower())
    return bool(names - asked_words)


_NAME_THEN_WHO = rule(  # after a name: "Ngozi, my mum", "Bradley is my grandson", "Ines (my sister)"
    r"(?:,\s*|\s+is\s+|\s+\()(?:my|our)\b",
    re.IGNORECASE,
    finds=("Ngozi, my mum, lives in Onitsha.", "Bradley is my grandson", "Ines (my sister) is visiting"),
    misses=("Bradley is mine to look after", "Ngozi, mum's friend, called"),
)
NEAR_WORDS = 3  # a person's name is told beside the word for them: "my sister, the nurse, Ines"
_PLACE_WORDS = frozenset("in at from to near into of on via".split())  # noqa: SIM905
