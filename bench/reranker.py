"""Training the reranker of engine/reranker.py: a cross-encoder that reads a message and one of the person's
sentences together and says how likely the sentence answers it.

The data is the project's own chat sets (bench/data/chat_*.json, written for the project and CC0; LoCoMo,
CC BY-NC, never trains it). Each conversation is walked in order; every earlier turn's sentences, read as
recall reads them (recall.told_in), are the candidates of a message:
- a question with facts to find ("ask" with "expect"): the sentences holding one are positives; its hard
  negatives are the other sentences the bundled embedder finds closest (HARD_NEGATIVES), and a few at
  random (RANDOM_NEGATIVES). A sentence holding a value that no longer holds ("stale") is neither;
- a question never answered ("not_told") and small talk ("say"): their closest sentences are negatives
  (NOT_TOLD_NEGATIVES and SMALL_TALK_NEGATIVES of them): nothing the person said answers them, which is
  what lets the score say so.

`train` fine-tunes the bundled all-MiniLM-L6-v2 with a one-logit head on those pairs (binary cross-entropy,
AdamW), deterministic for a seed on one thread, then `export` writes it as an int8 ONNX graph with the
record of how it was made (engine/reranker.py reads both). `manage.py train_reranker` runs the two.
"""

from __future__ import annotations

import json
import random
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from bench.chat_quality import found
from memory_engine.engine.recall import MIN_CONTENT_WORDS, told_in
from memory_engine.language.keywords import content_tokens
from memory_engine.store.embeddings import bundled_model_path, get_embedder

DATA = Path(__file__).resolve().parent / "data"
HARD_NEGATIVES = 5
RANDOM_NEGATIVES = 1
NOT_TOLD_NEGATIVES = 3
SMALL_TALK_NEGATIVES = 1
MAX_TOKENS = 128


@dataclass
class Question:
    """A message of a set and the sentences said before it in its conversation: `answers` holds the places
    of those that answer it (none: nothing does), `ignored` those that are neither (a stale value)."""

    source: str
    conversation: str
    text: str
    candidates: list[str]
    answers: set[int] = field(default_factory=set)
    ignored: set[int] = field(default_factory=set)
    asks: bool = True  # an "ask" turn (with facts to find or never told); False: small talk


def chat_sets(data: Path = DATA) -> list[Path]:
    return sorted(data.glob("chat_*.json"))


def questions(path: Path) -> list[Question]:
    """Every message of the set at `path` with the sentences said before it (as recall reads them)."""
    found_questions = []
    for conversation in json.loads(path.read_text())["conversations"]:
        said: list[str] = []
        for session in conversation["sessions"]:
            for turn in session["turns"]:
                text = turn.get("ask") or turn["say"]
                if said:
                    question = Question(path.stem, conversation["id"], text, list(said), asks="ask" in turn)
                    if expect := turn.get("expect"):
                        question.answers = {i for i, s in enumerate(said) if found(s, expect)}
                        stale = turn.get("stale") or []
                        question.ignored = {i for i, s in enumerate(said) if stale and found(s, stale)}
                        question.ignored -= question.answers
                        if question.answers:
                            found_questions.append(question)
                    else:
                        found_questions.append(question)
                candidates, _ = told_in(text)
                for candidate in candidates:
                    if len(set(content_tokens(candidate))) >= MIN_CONTENT_WORDS and candidate not in said:
                        said.append(candidate)
    return found_questions


def pairs(found_questions: list[Question], seed: int) -> list[tuple[str, str, float]]:
    """The training pairs (message, sentence, 1 or 0) of the questions, as the module docstring says."""
    rng = random.Random(seed)
    embedder = get_embedder()
    texts = sorted({q.text for q in found_questions} | {c for q in found_questions for c in q.candidates})
    vectors = dict(zip(texts, embedder.encode(texts), strict=True))
    out = []
    for question in found_questions:
        closeness = np.array([vectors[c] for c in question.candidates]) @ vectors[question.text]
        order = [int(i) for i in np.argsort(-closeness)]
        if question.answers:
            out += [(question.text, question.candidates[i], 1.0) for i in sorted(question.answers)]
            others = [i for i in order if i not in question.answers and i not in question.ignored]
            hard, rest = others[:HARD_NEGATIVES], others[HARD_NEGATIVES:]
            chosen = hard + rng.sample(rest, min(RANDOM_NEGATIVES, len(rest)))
        else:
            chosen = order[: NOT_TOLD_NEGATIVES if question.asks else SMALL_TALK_NEGATIVES]
        out += [(question.text, question.candidates[i], 0.0) for i in chosen]
    return out


@dataclass
class Trained:
    model: object  # a transformers BertForSequenceClassification
    tokenizer: object
    record: dict


def train(
    sets: list[Path],
    *,
    seed: int = 7,
    epochs: int = 2,
    batch: int = 32,
    rate: float = 3e-5,
    threads: int = 1,
    log=print,
) -> Trained:
    """The bundled MiniLM fine-tuned on the pairs of `sets` (see the module docstring)."""
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    torch.manual_seed(seed)
    torch.set_num_threads(threads)
    started = time.monotonic()
    found_questions = [q for path in sets for q in questions(path)]
    train_pairs = pairs(found_questions, seed)
    log(f"{len(found_questions)} messages, {len(train_pairs)} pairs ({sum(p[2] for p in train_pairs):.0f} answers)")
    tokenizer = AutoTokenizer.from_pretrained(bundled_model_path())
    model = BertForSequenceClassification.from_pretrained(bundled_model_path(), num_labels=1)
    optimiser = torch.optim.AdamW(model.parameters(), lr=rate)
    rng = random.Random(seed)
    model.train()
    for epoch in range(epochs):
        order = list(range(len(train_pairs)))
        rng.shuffle(order)
        total = 0.0
        for start in range(0, len(order), batch):
            chunk = [train_pairs[i] for i in order[start : start + batch]]
            feed = tokenizer(
                [p[0] for p in chunk],
                [p[1] for p in chunk],
                truncation=True,
                max_length=MAX_TOKENS,
                padding=True,
                return_tensors="pt",
            )
            logits = model(**feed).logits.squeeze(-1)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                logits, torch.tensor([p[2] for p in chunk], dtype=torch.float32)
            )
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += float(loss.detach()) * len(chunk)
        log(f"epoch {epoch + 1}: loss {total / len(order):.4f} ({time.monotonic() - started:.0f} s)")
    model.eval()
    record = {
        "initialised from": "all-MiniLM-L6-v2 (bundled)",
        "sets": [path.name for path in sets],
        "messages": len(found_questions),
        "pairs": len(train_pairs),
        "seed": seed,
        "epochs": epochs,
        "batch": batch,
        "learning rate": rate,
        "max tokens": MAX_TOKENS,
        "negatives": {
            "hard": HARD_NEGATIVES,
            "random": RANDOM_NEGATIVES,
            "never told": NOT_TOLD_NEGATIVES,
            "small talk": SMALL_TALK_NEGATIVES,
        },
        "training seconds": round(time.monotonic() - started),
    }
    return Trained(model, tokenizer, record)


def export(trained: Trained, folder: Path) -> Path:
    """The trained model written to `folder` as an int8 ONNX graph (model.onnx) beside its tokenizer and the
    record of how it was made (reranker.json); the folder engine/reranker.py loads."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    folder.mkdir(parents=True, exist_ok=True)
    full = folder / "model-float32.onnx"
    feed = trained.tokenizer(["a question?"], ["a sentence."], return_tensors="pt")
    with warnings.catch_warnings():  # the tracer's notes on transformers' own code: the test compares outputs
        warnings.simplefilter("ignore")
        torch.onnx.export(
            trained.model,
            (feed["input_ids"], feed["attention_mask"], feed["token_type_ids"]),
            str(full),
            input_names=["input_ids", "attention_mask", "token_type_ids"],
            output_names=["logits"],
            dynamic_axes={
                name: {0: "batch", 1: "tokens"} for name in ("input_ids", "attention_mask", "token_type_ids")
            },
            opset_version=17,
            dynamo=False,
        )
    quantize_dynamic(str(full), str(folder / "model.onnx"), weight_type=QuantType.QInt8)
    full.unlink()
    trained.tokenizer.backend_tokenizer.save(str(folder / "tokenizer.json"))
    (folder / "reranker.json").write_text(json.dumps(trained.record, indent=1) + "\n")
    return folder
