"""What a message asks, read once: its intent.

A weak model's reply (engine/recall.py) depends on what the message asks: about something the person said
or is (MEMORY: their cat's name, where they live), about someone or something in no one's words, which a
statement of theirs may answer (MAYBE: "Whose wedding is in January?"), or nothing the memory answers
(None: small talk, a request for advice, an opinion, knowledge of the world or something made up).

`read` turns a message into an `Intent`: that kind, the rule that decided it, the part that asks, the
kind of answer wanted (a date, a number, a name, a proper name), whether it asks how things are now, and
what it asks of whom (language/asked.py). The kinds are decided by RULES, an ordered table of named rules:
the first that applies decides, and the log and the intent name it. Only the sentences that ask are read
for most rules: "I've tried everything. What helps with jet lag?" asks nothing about the person. A question
none of them reads ("rego?", "¿Cómo se llama mi perra?", "Tên quán mình làm là gì nhỉ?") is MAYBE (UNREAD):
the memory's own match decides whether a statement answers it (recall.py), unless it is an English yes/no
question, a tag ("safe right?") or gives numbers to work with.

The labelled messages in bench/data/intents.json are read by a test and by `manage.py bench_intents`.
Everything here is pure.
"""

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass

from memory_engine.language.asked import Asked, asked_of, not_a_time
from memory_engine.language.keywords import content_tokens
from memory_engine.language.reading import (
    TELLS_WHAT_TO_REMIND,
    asks,
    is_statement,
    opens_as_imperative,
    plain,
    questions,
    split_sentences,
)
from memory_engine.language.rules import rule
from memory_engine.language.word_lists import (
    CLOCK_ASKED,
    FILLERS,
    FIRST_PERSON,
    HOW_OLD,
    NOW_WORDS,
    OWNING_WORDS,
    PHONE_ASKED,
    POSSESSIVE,
    TOLD_YOU_ELSEWHERE,
    VALUE_NOUNS,
    WANTED_NOUNS,
    WH_ELSEWHERE,
    WHAT_TO_DO_ELSEWHERE,
    WRITTEN_THINGS,
    alternation,
)

logger = logging.getLogger(__name__)

MEMORY = "memory"
MAYBE = "maybe"
TERSE_WORDS = 12  # a message this short asking for a value asks for one of theirs
MIN_CONTENT_WORDS = 2  # a sentence with fewer content words tells nothing

_WH = rule(
    r"\b(?:what|what's|which|who|who's|whose|where|where's|when|when's|how many|how old)\b",
    finds=("what's my dentist's name?", "where does my sister live?", "how many kids does tom have?"),
    misses=("why did my sister move?", "how much is a flight to lisbon?"),
)
_FIRST_PERSON = rule(
    rf"\b{alternation(FIRST_PERSON)}\b",
    finds=("when is my flight?", "where did we park?", "what did i call the cat?"),
    misses=("who won the match last night?", "what time does the bakery open?"),
)
# Another language's question of a thing of theirs: a word that asks, a possessive or "I told you", and no word
# asking what to do ("Wie viele Zimmer hat meine neue Wohnung?", "lo de los taxes, qué te dije?"; not "¿Dónde
# puedo renovar mi pasaporte?", "Cosa mi consigli di vedere?"). "ma" is Italian "but" and Polish "has" too.
_WH_ELSEWHERE = rule(
    rf"(?<![\w']){alternation(WH_ELSEWHERE)}(?![\w'])",
    finds=("¿dónde vive mi hermana?", "wie viele zimmer hat meine neue wohnung?", "lo de los taxes, qué te dije?"),
    misses=("¿cómo se llama mi perra?", "who is coming to dinner?"),
)
_OWNED_ELSEWHERE = rule(
    rf"(?<![\w']){alternation((*(w for w in OWNING_WORDS if w != 'ma'), *TOLD_YOU_ELSEWHERE))}(?![\w'])",
    finds=("¿dónde vive mi hermana?", "wie viele zimmer hat meine neue wohnung?", "lo de los taxes, qué te dije?"),
    misses=("ma dove sei?", "where's the nearest pharmacy?"),
)
_WHAT_TO_DO_ELSEWHERE = rule(
    rf"(?<![\w']){alternation(WHAT_TO_DO_ELSEWHERE)}",
    finds=("¿dónde puedo renovar mi pasaporte?", "cosa mi consigli di vedere a roma?"),
    misses=("¿dónde vive mi hermana?", "wie viele zimmer hat meine neue wohnung?"),
)


def _asks_elsewhere_of_theirs(question: str) -> bool:
    return bool(
        _WH_ELSEWHERE.search(question)
        and _OWNED_ELSEWHERE.search(question)
        and not _WHAT_TO_DO_ELSEWHERE.search(question)
    )


_POSSESSIVE = rule(
    rf"\b{alternation(POSSESSIVE)}\b",
    finds=("when is my flight?", "what's our wifi password?"),
    misses=("what's the wifi password?", "who is myra dating?"),
)
_THEIRS_ANYWHERE = rule(
    rf"(?<![\w']){alternation(OWNING_WORDS)}(?![\w'])",
    finds=("when is my flight?", "¿dónde vive mi hermana?", "wo ist meine brille?"),
    misses=("where's the nearest pharmacy?", "who is myra dating?"),
)
# The person, not as the one asked ("asked me for an explanation"): something of theirs or about them.
_THEIR_OWN = rule(
    rf"\b{alternation(tuple(word for word in FIRST_PERSON if word != 'me'))}\b",
    finds=("wants to know my date of birth", "asked me for our postcode"),
    misses=("asked me for an explanation",),
)
# "which antibiotic should I warn them about": asks for a thing of a kind, not what to do ("what should I cook").
_WH_THING = rule(
    r"\b(?:which|what|whose) (?!(?:should|shall|can|could|would|might|must|do|does|did|is|are|was|were|will|to|"
    r"about|if|else|i|you|we|they|he|she|it|a|an|the|kind|sort|type)\b)[a-z]+",
    finds=("which antibiotic should i warn them about?", "what town should i put as my address?"),
    misses=("what should i cook tonight?", "what kind of dog should we get?"),
)
# Someone asking for a value of theirs, told as a statement: "the broker wants to know who I haul for now",
# "pharmacy's asking for my date of birth".
_ASKED_FOR = rule(
    r"\b(?:wants? to know|needs? to know|(?:is|are|was|were|keeps?|kept) asking(?: me)?(?: for| about)?|"
    r"asked (?:me )?(?:for|about)|wants? (?:my|our)|needs? (?:my|our))\b",
    finds=(
        "the broker wants to know who i haul for now",
        "the pharmacy is asking for my date of birth",
        "the school needs my new address",
    ),
    misses=("i told the broker about my truck", "the dentist asked how i was"),
)
# Who wants the answer, before what they want: "the dentist wants to know", "the removal guy asked".
_ASKER = rule(
    r"^.*?\b(?:wants? to know|needs? to know|(?:is|are|was|keeps?) asking(?: me)?|asked(?: me)?|wants|needs)\b\s*",
    finds=("the dentist wants to know my date of birth", "the removal guy asked what floor we're on"),
    misses=("what's my dentist's name?", "when is my flight?"),
)
# Asking for a value of theirs without a question: "tell me the name i told you", "the groomer's form
# wants the dog's name", "can you add her name to the email". The value is theirs or known ("the", "her"),
# not one to be made up ("a name for my dog") or a manner of speaking ("at the same time"), and wanted
# ("no need for the full address" is not).
# A birthday they celebrate, not the date asked for: "a dog for her birthday", "a poem for Ethan's birthday card".
_NOT_AN_OCCASION = "".join(f"(?<!\\bfor {owner} birthday)" for owner in ("my", "our", "his", "her", "the", "their")) + (
    r"(?!(?<=birthday) (?:card|party|cake|present|gift|dinner|trip|surprise|do)\b)"
)
_OCCASION = rule(
    r"\bfor\b[^.?!]*\bbirthday\W*$",
    finds=("i need a gift for my wife's birthday", "write a card for ethan's birthday!"),
    misses=("when is my wife's birthday?", "i need a cake for my wife's birthday party"),
)


def _asks_for(pattern: re.Pattern, text: str) -> bool:
    """Whether `pattern` finds a value asked for in `text`, not a birthday they celebrate ("I need a gift for
    my wife's birthday", "write a card for Ethan's birthday")."""
    return any(not _OCCASION.search(found.group(0)) for found in pattern.finditer(text))


_TOLD_YOU = rule(
    r"\b(?:i(?:'ve)? (?:told|tell|gave|give|quoted|mentioned|said)(?: it| them)?(?: to)? (?:you|u)|"
    r"what (?:i|did i) (?:said|say|told|tell))\b",
    finds=("what was the code i gave you?", "the number i told you last week", "what did i say about the venue?"),
    misses=("i told him i'm allergic to nuts", "what did you say?"),
)
_VALUE_WANTED = rule(
    # what was done is told, not asked ("the school used to fill in the form with my old address")
    r"(?<!no )(?<!n't )(?<!\bhad to )(?<!\bused to )(?<!\balready )"
    r"\b(?:wants?|needs?|asks?|asking|asked|tell me|spell out|give me|remind me of|put|add|fill in|filling in)\b"
    r"[^.?!]{0,40}?\b(?:the|my|our|his|her|their|its|\w+'s)\s+"
    r"(?:(?!same|best|whole|wrong|next|last)\w+\s+){0,2}?"
    rf"{alternation(WANTED_NOUNS)}\b{_NOT_AN_OCCASION}",
    finds=(
        "the groomer's form wants the dog's name",
        "tell me the name i told you",
        "can you add her name to the email",
    ),
    misses=(
        "the school used to fill in the form with my old address",
        "no need for the full address",
        "i need a gift for my birthday",
    ),
)
# A value asked for in a few words, with no verb to ask it: "Dentist's surname needed for the claim.",
# "exam date now pls", "Span of the crossing?", "what day is that appointment now". "make" as a verb is no
# car's make ("make it 2 min max pls").
_VALUE_NOUN = (
    rf"(?:{alternation(VALUE_NOUNS)})s?\b(?<!\bmake)(?<!\bmakes)"
    r"|\bmake\b(?!\s+(?:it|me|us|them|this|that|sure|a|an|the|some|mistakes?)\b)"
)
_TERSE_VALUE = rule(
    rf"\b(?:{_VALUE_NOUN}).*(?:\?|\b(?:please|pls|plz|needed|confirm|again|now)\b)",
    finds=("dentist's surname needed for the claim.", "exam date now please", "span of the crossing?"),
    misses=("make it 2 min max please", "the submission date moved"),
)
# Without a sentence that asks, "now" and "again" tell ("submission is now 14 May", "four seasons in one day
# again"): a word that asks must, or "again" at the end after a value of theirs ("vet's number again").
_ASKING_WORD = rule(
    r"\b(?:please|pls|plz|needed|confirm)\b"
    rf"|\b(?:my|our|his|her|their|the|\w+'s)\s+(?:\w+\s+)?(?:{_VALUE_NOUN})[^.?!]*\bagain\W*$",
    finds=("vet's number again", "dentist's surname needed for the claim", "exam date please"),
    misses=("four seasons in one day again", "submission is now 14 may"),
)
# Asking to be reminded of something said: a question about memory, whatever else it asks.
_MEMORY_CUE = rule(
    # "remind me how ibid. works" is no cue (it asks how things work); nor is "I told him I'm allergic"
    rf"\b(?:remind me(?! how (?!old\b|many\b|much\b|long\b))(?!{TELLS_WHAT_TO_REMIND})|"
    r"remember|recall|did i (?:tell|say|mention)|"
    r"have i (?:told|said|mentioned)|i (?:told|said|mentioned)(?! (?:him|her|them|the|my|our|his|their)\b)|"
    r"i forgot(?! (?:all|everything|how)\b)|i forget|forgot what|blanking|"
    r"(?:do )?you know (?:(?:what|where|when|who|which|how many|how old|if|whether)\s+(?:\w+\s+){0,2}?)?"
    r"(?:my|i|i'm|i've|me|we|our))\b"
    # "whats his name again, my brain is full of boxes": asked again, inside a request or not
    r"|\b(?:what|what's|when|when's|where|where's|who|who's|which|whose)\b[^,.?!]{0,30}\bagain\b",
    finds=(
        "remind me what my wifi password is",
        "did i tell you my sister's name?",
        "what's his name again, my brain is full of boxes",
        "do you know where i parked?",
    ),
    misses=(
        "remind me how ibid. works",
        "i told him i'm allergic to nuts",
        "remind me that my dentist appointment is at 3",
    ),
)
# "I'm buying him kit for his birthday, remind me what position he plays": asked in passing, no question mark.
_REMIND = rule(
    rf"\b(?:remind me(?!{TELLS_WHAT_TO_REMIND})|tell me again)(?: of| about)? "
    r"(?:(?:what|where|when|who|which|whose|how many|how much|how old)\b|"
    r"(?:the|my|our|his|her|their)\b)",
    finds=("remind me what position he plays", "tell me again when the party is", "remind me of the vet's address"),
    misses=("remind me to call mum", "remind me my car is due for a service"),
)
_YOU_REMEMBER = rule(
    r"\byou (?:still )?(?:remember|recall)\b.*\b(?:my|our|i|we)\b",
    finds=("let's see if you remember my wife's name", "do you still recall where we met?"),
    misses=("do you remember the name of that film?",),
)
_AGAIN = rule(
    r"\bagain\b\W*$",
    finds=("what's his name again?", "when's the recital again?"),
    misses=("can we go again next year?",),
)  # "what's his name again?": a memory question, unless it asks advice
# Asking for advice, an opinion, knowledge of the world or something made up: small talk for the model,
# even when it is about the person ("is it too late to learn at my age?").
_REQUEST = rule(
    r"\b(?:should|shall|ought to)\b|\b(?:could|can|would|might|must) (?:i|we)\b|"
    r"\bhow (?:do|can|could|would|might) (?:i|we|you)\b|\b(?:i|we) (?:can|could|might|would)\b(?!'t)|"
    r"\bhow (?:long|much|many|often) (?:should|can|could) (?:i|we)\b|"
    r"\b(?:recommend|recommendations?|suggest|suggestions?|advice|advise|tips?|ideas?|ideias|help me|opinion|"
    r"(?:do|did) you (?:\w+ )?(?:think|reckon)|you reckon|what would you|would you|could you|"
    r"can you (?!remind|tell me what|"
    r"tell me where|tell me when|tell me who|tell me how many)|your (?:take|view|opinion|thoughts)|"
    r"what do you make of|is (?:it|a|an) (?:\w+ ){0,2}?(?:worth|ok|okay|good|bad|normal|safe|true|too|better|possible)|"
    r"is there|are there|do you know (?:any|a|an|how|why|if there)|"
    r"tell me (?:a|an|something|some|about|more|why|how)|joke|pun|story|poem|fun fact|explain|translate|"
    r"write|difference between|what does \w+(?: \w+)? mean|would go|goes (?:well )?with|"
    r"what (?:do|can) (?:i|you|we) (?:\w+ )?(?:do(?! for (?:a living|work))|say|tell|make|cook|get|buy|wear|bring)|"
    r"what(?:'s| is) (?:(?:a|an|the) )?(?:good|best|easy|quick|nice|fun)|good way to|best way to|"
    # what to do, how to do it: advice ("what to eat night before", "how to calculate the margin")
    r"(?:what|how|which|where|when) to|"
    r"what (?:must|do|should) (?:i|we) (?:\w+ )?(?:look|need|bring|pack|wear|eat|ask|check)|"
    r"how(?:'d| did| do) (?:i|we) do|quiz me|is it (?:\w+ )?(?:polite|rude|normal|usual|common)|"
    r"what (?:questions|is usual|is a fair|is fair)|checklist|template|plantilla|"
    # advice, knowledge or something made, asked with words of theirs on the way ("whats a cheap dinner for
    # one, i have rice", "which documents I must bring", "is that right? I grow my own silverbeet")
    r"give me (?:a|an|some)|recipes?|how (?:do )?(?:i|we|you) say|(?:do|does) one|what one|diff between|"
    r"is (?:that|this) (?:\w+ )?(?:right|correct|allowed|legal|weird|strange|enough|fine)|"
    r"is it (?:\w+ )?(?:allowed|legal|weird|strange|enough|fine)|"
    r"is (?:ok|okay|fine) (?:if|to)|maybe (?:a|an|some)|^any|"
    r"(?:is|are) (?:good|bad|usual|normal|typical|common) for|(?:is|are) (?:usual|normal|typical)|"
    r"what(?:'s| is| are) (?:a|an|some) (?:cheap|common|sensible|kindest|usual|typical|safest|cheapest)|"
    r"what(?:'s| is| are) the (?:cheapest|safest|kindest|most common|common)|"
    r"who(?:'s| is) (?:the )?(?:best(?! man\b)|right)|(?:must|need to|have to) bring|"
    r"how long (?:from|by|does it take)|exist|"
    r"(?:good|nice|great|bad) (?:idea|present|gift|choice)|"
    # a sum asked roughly, not "roughly when did I start my job?"
    r"(?:approximately|approx|roughly)\b(?![^?]*\b(?:my|our)\b)|"
    # advice asked in a learner's English: "How I cut 750 grams for 6?", "What I do?"
    r"how (?:i|we) (?!told|said|mentioned|met)\w+|what (?:i|we) do(?! for (?:a living|work)))\b"
    # what one needs, asked ("what all do I need", "do I need a passport"); "how many place cards do I need"
    # may be theirs to count
    r"|\b(?:what|which)\b[^?.,]{0,30}\b(?:do|does)\b[^?.,]{0,25}\bneed\b|^(?:do|does) (?:i|we) (?:\w+ )?need\b",
    finds=(
        "should i take antihistamines?",
        "what's a good gift for my wife?",
        "can you recommend a restaurant?",
        "how do i say thank you in polish?",
    ),
    misses=("what's my dentist's name?", "when is my flight?", "can you remind me of my flight time?"),
)
# A request to write something (a note, an email, a card, a form's field) that needs something of theirs: "write
# a text to my manager, use her name", "fill in the vehicle field", "a card for my wife", "the usual pharmacy".
_WRITING = rule(
    rf"\b{alternation(WRITTEN_THINGS)}s?\b",
    finds=("write a text to my manager", "fill in the vehicle field", "a card for my wife"),
    misses=("i got a haircut today",),
)
# Asked for, not told of ("I got a text from my mum" tells): a verb that asks for it, a polite request, or
# the thing named first, as a list or a note to oneself does ("- gift tag for the kid's present").
_WANTS_WRITTEN = rule(
    # what was done is told, not asked ("we had to update the field with our postcode")
    r"(?<!\bhad to )(?<!\bused to )(?<!\balready )"
    r"\b(?:write|draft|compose|put together|make|do|fill|update|set|type|word|whip up|need|want|could you|"
    r"can you|would you|will you|please|pls|plz|trouble you|go|say|(?:should|would|'d) like)\b"
    r"|^\W*(?:(?:also|and|plus|then|now|ok|oh)\s+)?(?:(?:an?|the|my|quick|short|brief|cute|little|new)\s+)*"
    rf"(?:[a-z'-]+\s+)?{alternation(WRITTEN_THINGS)}",
    finds=("can you write a card for my wife", "- gift tag for the kid's present", "draft an email to my landlord"),
    misses=("i got a text from my mum",),
)
# What it needs of theirs, asked for and not given: a value of theirs to put in ("use her name", "put the
# dog's name in", "with our postcode", "fill in the date", "address it to him by name"), a form's field to
# fill ("vehicle registration field. fill it."), or a place of theirs known by habit ("the usual pharmacy").
_THEIRS = rule(
    r"\b(?:use|put|add|include|mention|with|fill(?: in| out)?|give|start(?: it)? with|sign(?: it)?(?: with)?|"
    r"say|write|remind(?: \w+)? of)\b[^.?!]{0,30}?\b(?:his|her|their|its|my|our|the|\w+'s)\s+(?:[\w-]+\s+){0,2}?"
    rf"{alternation(VALUE_NOUNS)}s?\b{_NOT_AN_OCCASION}"
    r"|\bby (?:his |her |their )?(?:full )?name\b|\b(?:the|our|my) usual\b"
    r"|\b(?:field|box)\b[^?!]{0,40}\b(?:fill|complete|update)\b|\b(?:fill|complete|update)\b[^.?!]{0,40}\b(?:field|box)\b"
    # what of theirs it should say, asked by a clause: "mention the restaurant where we shall be celebrating",
    # "say where i work rn", "say which date it is", "charge it to my truck number", "write out what i should put in it"
    r"|\b(?:mention|mentioning|say|saying|include|including|with)\b[^.?!]{0,30}?"
    r"\b(?:(?:where|when) (?:i|we|my|our)|(?:which|what) (?:date|day|time))\b"
    r"|\bcharge(?: it)? to (?:my|our)\b|\bwhat (?:i|we) should (?:put|write|say)\b"
    r"|\baddress (?:him|her|them) (?:properly|by name)\b"
    # a list of what it holds: "a label for the cake box: the couple's names and the wedding date"
    rf"|:\s*(?:the|my|our|his|her|\w+'s)\s+(?:[\w-]+\s+){{0,2}}?{alternation(VALUE_NOUNS)}s?\b",
    finds=(
        "write a text to my manager, use her name",
        "put the dog's name in",
        "address it to him by name",
        "send it to the usual pharmacy",
    ),
    misses=("write a poem for ethan's birthday card", "write a name for my dog"),
)

# Asking about the assistant, not the person: "How is your day going?", "what did you do today?".
_ABOUT_YOU = rule(
    r"\b(?:what|what's|how|how's|where|where's|when|who|which)\b(?:\s+\w+){0,2}?\s+(?:you|your|you're|yours)\b"
    # "what did you say the wifi password was?" asks what the person said
    r"(?!\s+(?:say|said|tell|told|mention|mentioned|remember|recall)\b)",
    finds=("how is your day going?", "what did you do today?", "where are you from?"),
    misses=("what did you say the wifi password was?",),
)
_OWN_NAME = rule(
    r"\bmy name\b|\bwho am i\b|\bam i called\b|\bcall me\b|\bmy full name\b",
    finds=("what's my name?", "who am i?", "just call me jo"),
    misses=("what's my nickname?", "what's my dog's name?"),
)
_NOW = rule(
    rf"\b{alternation(NOW_WORDS)}\b",
    finds=("where does she work now?", "is he still at the bakery?", "what's the latest on the house sale?"),
    misses=("where did she work before?", "do you know my address?"),
)


def _asking_clauses(question: str) -> list[str]:
    """The clauses of a sentence that asks which do the asking: "who's the friend that ran the marathon, I
    want to ask her for tips" asks who, and wants tips in a clause that asks nothing. The whole sentence
    when no clause alone asks."""
    clauses = [clause.strip() for clause in question.split(",")]
    asking = [clause for clause in clauses if asks(clause)]
    return asking or [question]


# A value given as it is asked for, in a clause that tells: "the school nurse wants his inhaler name, its
# Ventolin", "my head nurse is Ma'am Corazon Dizon, can u put her name at the top", "hes called Darnell". Read
# in the message as typed: a name is capitalised.
_VALUE = r"(?:[A-ZÀ-Þ][\w'’-]+|\d)"
_GIVEN = rule(
    # the value noun's value: "his inhaler name, its Ventolin", "my farm name is Sítio Boa Esperança"
    rf"\b(?:{alternation(VALUE_NOUNS)})s?\b[,:]?\s+(?:is|it'?s|its|it’s|=)\s+{_VALUE}"
    # someone named: "hes called Darnell", "my head nurse is Ma'am Corazon Dizon"
    rf"|\b(?:called|named)\s+[A-ZÀ-Þ]|\bis\s+(?:Ma'am|Mr|Mrs|Ms|Dr|Sir|Madam)\.?\s+[A-ZÀ-Þ]",
    finds=(
        "the school nurse wants his inhaler name, its Ventolin",
        "hes called Darnell",
        "my head nurse is Ma'am Corazon Dizon",
        "my farm name is Sítio Boa Esperança",
    ),
    misses=("hes called darnell", "my farm name is lovely"),
)
# A number given bare, in a sentence that asks for nothing: "she needs my adress. write a text. its 1820 College Rd"
# (not "it's 9am and the pharmacy wants my nhs number").
_GIVEN_BARE = rule(
    r"(?:^|[,.]\s*)(?i:it'?s|its|it’s)\s+\d",
    finds=(
        "she needs my adress. write a text. its 1820 College Rd",
        "its 4 pm",
        "ok, it's 0412 555 019",
        "Its 1820 College Rd",
    ),
    misses=("the lease says its 12 months", "the party is at 7, its a surprise"),
)


def _gives_a_value(message: str) -> bool:
    told = (sentence for sentence in split_sentences(message) if not questions(sentence))
    return any(
        not _WH.search(sentence.lower())
        and bool(
            _GIVEN.search(sentence) or (_GIVEN_BARE.search(sentence) and not _VALUE_WANTED.search(sentence.lower()))
        )
        for sentence in told
    )


@dataclass(frozen=True)
class Reading:
    """What the rules read of a message: its plain text (language.plain), its sentences that ask, of those
    the ones that ask for advice or a favour, and whether a clause that tells gives a value (a name, a number)."""

    text: str
    asked: tuple[str, ...]
    requests: tuple[str, ...]
    gives_value: bool = False

    @classmethod
    def of(cls, message: str) -> "Reading":
        text = plain(message)
        asked = tuple(questions(text))
        requests = tuple(q for q in asked if any(map(_REQUEST.search, _asking_clauses(q))))
        # a request in the imperative beside a question about no thing of theirs: "She asked what 永 means. Please
        # explain simply."; not "when is my flight? add it to my calendar"
        if not any(_THEIRS_ANYWHERE.search(q) for q in asked):
            requests += tuple(s for s in split_sentences(text) if s not in asked and opens_as_imperative(s))
        return cls(text, asked, requests, _gives_a_value(message))


def _reminded_without_asking(r: Reading) -> bool:
    # "let's see if you remember my wife's name": asked without a question
    reminded = r.text.startswith(("tell me what", "tell me where", "tell me when")) or _REMIND.search(r.text)
    return bool(reminded or _YOU_REMEMBER.search(r.text))


# Before what someone asks for: the person asking it themselves ("i want to know how long to boil lobsters").
_ENDS_WITH_I = rule(
    r"\bi\s*$",
    finds=("i ", "so i ", "honestly i"),
    misses=("the dentist ", "the vet said hi"),
)
# After what someone asks for: a reason or a doubt, not a value of theirs ("asked me why the rent went up").
_WHY_OR_WHETHER = rule(
    r"\s*(?:why|whether|if|how come)\b",
    finds=(" why the rent went up", " whether we'll be home", " if i'm free on friday"),
    misses=(" for my date of birth", " about our postcode"),
)


def _asked_for_by_someone(r: Reading) -> bool:
    # "a member has asked me for an explanation" asks nothing of theirs; "i want to know how long to boil
    # lobsters" is their own question
    asked_for = _ASKED_FOR.search(r.text)
    return bool(
        asked_for
        and _THEIR_OWN.search(r.text[asked_for.start() :])
        and not _ENDS_WITH_I.search(r.text[: asked_for.start()])
        and not _WHY_OR_WHETHER.match(r.text[asked_for.end() :])
    )


def _asks_about_the_assistant(r: Reading) -> bool:
    return all(_ABOUT_YOU.search(q) and not _FIRST_PERSON.search(q) for q in r.asked) if r.asked else False


_NOT_WANTED = rule(
    r"\b(?:no need|don't (?:need|put|include|add)|without (?:the|my|our))\b",
    finds=("no need for the full address", "don't put my surname on it", "write it without my middle name"),
    misses=("i don't know her address",),
)


def _writes_with_something_of_theirs(r: Reading) -> bool:
    return bool(
        _WRITING.search(r.text)
        and _WANTS_WRITTEN.search(r.text)
        and _asks_for(_THEIRS, r.text)
        and not _NOT_WANTED.search(r.text)
    )


def _requests_a_value_of_theirs(r: Reading) -> bool:
    # "what town should I put as my address on this form?": a request, but for a value of theirs that a
    # statement may hold; "should I take antihistamines?" asks for advice, which no statement answers.
    return any(
        (_POSSESSIVE.search(q) and _WH.search(q)) or (_FIRST_PERSON.search(q) and _WH_THING.search(q))
        for q in r.requests
    )


ABOUT_THE_ASSISTANT = "asks about the assistant"
ASKS_ADVICE = "asks for advice, an opinion or a favour"
ADVICE_ABOUT_THEIRS = "asks advice about a value of theirs"
UNREAD = "asks in words the rules do not read"
# Another language's question of a thing of theirs, read as UNREAD is, that "you haven't told me" answers when no
# statement does (engine/recall.py).
ELSEWHERE_OF_THEIRS = "asks in another language about a thing of theirs"
WORKS_OUT = "asks to work out numbers it gives"
# An English yes/no question asks for advice or knowledge ("will it hurt the garlic?", "also random - is gum good
# for teeth?"), and a tag asks to be agreed with ("bacalhau is safe right?"): neither asks for a value told.
_YES_NO = rule(
    rf"^(?:{alternation(FILLERS)}[\s,:\-]+)*"
    r"(?:is|are|am|was|were|will|would|can|could|should|shall|do|does|did|have|has|had|est-ce que)\b"
    r"|\b(?:right|yeah|yes|no|ok|okay|eh|correct)\s*\?",
    finds=(
        "is gum good for teeth?",
        "also random - is gum good for teeth?",
        "bacalhau is safe right?",
        "will it hurt the garlic?",
    ),
    misses=("what time is the dentist?", "when is my flight?"),
)


# Asked of numbers the message gives: "Expense: 3 dinners 48, 61, 39 EUR. Total?", "each 4.50 euro. How many I must
# sell to cover 180 euro?"; not "how many kids are coming on the 12th at 3pm?" (a date and a time are no such numbers).
_WORK_OUT = rule(
    r"\b(?:how many|how much|how long|total|cost|price|sum|average|margin|profit|normal)\b",
    finds=("expense: 3 dinners 48, 61, 39 eur. total?", "how many i must sell to cover 180 euro?"),
    misses=("when is the party?", "how old is she?"),
)
_A_NUMBER = rule(
    r"\d+(?:[.,]\d+)*",
    finds=("3 dinners 48, 61, 39 eur", "each 4.50 euro"),
    misses=("how many kids are coming?",),
)
WORKED_NUMBERS = 2


def _works_out_numbers(r: Reading) -> bool:
    return any(_WORK_OUT.search(q) for q in r.asked) and len(_A_NUMBER.findall(not_a_time(r.text))) >= WORKED_NUMBERS


_A_DIGIT = rule(
    r"\d",
    finds=("rego for the 2015 corolla?", "is it 3 or 4?"),
    misses=("rego?", "¿cómo se llama mi perra?"),
)


def _asks_for_a_value_unread(r: Reading) -> bool:
    # "rego?", "¿Cómo se llama mi perra?", "Mình làm bao nhiêu hours a week nhỉ?": a question in words or a
    # language the rules above do not read, which the memory's own match may answer (MAYBE); not a yes/no
    # question, nor one that gives numbers to work with ("Nikiuza 3,500, ni profit margin gani?")
    return not r.gives_value and not _A_DIGIT.search(r.text) and not any(_YES_NO.search(q) for q in r.asked)


@dataclass(frozen=True)
class Rule:
    """A rule of RULES: when `applies` to a message's reading, the message asks `kind`. `by_words`: it reads a
    value asked for by its words ("use her name", "the form wants the dog's name"), not by a question's form, or
    a cue to remember ("did I tell you"); the learnt reader (engine/asking.py) does not overrule it."""

    name: str
    kind: str | None
    applies: Callable[[Reading], bool]
    by_words: bool = False


# In order: the first rule that applies decides. A rule further down may assume the ones above did not
# apply (a question that asks advice is past "a cue to remember" only when no cue is in it).
RULES = (
    Rule(
        "asks for what they told or a value of theirs",
        MEMORY,
        lambda r: bool(_TOLD_YOU.search(r.text) or (_asks_for(_VALUE_WANTED, r.text) and not r.gives_value)),
        by_words=True,
    ),
    Rule(WORKS_OUT, None, lambda r: _works_out_numbers(r) and not _MEMORY_CUE.search(r.text)),
    Rule(
        "asks for a value in a few words",
        MEMORY,
        lambda r: (
            len(r.text.split()) <= TERSE_WORDS
            and bool(_TERSE_VALUE.search(r.text))
            and bool(r.asked or _ASKING_WORD.search(r.text))
            and not any(map(_REQUEST.search, r.asked))
            and not _asks_about_the_assistant(r)
        ),
        by_words=True,
    ),
    Rule(
        "asks to be reminded without a question",
        MEMORY,
        lambda r: not r.asked and _reminded_without_asking(r),
        by_words=True,
    ),
    Rule(
        "says someone asks for a value of theirs",
        MEMORY,
        lambda r: not r.asked and not r.gives_value and _asked_for_by_someone(r),
        by_words=True,
    ),
    Rule(
        "asks to write something with something of theirs",
        MEMORY,
        lambda r: not r.gives_value and _writes_with_something_of_theirs(r),
        by_words=True,
    ),
    Rule("asks nothing", None, lambda r: not r.asked),
    Rule(
        "a cue to remember",
        MEMORY,
        lambda r: any(_MEMORY_CUE.search(q) for q in r.asked) or bool(_MEMORY_CUE.search(r.text) and not r.requests),
        by_words=True,
    ),
    Rule(ABOUT_THE_ASSISTANT, None, _asks_about_the_assistant),
    Rule(ADVICE_ABOUT_THEIRS, MAYBE, _requests_a_value_of_theirs),
    Rule(ASKS_ADVICE, None, lambda r: bool(r.requests)),
    Rule("asks again", MEMORY, lambda r: any(_AGAIN.search(q) for q in r.asked)),
    Rule("asks about themselves", MEMORY, lambda r: any(_FIRST_PERSON.search(q) for q in r.asked)),
    Rule(ELSEWHERE_OF_THEIRS, MAYBE, lambda r: any(_asks_elsewhere_of_theirs(q) for q in r.asked)),
    Rule("asks what, who, where or when", MAYBE, lambda r: any(_WH.search(q) for q in r.asked)),
    Rule(UNREAD, MAYBE, _asks_for_a_value_unread),
    Rule("asks something else", None, lambda r: True),
)


# The names of the rules the learnt reader does not overrule (Rule.by_words).
VALUE_RULES = frozenset(rule.name for rule in RULES if rule.by_words)


def decide(message: str) -> Rule:
    """The rule of RULES that decides what `message` asks."""
    return _first_rule(Reading.of(message))


def _first_rule(reading: Reading) -> Rule:
    return next(rule for rule in RULES if rule.applies(reading))


def question_kind(message: str) -> str | None:
    """What `message` asks: MEMORY, MAYBE or None (see the module's description)."""
    return decide(message).kind


def asks_about_memory(message: str) -> bool:
    """Whether `message` asks about something the person said or is (question_kind is MEMORY)."""
    return question_kind(message) == MEMORY


def asked_part(message: str) -> str:
    """The part of `message` that asks: its sentences that ask, without who is asking ("the insurance guy
    wants to know the make of my car, what was it again" -> "the make of my car, what was it again");
    the whole message when no sentence asks."""
    asked = questions(message) or [plain(message)]
    return " ".join(_ASKER.sub("", sentence, count=1) or sentence for sentence in asked)


def only_asks_memory(message: str) -> bool:
    """Whether "you haven't told me" is the right reply when nothing the person said answers `message`:
    it asks to be reminded or for a value of theirs, or it asks what, when, who... and tells nothing else.
    A message that tells things and asks in passing, or asks for a yes or no ("we're all wearing sage
    green, so maybe a green theme?"), is the model's to answer."""
    text = plain(message)
    if _MEMORY_CUE.search(text) or _TOLD_YOU.search(text) or _asks_for(_VALUE_WANTED, text):
        return True
    asked = questions(text)
    if any(_POSSESSIVE.search(q) and _WH.search(q) for q in asked):
        return True
    if not any(_WH.search(q) for q in asked):
        return False  # a yes or no, or a suggestion: "maybe a green theme?"
    return not any(
        len(set(content_tokens(s))) >= MIN_CONTENT_WORDS for s in split_sentences(message) if is_statement(s)
    )


# --- What kind of answer a question wants ---------------------------------------------------------

WANTS_WHEN = rule(
    r"\b(?:when|what date|which date|what day|which day|what time|what month|what year|how long ago)\b",
    finds=("when is my flight?", "what time is the dentist?", "how long ago did we move?"),
    misses=("how long is the flight?",),
)
WANTS_NUMBER = rule(
    r"\b(?:how many|how much|how old|what age|how long|how far|how often|what number|what mark|what grade|"
    r"what score|what price)\b",
    finds=("how many kids does tom have?", "how old is my nephew?", "what grade did ella get?"),
    misses=("how is your mum?",),
)
WANTS_NAME = rule(
    r"\b(?:who|whom|whose|name|names|call|called|named)\b",
    finds=("who is coming to dinner?", "what's my dog's name?", "what did we call the boat?"),
    misses=("where is the party?", "what's his nickname?"),
)
# A place, a make, a team: a proper name, but not one given to something of theirs ("my wife, Eileen").
WANTS_PROPER = rule(
    r"\b(?:where|(?:what|which) (?:\w+ )?(?:city|town|country|place|"
    r"team|street|school|company|firm|brand|make|shop|store|restaurant|hospital|clinic|club|band|airline|"
    r"airport|uni|university|college|neighbourhood|neighborhood|area|suburb|village|gym|pub|bar|cafe|"
    r"church|hotel|venue|breed|model))\b",
    finds=(
        "where does my sister live?",
        "what make is my car?",
        "which gym do i go to?",
        "what football team does he support?",
    ),
    misses=("what's my wife's name?", "what time is the match?"),
)
WHEN, NUMBER, NAME, PROPER = "when", "number", "name", "proper"
YEAR, AGE = "year", "age"  # asked in so many words (asked_strictly): "what year...", "how old..."
PHONE, CLOCK = "phone", "clock"  # "what's the vet's phone number", "what time is the library sesh"
# A date or a count asked for in so many words, in the part that asks ("when is...", "what day...", "how much...";
# not "what did he say when I hurried him"): only a statement that holds one answers (engine/recall.py).
_ASKS_A_DATE = rule(
    r"(?:^|[,;:]\s*|\b(?:and|so|remind me|again)\s+)when\b|\b(?:what|which) (?:date|day|time|month|year)\b",
    finds=("when is my flight?", "remind me when the party is", "what day is the recital?"),
    misses=("what did he say when i hurried him?",),
)
_ASKS_A_YEAR = rule(
    r"\b(?:what|which) year\b",
    finds=("what year did we move?", "which year was the wedding?"),
    misses=("how many years ago did we move?",),
)
_ASKS_A_COUNT = rule(
    r"\b(?:how many|how much|what number|what price)\b",
    finds=("how many kids does tom have?", "how much is my rent?", "what price did we pay?"),
    misses=("how long is the flight?",),
)
_ASKS_AN_AGE = rule(
    rf"(?<!\w)(?:how old|what age|{alternation(HOW_OLD)})\b",
    finds=("how old is my nephew?", "what age is ella now?", "¿cuántos años tiene mi hija?"),
    misses=("how long have we lived here?",),
)
_ASKS_A_PHONE = rule(
    rf"(?<!\w){alternation(PHONE_ASKED)}(?!\w)",
    finds=("what's the vet's phone number?", "what's my mum's landline?", "¿cuál es el teléfono del dentista?"),
    misses=("what's the vet's address?", "what number is the house?"),
)
_ASKS_A_CLOCK = rule(
    rf"(?<!\w){alternation(CLOCK_ASKED)}(?!\w)",
    finds=("what time is the library sesh?", "a que hora abre la farmacia?", "wie laat komt de loodgieter?"),
    misses=("what day is the recital?", "what times do the buses run?"),
)


def asked_strictly(asked: str) -> str | None:
    """PHONE, CLOCK, YEAR, WHEN, AGE or NUMBER when `asked` (a message's part that asks: asked_part) asks for a
    phone number, a time of day, a year, a date, an age or a count in so many words; else None."""
    lowered = plain(asked)
    if _ASKS_A_PHONE.search(lowered):
        return PHONE
    if _ASKS_A_CLOCK.search(lowered):
        return CLOCK
    if _ASKS_A_YEAR.search(lowered):
        return YEAR
    if _ASKS_A_DATE.search(lowered):
        return WHEN
    if _ASKS_AN_AGE.search(lowered):
        return AGE
    return NUMBER if _ASKS_A_COUNT.search(lowered) else None


_ANSWER_KINDS = ((WANTS_WHEN, WHEN), (WANTS_NUMBER, NUMBER), (WANTS_NAME, NAME), (WANTS_PROPER, PROPER))


def answer_kind(question: str) -> str | None:
    """WHEN, NUMBER, NAME (of a person or a pet) or PROPER (a place, a make, a team) when the question asks
    for one (the first of them its words ask); else None."""
    text = question.lower()
    return next((kind for pattern, kind in _ANSWER_KINDS if pattern.search(text)), None)


# --- The intent -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Intent:
    """A message read once: what it asks (`kind`, decided by the rule named `rule`), the part that asks,
    the kind of answer it wants, whether it asks how things are now or the person's own name, what it asks
    of whom (language/asked.py; None when not read there), whether "you haven't told me" answers it when
    nothing does, and whether some sentence asks without asking advice or a favour."""

    message: str
    kind: str | None
    rule: str
    asked_part: str
    answer_kind: str | None
    asks_now: bool
    asks_own_name: bool
    wanted: Asked | None
    only_asks_memory: bool
    asks_plainly: bool

    @property
    def asks_the_model(self) -> bool:
        """Whether it asks advice, an opinion or a favour (about a value of theirs too), to work out numbers it
        gives, or about the assistant: answered from memory only by a statement that answers it well (MAYBE),
        or by the model, even when it names someone the person told about ("Julien is worried about the
        winter, what clothes do we really need?")."""
        return self.rule in (ASKS_ADVICE, ADVICE_ABOUT_THEIRS, ABOUT_THE_ASSISTANT, WORKS_OUT)

    @property
    def asks_a_value(self) -> bool:
        """Whether a rule of VALUE_RULES read it: a value of theirs asked for by its words."""
        return self.rule in VALUE_RULES

    def with_kind(self, kind: str | None, rule: str) -> "Intent":
        """The intent, decided otherwise by what the memory holds (recall: a question naming someone the
        person told about)."""
        logger.debug("intent of %r: %s (%s)", self.message[:80], kind, rule)
        return Intent(**{**self.__dict__, "kind": kind, "rule": rule})


def read(message: str) -> Intent:
    """The intent of `message`."""
    reading = Reading.of(message)
    rule = _first_rule(reading)
    logger.debug("intent of %r: %s (%s)", message[:80], rule.kind, rule.name)
    return Intent(
        message=message,
        kind=rule.kind,
        rule=rule.name,
        asked_part=asked_part(message),
        answer_kind=answer_kind(message),
        asks_now=bool(_NOW.search(reading.text)),
        asks_own_name=bool(_OWN_NAME.search(reading.text)),
        wanted=asked_of(message),
        only_asks_memory=only_asks_memory(message),
        asks_plainly=any(not _REQUEST.search(question) for question in reading.asked),
    )
