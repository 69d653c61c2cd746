"""What a page's vector should hold of its reply: the LoCoMo dev split's pages (a speaker_a turn and the
speaker_b turn after it, as the evaluation makes them) embedded three ways, and searched densely for each
question of categories 1-4 that has evidence. A question counts when every one of its evidence turns is
among the 10 best pages. Also: how many pages are longer than the model's window (256 tokens), and what a
text at the window costs to embed against a short one (texts a second, the same number of each).
"""

import time
from functools import cache
from pathlib import Path

import numpy as np
from tokenizers import Tokenizer

from memory_engine.config import memory_settings
from memory_engine.formats.locomo import clean_evidence, iter_pages, load_samples
from memory_engine.models import page_text
from memory_engine.store.embeddings import MAX_TOKENS, bundled_model_path, get_embedder

DEPTH = 10
SHORT_REPLY_TOKENS = 32


@cache
def _tokenizer() -> Tokenizer:
    """The bundled model's own tokenizer, untruncated."""
    tokenizer = Tokenizer.from_file(str(Path(bundled_model_path()) / "tokenizer.json"))
    tokenizer.no_truncation()  # the file's own setting cuts at 128
    tokenizer.no_padding()
    return tokenizer


def _tokens(text: str) -> int:
    return len(_tokenizer().encode(text).ids)  # with the model's two special tokens


def _start(text: str, tokens: int) -> str:
    ids = _tokenizer().encode(text, add_special_tokens=False).ids
    return text if len(ids) <= tokens else _tokenizer().decode(ids[:tokens])


def measure(*, conversations: int | None = None) -> dict:
    embedder = get_embedder()
    ways = {
        "the person's words and the reply (as stored)": lambda p: page_text(p.user_input, p.agent_response),
        "the person's words alone": lambda p: page_text(p.user_input, ""),
        f"the person's words and the reply's first {SHORT_REPLY_TOKENS} tokens": lambda p: page_text(
            p.user_input, _start(p.agent_response, SHORT_REPLY_TOKENS)
        ),
    }
    found, asked, pages_total, over = dict.fromkeys(ways, 0), 0, 0, 0
    for sample in load_samples(memory_settings().locomo_file)[:conversations]:
        pages = list(iter_pages(sample))
        pages_total += len(pages)
        over += sum(
            len(embedder._tokenizer.encode(ways_text).ids) >= MAX_TOKENS
            for ways_text in map(lambda p: page_text(p.user_input, p.agent_response), pages)
        )
        known = {dia for page in pages for dia in page.dia_ids}
        questions = [
            (q["question"], set(clean_evidence(q.get("evidence", []), known)))
            for q in sample["qa"]
            if q.get("category") in (1, 2, 3, 4)
        ]
        questions = [(text, evidence) for text, evidence in questions if evidence]
        asked += len(questions)
        vectors = embedder.encode([text for text, _ in questions])
        for way, make in ways.items():
            page_vectors = embedder.encode([make(page) for page in pages])
            for vector, (_, evidence) in zip(vectors, questions, strict=True):
                best = np.argsort(-(page_vectors @ vector))[:DEPTH]
                found[way] += evidence <= {dia for row in best for dia in pages[row].dia_ids}
    return {
        "pages": pages_total,
        "pages_past_the_window": over,
        "questions": asked,
        "recall": {way: found[way] / max(asked, 1) for way in ways},
        "texts_a_second": _cost(embedder),
    }


def _cost(embedder, count: int = 200) -> dict:
    """Texts a second for `count` texts of about 46 tokens (a synthetic chat page's median) and of the window."""
    rates = {}
    for name, words in (("46 tokens", 40), (f"{MAX_TOKENS} tokens", 400)):
        texts = [" ".join(f"word{(n * 7 + i) % 997}" for i in range(words)) for n in range(count)]
        texts = [_start(text, int(name.split()[0]) - 2) for text in texts]
        began = time.perf_counter()
        embedder.encode(texts)
        rates[name] = count / (time.perf_counter() - began)
    return rates


def report(figures: dict) -> str:
    lines = [
        f"LoCoMo dev: {figures['pages']:,} pages, {figures['pages_past_the_window']} longer than the model's "
        f"window ({MAX_TOKENS} tokens); {figures['questions']} questions (categories 1-4) with evidence",
        "",
        f"| what a page's vector holds | evidence all in the {DEPTH} best pages |",
        "| --- | --- |",
    ]
    lines += [f"| {way} | {share:.3f} |" for way, share in figures["recall"].items()]
    rates = figures["texts_a_second"]
    lines += [
        "",
        "embedding cost: " + ", ".join(f"{rate:.1f} texts a second at {name}" for name, rate in rates.items()),
    ]
    return "\n".join(lines)
