"""What every layer reads of text alike, defined once below them all: the engine's rules (language/reading.py),
the store's tokens (language/keywords.py) and the reply's guard (llm/degeneration.py). Pure."""

# The apostrophes chat mixes with the straight one: right and left single quotes, the modifier letter, the
# full-width one ("I’m", "I‘m", "Iʼm", "I＇m" are all "I'm").
APOSTROPHES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u02bc": "'", "\uff07": "'"})


def straight(text: str) -> str:
    """`text` with every apostrophe straight."""
    return text.translate(APOSTROPHES)
