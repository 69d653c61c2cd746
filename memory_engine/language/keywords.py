"""Tokens, stopwords and keywords: the shared vocabulary of lexical search, keywords and summaries.

Every function here is pure and deterministic (no I/O, no randomness, no model), so calling it again on
the same input returns the same output. BM25 (``lexical.py``), the extractive summaries (``summaries.py``)
and the mid-term page keywords all go through ``content_tokens`` so that a word matches the same way
everywhere.

Tokenizer choices:
- Text is NFKC-normalised and case-folded, so full-width letters, ligatures and "ß" compare sensibly.
- A token is a run of Unicode letters or digits (``_`` and punctuation split words); an apostrophe
  between two such runs stays inside the token: "don't" stays "don't", "Caroline's" stays "caroline's".
  Curly apostrophes (’) count as straight ones, since chat text mixes the two.
- Emoji, symbols and markup punctuation are separators; "<b>bold</b>" yields "b", "bold", "b".
"""

import re
import unicodedata
from collections import Counter
from collections.abc import Iterable
from functools import lru_cache

from memory_engine.language.rules import rule
from memory_engine.language.text import straight

__all__ = [
    "STOPWORDS",
    "content_tokens",
    "extract_keywords",
    "jaccard",
    "normalize_token",
    "strip_speaker_labels",
    "tokenize",
]

# [^\W_] is "a word character that is not the underscore": Unicode letters and digits (and combining
# marks, so accented letters written with a combining accent stay in one token).
_TOKEN_RE = rule(
    r"[^\W_]+(?:'[^\W_]+)*",
    finds=("don't forget the milk", "caroline's birthday", "3pm works"),
    misses=("...", "🎉🎉 :)"),
)
# A speaker label: one to three capitalised words and a colon, at the start of a line or right after the
# end of a sentence ("Caroline: ...", "Dr Smith: ..."). The chat roles of this project (User, Assistant,
# System) count wherever they appear, since a message without final punctuation runs straight into the
# next label ("User: what should I cook Assistant: How about ..."). Other capitalised words followed by a
# colon mid-sentence are prose ("I told Bob: no") and are kept.
_SPEAKER_LABEL_RE = rule(
    r"(?:(?:^|(?<=[.!?…]\s))[^\S\n]*[A-Z][\w'\-]*(?:[^\S\n][A-Z][\w'\-]*){0,2}"
    r"|(?:^|(?<=\s))(?:User|Assistant|System)):(?=\s)",
    re.MULTILINE,
    finds=(
        "Caroline: I got the job!",
        "User: what should I cook Assistant: How about pasta?",
        "Thanks. Dr Smith: take it twice a day",
    ),
    misses=("I told Bob: no", "The meeting is at 10:30 tomorrow"),
)

# A general English list (articles, pronouns, auxiliaries, prepositions, conjunctions, common adverbs)
# plus the filler of casual chat, which would otherwise top every keyword list of a conversation.
# Contractions appear with their apostrophe because that is how ``tokenize`` returns them.
STOPWORDS: frozenset[str] = frozenset(
    """
    a about above across after afterwards again against all almost alone along already also although
    always am among an and another any anybody anyhow anyone anything anyway anyways anywhere are aren't
    around as at back be became because become becomes been before beforehand behind being below beside
    besides between beyond both but by can can't cannot could couldn't did didn't do does doesn't doing
    don't done down during each either else elsewhere enough etc even ever every everybody everyone
    everything everywhere except few for former formerly from further had hadn't has hasn't have haven't
    having he he'd he'll he's hence her here here's hers herself him himself his how how's however i i'd
    i'll i'm i've ie if in indeed into is isn't it it'd it'll it's its itself let's many may maybe me
    meanwhile might mine more moreover most mostly much must mustn't my myself neither never
    nevertheless next no nobody none noone nor not nothing now nowhere of off often on once one ones only
    onto or other others otherwise ought our ours ourselves out over own per perhaps quite rather same
    shall shan't she she'd she'll she's should shouldn't since so some somebody somehow someone something
    sometime sometimes somewhat somewhere still such than that that's the their theirs them themselves
    then thence there there's thereafter thereby therefore these they they'd they'll they're they've
    this those though through throughout thru thus to together too toward towards under until up upon
    us very via was wasn't we we'd we'll we're we've were weren't what what's whatever when when's
    whence whenever where where's whereas wherever whether which while who who's whoever whole whom
    whose why why's will with within without won't would wouldn't yet you you'd you'll you're you've
    your yours yourself yourselves
    ah aha alright anyhoo aw aww awesome basically bye cool definitely gonna gotta great guess haha
    hahaha hey hi hmm hmmm huh just kinda lol lots mean oh ok okay oops please pretty real really right
    sorta stuff sure thank thanks thing things totally uh um umm wanna well wow yay yeah yep yes yup
    like likely actually literally especially absolutely certainly seriously honestly super
    get gets got getting gotten go goes going went gone know knows knew
    think thinks thought say says said tell told see seen look want wants let lot way ways
    """.split()  # noqa: SIM905 (a word list reads and diffs better as text than as 300 quoted strings)
)


def tokenize(text: str) -> list[str]:
    """Split ``text`` into lower-case word tokens (letters and digits, apostrophe-internal words kept).

    Safe on any string (emoji, HTML, empty); pure, so repeating it gives the same list.
    """
    if not text:
        return []
    if text.isascii():
        # The common case, and NFKC, curly apostrophes and case-folding beyond lower() are all no-ops here.
        return _TOKEN_RE.findall(text.lower())
    folded = straight(unicodedata.normalize("NFKC", text)).casefold()
    return _TOKEN_RE.findall(folded)


def strip_speaker_labels(text: str) -> str:
    """``text`` with chat speaker labels ("User:", "Assistant:", "Caroline:") replaced by line breaks.

    Pages are stored as "User: ... Assistant: ..."; without this, "user" and "assistant" (or the two
    speakers' names) would be the top keywords of every page and the first words of every summary
    sentence. The line break keeps the label's role as a boundary between two messages. Pure.
    """
    return _SPEAKER_LABEL_RE.sub("\n", text) if text else ""


# Cached: chat reuses a small vocabulary, and this is the costly step of indexing a document.
@lru_cache(maxsize=65536)
def normalize_token(token: str) -> str:
    """Map a lower-case token to the form used for matching, by stripping inflectional endings only.

    Drops a possessive "'s", then strips plurals and "-ed" / "-ing" following steps 1a and 1b of the Porter
    stemmer (1980), with its repairs so the stem of an inflected form meets the bare word: "cats" -> "cat",
    "glasses" -> "glass", "painted" / "painting" -> "paint", "baked" / "baking" -> "bake",
    "running" -> "run". Departures from Porter, so that forms stay readable words more often:
    - "-ies" / "-ied" -> "-y" on words of five letters or more ("puppies" -> "puppy",
      "studied" -> "study"), but "ties" -> "tie", "died" -> "die";
    - "-ches", "-shes", "-xes", "-zzes" and long "-oes" lose "-es" ("boxes" -> "box", meeting "boxed"
      and "boxing"; "tomatoes" -> "tomato", but "shoes" -> "shoe");
    - words of three letters or fewer keep their "s" ("gas", "yes"); "-us" / "-is" are not plurals
      ("bus", "tennis").
    Derivational endings ("-ness", "-ation") are left alone. The result is sometimes not a word
    ("excited" -> "excit"), but it is the same for every form, which is all matching needs. On LoCoMo
    (5 dev conversations, BM25 evidence recall@10) no normalisation gave 0.572, plural stripping alone
    0.578, plurals plus "-ed" / "-ing" 0.609.
    Pure; normalising an already normalised token is harmless but not guaranteed to be a no-op.
    """
    if token.endswith("'s"):
        token = token[:-2]
    return _strip_ed_ing(_strip_plural(token))


def _is_consonant(word: str, i: int) -> bool:
    char = word[i]
    if char in "aeiou":
        return False
    if char == "y":
        # Porter: "y" is a consonant at the start or after a vowel ("toy"), a vowel after a consonant ("by").
        return i == 0 or not _is_consonant(word, i - 1)
    return True


def _measure(stem: str) -> int:
    """Porter's m: the number of vowel-consonant sequences in ``stem``."""
    m = 0
    previous_vowel = False
    for i in range(len(stem)):
        vowel = not _is_consonant(stem, i)
        if previous_vowel and not vowel:
            m += 1
        previous_vowel = vowel
    return m


def _has_vowel(stem: str) -> bool:
    return any(not _is_consonant(stem, i) for i in range(len(stem)))


def _ends_cvc(word: str) -> bool:
    """Consonant-vowel-consonant ending whose last letter is not w, x or y ("hop", not "snow")."""
    n = len(word)
    return (
        n >= 3
        and _is_consonant(word, n - 3)
        and not _is_consonant(word, n - 2)
        and _is_consonant(word, n - 1)
        and word[-1] not in "wxy"
    )


def _strip_plural(word: str) -> str:
    if len(word) <= 3 or not word.endswith("s"):
        return word
    if word.endswith("sses"):
        return word[:-2]
    if word.endswith("ies"):
        return word[:-3] + "y" if len(word) > 4 else word[:-1]
    if word.endswith(("ches", "shes", "xes", "zzes")) or (word.endswith("oes") and len(word) > 5):
        return word[:-2]
    if word.endswith(("ss", "us", "is")):
        return word
    return word[:-1]


def _strip_ed_ing(word: str) -> str:
    """Porter step 1b: "-eed" -> "-ee" on long stems; "-ed" / "-ing" dropped when a vowel remains."""
    if word.endswith("ied"):
        # Like "-ies": "studied" -> "study", but "died" -> "die" to meet "die" and "dies".
        return word[:-3] + "y" if len(word) > 4 else word[:-1]
    if word.endswith("eed"):
        return word[:-1] if _measure(word[:-3]) > 0 else word
    for suffix in ("ed", "ing"):
        if word.endswith(suffix) and _has_vowel(word[: -len(suffix)]):
            stem = word[: -len(suffix)]
            break
    else:
        return word
    if stem.endswith(("at", "bl", "iz")):
        return stem + "e"  # conflated -> conflate, troubled -> trouble
    if len(stem) >= 2 and stem[-1] == stem[-2] and stem[-1] not in "aeiouylsz":
        return stem[:-1]  # hopping -> hop, but falling -> fall
    if _measure(stem) == 1 and _ends_cvc(stem):
        return stem + "e"  # hoping -> hope, baked -> bake
    return stem


def _content_pairs(text: str) -> list[tuple[str, str]]:
    """(surface token, normalised token) for every content word of ``text``, in order."""
    pairs = []
    for token in tokenize(text):
        if len(token) < 2 or token in STOPWORDS:
            continue
        normal = normalize_token(token)
        # Checked again after normalising so that "others" and "things" go the way of "other" and "thing".
        if len(normal) < 2 or normal in STOPWORDS:
            continue
        pairs.append((token, normal))
    return pairs


def content_tokens(text: str) -> list[str]:
    """The normalised content words of ``text``: ``tokenize`` minus stopwords and 1-character tokens,
    each passed through ``normalize_token`` (so "cats" and "cat" both give "cat", "painted" and "paint"
    both "paint"). Order and repeats are kept, as BM25 needs term frequencies. Pure and deterministic.
    """
    return [normal for _, normal in _content_pairs(text)]


def extract_keywords(texts: list[str], k: int = 8, *, surface: bool = False) -> list[str]:
    """The ``k`` most characteristic content words of ``texts``, most characteristic first.

    Keywords are returned in normalised form, as ``content_tokens`` gives them ("cats" and "cat" count
    together as "cat"), so they can be compared with each other and with a query's content tokens
    (``jaccard``) whichever inflection each text used. With ``surface=True`` each keyword is instead
    spelled as it was seen most often (ties: the shorter, then alphabetical), for display; such keywords
    must not be compared with normalised ones.

    Speaker labels are ignored (see ``strip_speaker_labels``). Ranking: total count across the texts,
    then the number of texts the word appears in (a word spread over several texts says more about the
    whole than one repeated in a single text), then length (longer words tend to be more specific), then
    alphabetical order so that the result never depends on dict order. Pure and deterministic; returns
    fewer than ``k`` words when there are fewer, and [] for k <= 0.
    """
    if k <= 0:
        return []
    counts: Counter[str] = Counter()
    spread: Counter[str] = Counter()
    spellings: dict[str, Counter[str]] = {}
    for text in texts:
        pairs = _content_pairs(strip_speaker_labels(text))
        for spelling, normal in pairs:
            counts[normal] += 1
            spellings.setdefault(normal, Counter())[spelling] += 1
        spread.update({normal for _, normal in pairs})
    ranked = sorted(counts, key=lambda word: (-counts[word], -spread[word], -len(word), word))[:k]
    if not surface:
        return ranked
    keywords = []
    for normal in ranked:
        forms = spellings[normal]
        keywords.append(min(forms, key=lambda form: (-forms[form], len(form), form)))
    return keywords


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """|A ∩ B| / |A ∪ B| of the two collections taken as sets; 0.0 when both are empty. Pure."""
    set_a, set_b = set(a), set(b)
    union = set_a | set_b
    if not union:
        return 0.0
    return len(set_a & set_b) / len(union)
