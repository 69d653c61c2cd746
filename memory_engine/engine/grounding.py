"""Grounding: whether a value is in the words it came from.

Nothing an LLM extracts is stored unless its content words are in the turn it cites (long_term.
validate_extraction), and a forget or an edit finds the statements an entry was drawn from by the same
measure (curation.py). Pure.
"""

from memory_engine.store.keywords import content_tokens

GROUNDING_MIN = 0.6  # share of a value's content words that must appear in its source
# Words an extraction uses for the speakers, not what was said: "The user is a radiology nurse".
SPEAKER_WORDS = frozenset(content_tokens("user assistant person speaker"))


def grounding(value: str, source_text: str, *, ignore: frozenset[str] = frozenset()) -> float:
    """Share of the value's content words (but those in `ignore`) found in the source text (0.0 when it has
    none)."""
    words = set(content_tokens(value)) - ignore
    if not words:
        return 0.0
    return len(words & set(content_tokens(source_text))) / len(words)


def states(value: str, sentence: str) -> bool:
    """Whether `sentence` states `value`: it holds GROUNDING_MIN of the value's content words, the words for
    the speakers left out."""
    return grounding(value, sentence, ignore=SPEAKER_WORDS) >= GROUNDING_MIN
