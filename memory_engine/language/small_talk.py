"""What is said around the facts: greetings, thanks and goodbyes, a sentence of the person's worth saying back,
asking for help, speaking of oneself or to the other side, and a model's output that reads like an error. The
plain voice (engine/plain_voice.py) answers small talk with these; promotion (engine/long_term.py) keeps out of
memory what is said to the other side, about what came before, or an error a model gave as a value.
"""

import re

from memory_engine.language.rules import rule

__all__ = [
    "ASKING",
    "ERROR_LIKE",
    "FIRST_PERSON_SINGULAR",
    "GOODBYE",
    "GREETING",
    "OPENS_ON_BEFORE",
    "SAID_BACK",
    "THANKS",
    "TO_THE_OTHER",
]


# --- The plain voice's small talk (read on `reading.plain` text) ------------------------------------------

# Matched at the start of the message's first sentence.
GREETING = rule(
    r"^(?:hi|hello|hey|hiya|good (?:morning|afternoon|evening)|morning|evening|yo|howdy)\b",
    finds=("hi", "good morning!", "hey there, how are you?"),
    misses=("high school reunion is on friday", "yoga was great today"),
)
THANKS = rule(
    r"\b(?:thanks|thank you|thx|ty|cheers|much appreciated|grazie|merci|danke|gracias|obrigad[oa])\b",
    finds=("thanks!", "ok thank you so much", "ty, that helps", "merci beaucoup"),
    misses=("thanksgiving is at my mum's this year",),
)
GOODBYE = rule(
    r"\b(?:bye|goodbye|good night|goodnight|see you|talk later|ttyl|ciao|tschüss|adiós)\b",
    finds=("bye!", "ok good night", "see you tomorrow"),
    misses=("goodbyes are hard for my son", "i can't see your reply"),
)

# What is said back: a sentence of the person's about themselves ("I ...", "my ..."), asking nothing; anything
# else is only noted ("don't let me forget the EpiPen" is no "don't let you forget ...", and a request in
# another language is no statement of theirs).
SAID_BACK = rule(
    r"^(?:i|i'm|i've|i'd|i'll|my|we|we're|we've|our)\b",
    finds=("i'm a nurse in leeds", "my beagle is called biscuit", "we've moved to porto"),
    misses=("don't let me forget the epipen", "myra starts school in september"),
)
ASKING = rule(
    r"\b(?:please|help|can you|could you|would you|need you|want you|let me|remind)\b",
    finds=("please note my flight is at 9", "i need you to remind me about the dentist", "could you keep my code"),
    misses=("my beagle is called biscuit", "the helpline number is 0800 123 456"),
)


# --- What promotion keeps out of memory -----------------------------------------------------------------

# A value a model returned that is its error or its refusal, not something said (matched as written).
ERROR_LIKE = rule(
    r"^\s*(error|exception|traceback|i'm sorry|i cannot|as an ai)\b",
    re.IGNORECASE,
    finds=(
        "Error: the model returned no JSON",
        "I'm sorry, I can't find that in the conversation.",
        "As an AI, I have no personal details.",
    ),
    misses=("Errors in her tax return cost her 200 euros", "Her sister is called Ann"),
)
# A profile value in the first person is a sentence someone said ("I live in Porto."), not a value ("Porto").
FIRST_PERSON_SINGULAR = rule(
    r"\b(?:i|i'm|i've|i'd|i'll|me|myself)\b",
    re.I,
    finds=("I live in Porto.", "I'm a nurse", "Milo, my cat, and me"),
    misses=("Porto", "a cat called Miso", "an iPad Mini"),
)
# Said to the other side: about them, or about what they said ("the suggestions", "those websites you mentioned").
TO_THE_OTHER = rule(
    r"\b(?:you|your|yours|you're|you've|you'll|you'd|u|ur|thanks|thank)\b",
    finds=(
        "your encouragement gives me strength",
        "i'll check out those websites you mentioned",
        "thanks, that really helped",
    ),
    misses=("my daughter's name is ines", "youth club starts at 6 on tuesdays", "our dog is called biscuit"),
)
# What a sentence is about, named before it: "It inspires me ...", "That was so much fun", "They take me to new worlds".
OPENS_ON_BEFORE = rule(
    r"^(?:(?:yeah|yes|oh|well|and|but|so|plus|also|wow|haha|lol|honestly)\W+)*"
    r"(?:it|it's|its|this|that|that's|these|those|they|they're|they've|there)\b",
    finds=("it inspires me to keep making art, too.", "that was so much fun", "oh well, they take me to new worlds"),
    misses=("i started pottery in march", "italy was amazing last summer", "therapy starts on monday"),
)
