"""The dimensions of the user profile (the paper's long-term persona memory).

The profile is a set of entries, one per attribute. A single-valued attribute holds one current value:
a new value supersedes the old one (the old one stays in the entry's history). A multi-valued attribute
collects values: a new value is added beside the others unless it is already there.
"""

from typing import NamedTuple

from memory_engine.language.rules import rule
from memory_engine.language.text import straight
from memory_engine.language.word_lists import NAMING_ONESELF, RELATIVES, alternation

SINGLE_VALUED = (
    "name",
    "age",
    "gender",
    "location",
    "hometown",
    "occupation",
    "employer",
    "education",
    "relationship_status",
    "diet",
)

MULTI_VALUED = (
    "family",
    "pets",
    "hobbies",
    "interests",
    "likes",
    "dislikes",
    "goals",
    "skills",
    "languages",
    "health",
    "values",
    "personality",
)

PROFILE_ATTRIBUTES = SINGLE_VALUED + MULTI_VALUED


def is_multi_valued(attribute: str) -> bool:
    return attribute in MULTI_VALUED


# How a person asks about each attribute, in their words: a question ("What do I do for a living?") and
# the sentence that answers it ("I'm a pastry chef.") share few words, but each is close to these.
ASKED_AS: dict[str, str] = {
    "name": "my own name, who I am",
    "age": "my age, how old I am",
    "gender": "my gender",
    "location": "where I live, my city, my home, where I am based",
    "hometown": "where I am from, where I grew up, my hometown",
    "occupation": "my job, my work, my profession, my trade, my career, what I do for a living, what I teach",
    "employer": "where I work, my company, my employer",
    "education": "what I study, my school, my degree",
    "relationship_status": "my relationship, whether I am married",
    "family": (
        "my family: my partner, my child, my son or daughter, my boy or girl, my mother or father, my mum or dad, "
        "my siblings, my grandparents"
    ),
    "pets": "my pet, my animal",
    "hobbies": "my hobby, what I do in my free time",
    "interests": "what I am interested in",
    "likes": "what I like, my favourite",
    "dislikes": "what I dislike, what I hate",
    "goals": "my goal, my plan, my dream",
    "skills": "what I am good at, my skills",
    "languages": "which languages I speak",
    "health": "my health, my allergy, my condition",
    "diet": "my diet, what I eat, what I do not eat",
    "values": "what matters to me",
    "personality": "what kind of person I am",
}


# --- Values in a person's own words ------------------------------------------------------------------
#
# Without an LLM that can write a profile value (the bundled one invents them), a value is read off the
# person's own sentence by the way people say such things ("I live in Porto, in Portugal." -> location
# "Porto"): always a span of their words, never a sentence. Patterns are matched case-insensitively on the
# verbs and case-sensitively on names, so "i live in porto" still gives "porto" only when the whole
# sentence is in lower case (a name cannot be told from a word otherwise).

# A name of up to four words; "I" goes on no name ("my name is Randy I drive for Lone Star", dictated).
_NAME = r"[A-Z][\w'\-]*(?:\s+(?:(?:de|da|van|von|del|di|le|la)\b|(?!I\b|I'\w)[A-Z][\w'\-]*)){0,3}"
# Not a name but what a writer in capitals says next: "MY SPOUSE IS A US CITIZEN", "MY DOG I WALK DAILY".
_NOT_A_VERB = r"(?!(?:I|IS|ARE|WAS|WERE|HAS|HAD|WILL|CAN)\b)"
# A phrase runs to the end of its clause: punctuation, or a word that starts another clause or a place.
_CLAUSE_END = (
    r"(?=\s*(?:[,.;:!?()\u2014\u2013]|\s-\s|$)|\s+(?:and|but|because|so|since|though|although|while|when|who|which|"
    r"where|that|if|until|after|before|for|with|as|at|in|on|from|near|lol|haha)\b)"
)
_PHRASE = r"[^\s,.;:!?()]+(?:\s+[^\s,.;:!?()]+){0,4}?" + _CLAUSE_END
# A list may hold "and": "Portuguese and English", "Pride and Prejudice".
_LIST = (
    r"[^\s,.;:!?()]+(?:\s+[^\s,.;:!?()]+){0,4}?"
    r"(?=\s*(?:[,.;:!?()]|$)|\s+(?:but|because|since|though|when|who|which|lol)\b)"
)
_SHORT = r"[^\s,.;:!?()]+(?:\s+[^\s,.;:!?()]+){0,2}?" + _CLAUSE_END
_I_AM = r"(?:i'm|i am|im)"
_PETS = (
    "dog|dogs|puppy|cat|cats|kitten|rabbit|bunny|hamster|parrot|budgie|bird|fish|goldfish|turtle|tortoise|"
    "horse|pony|guinea pig|snake|lizard|gecko|ferret|chickens|hens|goat"
)
_RELATIVES = alternation(RELATIVES)
_OCCUPATIONS = (
    "nurse|doctor|teacher|engineer|developer|programmer|designer|architect|lawyer|accountant|pharmacist|"
    "chef|cook|baker|waiter|waitress|barista|bartender|electrician|plumber|carpenter|mechanic|pilot|"
    "firefighter|paramedic|dentist|vet|veterinarian|surgeon|therapist|psychologist|counselor|counsellor|"
    "social worker|journalist|writer|editor|photographer|artist|musician|student|researcher|scientist|"
    "professor|lecturer|librarian|manager|consultant|analyst|salesperson|cashier|driver|farmer|gardener|"
    "soldier|police officer|translator|midwife|physiotherapist|tutor|coach|secretary|receptionist|"
    "hairdresser|tailor|butcher|fisherman|carer|caregiver|data scientist|software engineer|web developer|"
    "civil engineer|project manager|product manager|graphic designer|data analyst|teaching assistant"
)
_STATUS = "married|single|engaged|divorced|separated|widowed"
# Words that judge how someone does a thing ("a good cook", "an early riser"): a habit, not a job.
_ASSESSED = (
    "(?:good|bad|great|terrible|awful|decent|keen|big|huge|early|late|light|heavy|picky|fussy|slow|fast|avid|"
    "casual|massive|total|complete|natural|born|proud|lifelong|serious|messy|careful|nervous)"
)
# Nouns with a maker's ending that are no job.
_NOT_JOBS = (
    "(?:fan|member|beginner|lover|vegetarian|owner|user|believer|follower|supporter|newcomer|foreigner|stranger|"
    "partner|mother|father|brother|sister|daughter|grandmother|grandfather|perfectionist|optimist|pessimist|"
    "introvert|extrovert|night owl|morning person|regular|customer|player|winner|loser|fighter|survivor|"
    "dreamer|thinker|worrier|reader|eater|sleeper|gamer|riser|walker|talker|learner|listener|other|bit|lot|number|quarter|half|major|minor|senior|"
    "junior|veteran|human|adult|christian|italian|indian|brazilian|canadian|australian|european|american|"
    "asian|african|ukrainian|russian|norwegian|hungarian|egyptian|peruvian|colombian|chilean|iranian)"
)
_DIETS = (
    "vegetarian|vegan|pescatarian|pescetarian|plant-based|gluten-free|lactose intolerant|dairy-free|"
    "keto|paleo|halal|kosher|coeliac|celiac|diabetic"
)
# Words that follow "I'm" capitalised more often than a name does.
_NOT_A_NAME = (
    "(?:Sorry|Fine|Good|Great|Tired|Happy|Sad|Back|Here|Not|So|Very|Just|Still|Also|Really|Excited|Glad|OK|Ok|"
    "Okay|Done|Home|Ready|Busy|Sure|Always|Never|Going|Trying|Thinking|Feeling|Doing|Getting|Looking|Off|Out|"
    "In|On|At|The|A|An|All|Well|Bored|Hungry|Sick|Ill|Exhausted|Stressed|Curious|Afraid|Worried)"
)


def _after(lead: str, value: str) -> str:
    """A pattern for a value said after a lead (verbs matched in any case): the value is group "v"."""
    return rf"(?i:{lead})\s+(?P<v>{value})"


class _Value(NamedTuple):
    """A way a value is said: its attribute, its pattern (the value is the group "v"), sentences as written
    in which the pattern finds one, and sentences in which it must find none."""

    attribute: str
    pattern: str
    finds: tuple[str, ...]
    misses: tuple[str, ...] = ()


_VALUE_PATTERNS: tuple[_Value, ...] = (
    _Value(
        "name",
        _after(rf"\b{alternation(NAMING_ONESELF)}", _NAME),
        finds=("My name is Ines.", "Call me Dave, everyone does."),
        misses=("My name is on the list.",),
    ),
    _Value(
        "name",
        rf"(?:^|(?i:\b(?:hi|hello|hey)\b)[!,.]?\s+)(?i:{_I_AM})\s+(?!{_NOT_A_NAME}\b)(?P<v>{_NAME})"
        r"(?=\s*(?:[,.!;]|$|\s+(?i:and|btw|by the way|here)\b))",
        finds=("I'm Priya.", "Hi, I'm Tom and I need help with my CV"),
        misses=("I'm Tired.", "I'm going to Lisbon next week"),
    ),
    _Value(
        "age",
        _after(rf"\b{_I_AM}|\bi (?:just )?turned", r"\d{1,3}")
        + r"(?=\s*(?:years?\b|[,.!;]|$|\s+(?:now|today|this)\b))",
        finds=("I'm 34 years old.", "I just turned 40 today!"),
        misses=("I'm 5 minutes late",),
    ),
    _Value(
        "location",
        _after(
            rf"(?:\bi (?:live|'m living|am living)|\bwe live|{_I_AM} based|"
            r"\b(?:i|we)(?:'ve| have)? (?:just |recently )?moved)\s+(?:in|to)",
            rf"(?:the\s+)?{_NAME}",
        ),
        finds=("I live in Porto, in Portugal.", "We just moved to Leeds last month"),
        misses=("I'd love to live in Lisbon someday",),
    ),
    _Value(
        "hometown",
        _after(rf"\bi grew up in|\bi was born in|{_I_AM} (?:originally )?from", _NAME),
        finds=("I grew up in Cork.", "I'm originally from Nairobi"),
        misses=("I grew up on a farm",),
    ),
    _Value(
        "occupation",
        _after(r"(?:\bi work as|\bi'm working as|\bi am working as|\bmy job is)(?:\s+(?:an?|the))?", _SHORT),
        finds=("I work as a nurse at St Mary's.", "My job is teaching piano"),
        misses=("I work from home on Fridays",),
    ),
    _Value(
        "occupation",
        _after(rf"\b{_I_AM}(?:\s+{_NAME},)?\s+an?", rf"(?i:(?:[a-z\-]+\s+){{0,2}}?(?:{_OCCUPATIONS}))\b"),
        finds=("I'm a nurse.", "I'm an electrician in Leeds", "I'm Tom, a teacher"),
        misses=("I'm a veteran", "I'm a big fan of jazz"),
    ),
    # "I'm a geologist", "I'm an animator", "I'm a surf instructor": a noun of the makers of things.
    _Value(
        "occupation",
        _after(
            rf"\b{_I_AM}(?:\s+{_NAME},)?\s+an?",
            rf"(?i:(?!{_ASSESSED}\b)(?:[a-z\-]+\s+)?(?!{_NOT_JOBS}\b)[a-z\-]+(?:ist|er|or|ian|ant|man|woman))\b",
        )
        + r"(?=\s*(?:[,.;!?]|$|\s+(?:at|in|for|with|on|from|based|working|and)\b))",
        finds=("I'm a geologist.", "I'm an animator at Pixar", "I'm a surf instructor in Bali"),
        misses=("I'm a big eater.", "I'm a member of the gym"),
    ),
    _Value(
        "employer",
        _after(r"\bi work (?:at|for)", rf"(?i:an?\s+|the\s+)?{_SHORT}"),
        finds=("I work at Google.", "I work for the NHS in Leeds"),
        misses=("I work from home", "I worked at a café"),
    ),
    _Value(
        "pets",
        _after(
            r"\b(?:i|we) (?:have|got|adopted|own)",
            rf"(?i:(?:an?|two|three|\d+)\s+(?:\w+\s+)?(?:{_PETS})\s+(?:called|named))\s+{_NAME}",
        ),
        finds=("I have a cat called Pepper.", "We adopted two rescue dogs named Bo and Max"),
        misses=("I have a cat.",),
    ),
    _Value(
        "pets",
        _after(r"\bmy", rf"(?i:(?:{_PETS}))(?:'s name is|,?)\s+{_NOT_A_VERB}{_NAME}"),
        finds=("My dog, Biscuit, loves the beach", "My cat's name is Mochi."),
        misses=("My dog is sick again",),
    ),
    _Value(
        "family",
        _after(
            r"\bmy",
            rf"(?i:(?:little |big |older |younger |baby )?(?:{_RELATIVES}))(?:'s name is|,?)\s+{_NOT_A_VERB}{_NAME}",
        ),
        finds=("My daughter's name is Ines.", "My little brother, Sam, is visiting"),
        misses=("My son is allergic to nuts.", "My son allergic to nuts"),
    ),
    _Value(
        "relationship_status",
        _after(rf"\b{_I_AM}(?:\s+(?:now|recently|happily))?", rf"(?i:{_STATUS})\b(?!-)"),
        finds=("I'm married.", "I'm happily engaged to Sam"),
        misses=("I'm not married", "I'm single-handedly running the shop."),
    ),
    _Value(
        "relationship_status",
        _after(r"\bi (?:just )?got", r"(?i:married|engaged|divorced)\b"),
        finds=("I just got engaged!", "I got married in June"),
        misses=("I got invited to a wedding", "My sister got married"),
    ),
    _Value(
        "languages",
        _after(r"\bi speak", _LIST),
        finds=("I speak Portuguese and English.", "I speak a bit of French"),
        misses=("I spoke to my doctor today",),
    ),
    _Value(
        "education",
        _after(
            rf"\b{_I_AM} studying|\bi study|\bi studied|\bi graduated from|\bi (?:have|'ve got) a degree in",
            _SHORT,
        ),
        finds=("I'm studying nursing at Leeds.", "I studied law in Coimbra", "I have a degree in chemistry"),
        misses=("My son studies maths",),
    ),
    _Value(
        "health",
        rf"(?i:\b{_I_AM}\s+)(?P<v>(?i:allergic to)\s+{_SHORT})",
        finds=("I'm allergic to peanuts.", "I am allergic to cats and dogs"),
        misses=("My son is allergic to nuts",),
    ),
    _Value(
        "diet",
        _after(rf"\b{_I_AM}(?:\s+(?:a|now|strictly|mostly|fully))?", rf"(?i:{_DIETS})\b"),
        finds=("I'm vegetarian.", "I'm strictly vegan these days", "I'm a pescatarian"),
        misses=("I'm not vegan", "My wife is vegan"),
    ),
    _Value(
        "diet",
        rf"(?i:\b(?:i|we) (?P<no>don't|do not|never|can't|cannot) eat)\s+(?P<v>{_SHORT})",
        finds=("I don't eat pork.", "We never eat meat on Fridays"),
        misses=("I eat pork on Sundays",),
    ),
    _Value(
        "diet",
        r"(?i:\b(?:i|we) (?:only )?eat\s+)(?P<v>(?i:halal|kosher|plant-based|gluten-free)\b)",
        finds=("We only eat halal.", "I eat gluten-free since my diagnosis"),
        misses=("I eat meat most days", "I don't eat kosher"),
    ),
    _Value(
        "goals",
        _after(r"\bi want to|\bi plan to|\bi'm planning to|\bi hope to|\bmy dream is to|\bmy goal is to", _PHRASE),
        finds=("I want to run a marathon next year.", "My dream is to open a bakery"),
        misses=("I wanted to call you",),
    ),
    _Value(
        "hobbies",
        _after(r"\bin my (?:free|spare) time,? i|\bi (?:love|enjoy|like)(?=\s+\w+ing\b)", _PHRASE),
        finds=("I love hiking with my dog.", "In my spare time I paint"),
        misses=("I love pizza.",),
    ),
    _Value(
        "hobbies",
        _after(r"\bi play", rf"(?:the\s+)?{_SHORT}"),
        finds=("I play the cello.", "I play football on Sundays"),
        misses=("I played tennis yesterday", "My kids play outside"),
    ),
    _Value(
        "likes",
        rf"(?i:\bmy (?P<what>favou?rite \w+) is)\s+(?P<v>{_LIST})",
        finds=("My favourite band is Radiohead.", "my favorite food is sushi"),
        misses=("My favourite thing about Lisbon is the light",),
    ),
    _Value(
        "dislikes",
        _after(r"\bi (?:hate|can't stand|cannot stand|don't like|do not like|dislike)", _PHRASE),
        finds=("I hate mornings.", "I can't stand loud music"),
        misses=("I love mornings",),
    ),
)
_COMPILED = tuple(
    (value.attribute, rule(value.pattern, finds=value.finds, misses=value.misses)) for value in _VALUE_PATTERNS
)
# For a sentence written all in lower case: a name is the one word where a name would be. Its examples are the
# same sentences, in lower case as values_in reads them.
_LOWER_NAME = r"[a-z][\w'\-]*\b"
_COMPILED_LOWER = tuple(
    # "i'm tired" is no name; nor is the word after "my son" ("my son allergic to nuts") without a comma
    (
        value.attribute,
        rule(
            value.pattern.replace(_NAME, _LOWER_NAME).replace("(?:'s name is|,?)", "(?:'s name is|,)"),
            finds=[text.lower() for text in value.finds],
            misses=[text.lower() for text in value.misses],
        ),
    )
    for value in _VALUE_PATTERNS
    if value.attribute != "name"
)
MAX_VALUE_WORDS = 8


def values_in(sentence: str) -> list[tuple[str, str]]:
    """The profile values a person's own sentence states, as (attribute, value): spans of their words
    ("I have a cat called Pepper" -> ("pets", "a cat called Pepper")), each attribute at most once. A sentence
    in one case ("i live in porto", "I AM SO TIRED TODAY DEAR") is read as lower case: no name can be told in it
    by its capital. Pure."""
    text = " ".join(straight(sentence).split())
    one_case = text in (text.lower(), text.upper())
    found: dict[str, str] = {}
    for attribute, pattern in _COMPILED_LOWER if one_case else _COMPILED:
        if attribute in found:
            continue
        match = pattern.search(text.lower() if one_case else text)
        if match is None:
            continue
        start, end = match.span("v") if "v" in pattern.groupindex else match.span()
        value = text[start:end]  # as written, though read in lower case
        if "what" in pattern.groupindex:
            value = f"{value} ({match.group('what').lower()})"
        if "no" in pattern.groupindex:
            value = f"no {value}"
        value = _trimmed(value)
        if value and len(value.split()) <= MAX_VALUE_WORDS:
            found[attribute] = value
    return list(found.items())


# "dog's name is Biscuit": the words that named a value, inside it
_NAME_IS = rule(
    r"'s name is\s+",
    finds=("dog's name is Biscuit", "daughter's name is Ines"),
    misses=("daughter Ines",),
)
# "traveling too", "sister Sara's": what ends a value without being of it
_TRAILING = rule(
    r"(?i)(?:\s+(?:too|also|as well)|'s)$",
    finds=("traveling too", "sister Sara's", "hiking As Well"),
    misses=("Sara's dog", "hiking with friends"),
)


def _trimmed(value: str) -> str:
    """The value without what is not of it ("traveling too": "traveling"; "sister Sara's": "sister Sara"), or ""
    for no value: the start of another sentence ("i'm ..."), a word that says nothing alone ("going", "at",
    "visit", "called"), one that ends on a word pointing elsewhere ("make sure I'm", "see them", "escaping to")
    or holds one ("making this dairy-free chocolate cake")."""
    value = _NAME_IS.sub(" ", value).strip(" \"'\u201c\u201d")
    value = _TRAILING.sub("", value)
    words = value.lower().split()
    if not words or words[0] in ("i", "i'm", "me") or words[-1] in _ENDS_ELSEWHERE:
        return ""
    if set(words) & _POINTING or all(word in _SAYS_NOTHING for word in words):
        return ""
    return value


# Words that, alone, name no value: light verbs, their -ing, adverbs a lead leaves ("I study hard").
_SAYS_NOTHING = frozenset(
    """go going get getting do doing make making have having take taking try trying be being see seeing keep
    start work working visit achieve pass participate fit experiment experimenting called named hard more
    lot a an the at in on to for with from of""".split()  # noqa: SIM905
)
_ENDS_ELSEWHERE = frozenset(
    """i'm we're you're they're it's i we you he she it they them him her us me my our their his its to at in on
    for with from of and or but a an the is are was were be""".split()  # noqa: SIM905
)
# words pointing elsewhere, or starting another clause
_POINTING = frozenset(["this", "that", "these", "those", "it", "them", "i", "i'm", "i've", "we", "we're"])
