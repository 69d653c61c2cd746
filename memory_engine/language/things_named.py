"""What a spoken request to forget names: the thing without the words that frame it ("what I said about my
diagnosis" -> "my diagnosis"), a clause of someone's that goes on after it, the parts of a list, and whether a
statement speaks to the assistant or of a dose of the person's own. Used by services/spoken_curation.py, which
reads `MemoryRequest.about` as said (any case).
"""

import re

from memory_engine.language.rules import rule
from memory_engine.language.word_lists import OWNING_WORDS, TOLD_ABOUT, alternation

__all__ = ["ARTICLE", "FIRST_PERSON", "FRAME", "FRAME_END", "GOES_ON", "LIST_SEPARATOR", "OWNING_WORD", "TO_YOU"]

# Words of a request that name no thing: "what I said about", "the bit about".
FRAME = rule(
    r"^(?:(?:the|that) (?:thing|bit|part|stuff|fact)s? (?:about|that|on)|(?:what|everything|anything|all|that) "
    r"(?:i|we) (?:said|told you|told|mentioned|shared|gave you)(?: about| on| of)?|"
    r"(?:i|we) (?:said|told you|mentioned) (?:anything|something|stuff) (?:about|on)|lo del?|eso del?|that|"
    r"(?:the |any |all )?(?:information|info|details?) (?:about|on|regarding|of)|"
    rf"{alternation(TOLD_ABOUT)})\s+",
    re.IGNORECASE,
    finds=(
        "what I said about my diagnosis",
        "the bit about my ex",
        "lo del despido",
        "quello che ti ho detto su Chiara e la separazione",
    ),
    misses=("my phone number", "the thing he said about my mum"),
)
# The frame after the thing: "the stats thing i said" -> "the stats".
FRAME_END = rule(
    r"\s+(?:thing|stuff|bit)?\s*(?:i|we) (?:said|told you|mentioned)$",
    re.IGNORECASE,
    finds=("the stats thing i said", "the gate code we mentioned", "that stuff about Dan I told you"),
    misses=("what i said about my pin",),
)
# A clause of someone's after the thing named: "the thing about lyle's birthday he says he don't want any fuss".
GOES_ON = rule(
    r"\s+(?:he|she|they|we|it)\s+(?:says|said|wants|want|doesn't|don't|does|is|isn't|was|wasn't|asked|decided|"
    r"prefers|told|thinks|would|will|has|had)\b",
    re.IGNORECASE,
    finds=("lyle's birthday he says he don't want any fuss", "my dad he has cancer", "the wedding they decided on"),
    misses=("the dress she wore", "my sister's new job"),
)
# Words to the assistant: a clause said to it ("I should prefer that you not retain my home address") tells nothing.
TO_YOU = rule(
    r"(?<![\w'])(?:you|your|you're|u|ur)(?![\w'])",
    re.IGNORECASE,
    finds=("I should prefer that you not retain my home address", "can u keep this between us", "Your tip helped"),
    misses=("our house is in Leeds", "my youngest is called Ava"),
)
# A word owning something: where a request that points at a clause starts naming its thing ("... my home address").
OWNING_WORD = rule(
    rf"(?<![\w'])(?:{alternation(OWNING_WORDS)})(?![\w'])",
    re.IGNORECASE,
    finds=("that you not retain my home address", "meine Telefonnummer", "mon adresse"),
    misses=("the mystery box", "the address of the gym"),
)
ARTICLE = rule(
    r"^(?:the|den|die|das|le|la|les|el|los|las|il|lo|gli|het)\s+",
    re.IGNORECASE,
    finds=("den Token", "the meds", "la separazione"),
    misses=("theory class", "my meds"),
)
# The person speaking of themselves: a dose is theirs ("the doc put me on methylphenidate 10mg"), not a relative's.
FIRST_PERSON = rule(
    r"(?i)(?<![\w'])(?:i|me|i'm|i've|myself)(?![\w'])",
    finds=("the doc put me on methylphenidate 10mg.", "I take sertraline 50mg", "i'm on 20mg of prozac"),
    misses=("my dad takes warfarin 5mg", "Mia is on 10mg of melatonin"),
)
# Between the things of a list: "the glaucoma and the drops both", "my diagnosis or the meds". Spanish "y" and
# Italian or Portuguese "e" are letters as often ("vitamin e tablets"): they join two things only before a name
# or a word that opens one (an article, a possessive).
LIST_SEPARATOR = rule(
    r"\s*,\s*|\s+(?:and|&|et|und|or|ou|oder|lub)\s+|\s+[ye]\s+(?=[A-ZÀ-ÖØ-Ý]|(?:el|la|los|las|lo|il|le|gli|un|una|uno|"
    r"mi|mis|tu|tus|su|sus|mio|mia|miei|mie|meu|minha|meus|minhas|os)\b)",
    finds=(
        "the glaucoma and the drops both",
        "my diagnosis or the meds",
        "my eyes, the glaucoma",
        "Chiara e la separazione",
        "mi madre y mi padre",
        "Chiara e Marco",
        "o diagnóstico e os remédios",
    ),
    misses=(
        "my brand new phone",
        "the andes trip",
        "my vitamin e tablets",
        "the vitamin e i take",
        "vitamin e as prescribed",
        "plan b y nada más",
    ),
)
