"""What a model's reply looks like: a JSON body in a fence, an error message in place of an answer, where its
sentences end, and the ways a small model's chat reply goes wrong (a loop, a chat role marker, a speaker's
label, a name no one said, the person's name claimed or described). Used by the LLM boundary: llm/base.py
reads answers and sentences, llm/degeneration.py guards a reply while it is written.
"""

import re
from collections.abc import Iterable
from functools import lru_cache

from memory_engine.language.rules import rule
from memory_engine.language.word_lists import NAMING_ONESELF, alternation

__all__ = [
    "ANNOUNCES_LIST",
    "CONDOLENCES",
    "ENDS_AT_LINE_START",
    "ERROR_TEXT",
    "FENCED_JSON",
    "FICTION",
    "HEADING",
    "INNER_NAME",
    "LOSS",
    "MAX_UNIT_REPEATS",
    "NEXT_SENTENCE",
    "PUNCTUATION",
    "ROLE_MARKERS",
    "SENTENCE_END",
    "SPEAKER_LABEL",
    "TOLD_CLAIM",
    "UNIT_LOOP",
    "WORD",
    "name_claim",
    "name_description",
    "opens_with_name",
]

# A JSON answer may come wrapped in a Markdown fence; that, and surrounding whitespace, is the only
# packaging we strip. Anything else around the JSON (prose, a second object) makes it invalid.
FENCED_JSON = rule(
    r"\A\s*```(?:json)?[ \t]*\n?(?P<body>.*?)\n?[ \t]*```\s*\Z",
    re.DOTALL | re.IGNORECASE,
    finds=('```json\n{"facts": []}\n```', '```\n{"intent": "chat"}\n```\n', '  ```JSON {"ok": true}```'),
    misses=('{"facts": []}', 'Here you go:\n```json\n{"facts": []}\n```'),
)

# What an answer looks like when a provider or wrapper put an error message where the content goes.
# The reference stored such a string as the user profile; we refuse it.
ERROR_TEXT = rule(
    r"\A\s*(?:error|exception)\s*:|\A\s*Traceback \(most recent call last\)",
    re.IGNORECASE,
    finds=(
        "Error: rate limit exceeded",
        "  exception: model not loaded",
        'Traceback (most recent call last):\n  File "serve.py", line 3',
    ),
    misses=("No error: everything went fine.", '{"summary": "Error: none"}'),
)

SENTENCE_END = rule(
    r"[.!?…][\"')\]]*(?=\s|$)",
    finds=("Your dog is called Pixel.", "Is that the beagle (Pixel)? Lovely", 'She said "see you soon!" and left'),
    misses=("Your appointment is at 3.30 on Friday", "Try oats with a banana, and"),
)
# A sentence is complete once the next one has begun: "3." or "Dr." mid-stream is not an end yet.
NEXT_SENTENCE = rule(
    r"[.!?…][\"')\]]*\s+(?=\S)",
    finds=("That sounds lovely. Enjoy", "Really? I didn't know", "Have fun (and rest!) Tomorrow"),
    misses=("That sounds lovely.", "That sounds lovely. ", "Your appointment is at 3.30 on Friday"),
)
# Nothing but blanks since the last line began: the text before a number that opens a list's line ("1.").
ENDS_AT_LINE_START = rule(
    r"(?:^|\n)[ \t]*$",
    finds=("Here are three ideas:\n", "Here are three ideas:\n  ", "  "),
    misses=("I ran about ", "We met in room "),
)
# The last sentence announces what never came: "Here are some simple ways:" with the list cut off.
ANNOUNCES_LIST = rule(
    r"(?<=[.!?…])[^.!?…]*:\s*$",
    finds=("Walking helps a lot. Here are some simple ways:", "Great question! Try these:\n"),
    misses=("Here are some simple ways:", "Walking helps a lot. Try it after dinner."),
)

# The words of a reply, lower-cased by its reader, apostrophes kept inside words.
WORD = rule(
    r"[^\W_]+(?:'[^\W_]+)?",
    finds=("i'm glad to help", "pixel", "café au lait"),
    misses=("!!!", "... __ ..."),
)
# The same short unit ("ha", "!", "\n", "lol ") written this many times in a row is a loop.
MAX_UNIT_REPEATS = 8
UNIT_LOOP = rule(
    r"(.{1,30}?)\1{" + str(MAX_UNIT_REPEATS - 1) + ",}",
    re.DOTALL,
    finds=("hahahahahahahahahahahahaha", "Sure!!!!!!!!!!!!!!!!!!!!", "lol lol lol lol lol lol lol lol "),
    misses=("haha, that's funny!", "Wow!!!!!!"),
)
# Chat-template tokens and a line that opens the user's (or a human's) turn: the model has left its
# own role. Matched anywhere, in any model's reply.
ROLE_MARKERS = rule(
    r"<\|im_(?:start|end)\|>|<(?:start|end)_of_turn>|<\|(?:user|assistant|system)\|>|^[ \t]*(?:user|human)[ \t]*:",
    re.IGNORECASE | re.MULTILINE,
    finds=("Fine, thanks.\nUser: and you?", "Hello<|im_start|>user", "<start_of_turn>model", "Human: what about me?"),
    misses=("The user asked a good question.", "Ask the user: what do they need?"),
)
# Punctuation in a lower-cased reply, which comparing two replies word for word leaves out.
PUNCTUATION = rule(
    r"[^\w\s']+",
    finds=("pixel, my friend.", "wow!!"),
    misses=("pixel my friend", "i'm fine"),
)
# "Mike Brennan: Hey! ...", "Alaadin: Fetu l'enso", "A: 15 minutes": a reply that opens like a line of a
# transcript is writing one.
SPEAKER_LABEL = rule(
    r"\W*[A-Z][\w'\-]*(?:\s[A-Z][\w'\-]*){0,2}:\s",
    finds=("Mike Brennan: Hey! How are you?", "Alaadin: Fetu l'enso", "A: 15 minutes"),
    misses=("Sounds good: see you at six!", "Here are three ideas: walk, swim, cycle."),
)

# A weak model's small talk is given no memory (engine/generator.py), so what it says of the person is made
# up: condolences for a loss no one spoke of ("I'm sorry for your loss" to a sister's visit), having been
# told something ("as you mentioned"), or a name no one said ("a film by Tomas Verhoeven").
CONDOLENCES = rule(
    r"\b(?:sorry (?:for|about) (?:your|the|their|his|her) loss|condolences?|sympathy|sympathies|passed away|"
    r"passing of|rest in peace|thoughts and prayers|my thoughts are with|difficult times?|grieving|grief)\b",
    re.IGNORECASE,
    finds=("I'm so sorry for your loss.", "My condolences to you and your family.", "Sending thoughts and prayers."),
    misses=("Sorry for the wait!", "That sounds like a lovely visit with your sister."),
)
# What the person said of a loss, which condolences may answer.
LOSS = rule(
    r"\b(?:died|dies|dying|dead|death|passed away|passed on|passing|funeral|loss|lost (?:my|our|her|his|their)|"
    r"grief|grieving|rip|memorial|buried|put down|put to sleep|hospice|widow|widowed|miscarriage)\b",
    re.IGNORECASE,
    finds=("my dad died last spring", "we had to put down our old cat", "The funeral is on Friday"),
    misses=("my sister is visiting this weekend", "i lost the keys again"),
)
TOLD_CLAIM = rule(
    r"\b(?:(?<!have )(?<!did )(?<!has )you(?:'ve| have)? (?:told|mentioned|said)|as you (?:said|mentioned|told)|"
    r"(?<!have )(?<!did )you (?:once )?told me|"
    r"(?:last time|earlier) you)\b",
    re.IGNORECASE,
    finds=("As you mentioned, the hike sounds fun.", "You've told me you love jazz.", "Last time you said it rained."),
    misses=("Tell me more about the hike!", "Did your sister say yes?", "Have you told your sister yet?"),
)
# A capitalised word inside a sentence, once it is whole (a character after it): a name. Not in a heading (a
# list's "**Keep Track**") nor in a story, a joke or a poem asked for, whose names are made up by request.
# A capitalised word inside a sentence (after a word, a comma or a semicolon), or opening a bracket there: "a
# film by Tomas Verhoeven", "the lead (Marguerite) is wonderful". Not in quotes: 'say "Thank you"'. A capital
# inside it ("WhatsApp", "SaaS") or a hyphen joining two ("Teco-Caman") keeps it one name, and one before a
# hyphen and a word ("a Michelin-starred place") is one too; capitals alone ("TV") are none.
_NAME_PART = r"[A-Z][^\W\d_A-Z]+(?:[A-Z][^\W\d_A-Z]*)*"
INNER_NAME = rule(
    rf"(?:(?<=[a-z,;] )|(?<=[a-z,;] \())({_NAME_PART}(?:-{_NAME_PART})*)(?=[^\w'\u2019-]|['\u2019]s\b|-[a-z])",
    finds=("a film by Tomas Verhoeven.", "the lead (Marguerite) is wonderful", "try a Michelin-starred place"),
    misses=('say "Thank you" to her', "I loved TV as a kid.", "Enjoy the walk. Maybe bring water."),
)
HEADING = rule(
    r"\*\*[^*\n]*\*\*|^#+ .*$|^\s*(?:\d+[.)]|[-*\u2022])\s*[^:\n]{0,60}:",
    re.MULTILINE,
    finds=("**Keep Track**", "Ideas:\n## For the weekend", "1. Morning walk: twenty minutes"),
    misses=("Keep track of your runs in a notebook.", "Meet at 10:30?"),
)
# A story, a joke or a poem asked for: its names are made up by request.
FICTION = rule(
    r"\b(?:story|stories|joke|jokes|poem|poems|limerick|song|tale|riddle|pun|haiku|rhyme)\b",
    re.I,
    finds=("tell me a story about a dragon", "know any good jokes?", "write a haiku about rain"),
    misses=("help me with my history homework", "my nephew loves punk"),
)

# What follows a name when the reply describes that person rather than talking to them.
_DESCRIBING = (
    r"\s+(?:is|was|has|had|loves|likes|lives|works|enjoys|seems|sounds|describes|became|remains|"
    r"(?:[A-Z][a-z]+\s+)?(?:is|was|has))\b"
)


@lru_cache(maxsize=256)
def _alternatives(names: tuple[str, ...]) -> str:
    """`names` of two characters or more as one alternation, the longest first ("Maria Lindqvist" before
    "Maria"); "" when there is none. Cached: the reply guard asks again for every streamed chunk."""
    escaped = [re.escape(name.strip()) for name in names if name and len(name.strip()) >= 2]
    return "|".join(sorted(escaped, key=len, reverse=True))


_CLAIMING = alternation((*NAMING_ONESELF, "i'm", "i am", "im"))  # "I'm Sam", "call me Sam"


def name_claim(text: str, names: Iterable[str]) -> str | None:
    """The words of `text` that claim one of `names` as the speaker's own ("I'm Sam", "call me Sam"), or
    None."""
    alternatives = _alternatives(tuple(names))
    if not alternatives:
        return None
    claim = re.search(rf"\b{_CLAIMING}\s+(?:{alternatives})\b", text, re.I)
    return claim.group(0) if claim else None


def opens_with_name(text: str, names: Iterable[str]) -> bool:
    """Whether `text` opens with one of `names` not followed by a comma: "Sofia! Welcome to my kitchen"
    does, "Sofia, welcome back" speaks to her and does not."""
    alternatives = _alternatives(tuple(names))
    return bool(alternatives) and re.match(r"\W*(?:" + alternatives + r")\b(?!,)", text, re.I) is not None


def name_description(text: str, names: Iterable[str]) -> str | None:
    """The words of `text` that describe the one named by one of `names` rather than talk to them ("Sam is
    a wonderful person", "Sam - a friendly nurse", "Dana's a gem"), or None."""
    alternatives = _alternatives(tuple(names))
    if not alternatives:
        return None
    described = re.search(
        r"\b(?:" + alternatives + r")(?:'s\b|,\s+(?:a|an|the)\s|\s*(?:[-\u2013\u2014:(]|" + _DESCRIBING + r"))",
        text,
        re.I,
    )
    return described.group(0) if described else None
