"""A long page shown by the part that matches: what of a turn a prompt gives when the whole would not fit.

A page longer than the space's page limit (MEMORYOS_PAGE_TOKENS) is shown as an excerpt: the person's words
first, the assistant's reply after them in what room is left, each cut to its sentences that share the most
content words with the query, kept in their order, with "…" where sentences were left out. A reply that
shares no word with the query is shown by its opening sentence. Nothing is reworded: every sentence shown is
one that was said. Pure.

Why: a person talking to an assistant gets long replies (LongMemEval's are 300 to 600 tokens), and a whole
page of them took a 1,500-token context for three turns (docs/benchmarks.md, "LongMemEval").
"""

from memory_engine.language.keywords import content_tokens
from memory_engine.language.reading import split_sentences

GAP = " … "
SHORTEST = 40  # characters: less room than this for a reply shows none of it
PERSON_SHARE = 0.6  # of a page's limit, what the person's words may take when the reply needs room too


def _best_sentences(sentences: list[str], query_words: set[str], limit: int) -> list[int]:
    """The places of the sentences to show within `limit` characters: the best matches first (more
    shared content words; on a tie, the earlier), the first sentence when none matches."""
    overlap = [len(query_words & set(content_tokens(sentence))) for sentence in sentences]
    order = sorted(range(len(sentences)), key=lambda i: (-overlap[i], i))
    chosen, used = [], 0
    for place in order:
        if overlap[place] == 0 and chosen:
            break
        cost = len(sentences[place]) + len(GAP)
        if used + cost <= limit:
            chosen.append(place)
            used += cost
    if not chosen:  # not even the best sentence fits: its start
        return [order[0]]
    return sorted(chosen)


def cut_to_match(text: str, query_words: set[str], limit: int) -> str:
    """`text` within about `limit` characters, by the sentences that match the query best. Pure."""
    if len(text) <= limit:
        return text
    sentences = split_sentences(text)
    if not sentences:
        return text[:limit].rstrip() + GAP.rstrip()
    places = _best_sentences(sentences, query_words, limit)
    parts, last = [], -1
    for place in places:
        if place != last + 1:
            parts.append(GAP.strip())
        sentence = sentences[place]
        parts.append(sentence if len(sentence) <= limit else sentence[:limit].rstrip() + GAP.rstrip())
        last = place
    if last != len(sentences) - 1:
        parts.append(GAP.strip())
    return " ".join(parts)


def excerpt(query: str, said: str, replied: str, limit: int) -> tuple[str, str]:
    """What a page shows of the person's words and the reply within about `limit` characters: both whole
    when they fit; else the person's words first (at most PERSON_SHARE of the limit when there is a reply,
    less when their words are shorter) and the reply in the rest, each cut to what matches `query`. Pure."""
    if len(said) + len(replied) <= limit:
        return said, replied
    words = set(content_tokens(query))
    room_for_said = limit if not replied else max(int(limit * PERSON_SHARE), limit - len(replied))
    shown_said = cut_to_match(said, words, room_for_said)
    room = limit - len(shown_said)
    shown_replied = cut_to_match(replied, words, room) if replied and room >= SHORTEST else ""
    return shown_said, shown_replied
