"""How requests to the memory are read (language/memory_requests.py): the labelled messages of
bench/data/memory_requests.json (written by someone who saw no code), and every message of the chat sets,
LoCoMo's development conversations and LongMemEval's development histories, where nothing asks the memory to
forget: a forget read there would lose what the person told. No model, no database; seconds."""

import json
from collections import Counter
from pathlib import Path

from bench.intents import chat_sets
from memory_engine.config import memory_settings
from memory_engine.formats.locomo import load_samples
from memory_engine.formats.longmemeval import load_questions
from memory_engine.language.memory_requests import FORGET, LIST, read

LABELLED = Path(__file__).parent / "data" / "memory_requests.json"


def labelled(path: Path = LABELLED) -> dict:
    """Each labelled message of `path` read: counts by (label, read as), and the messages read otherwise."""
    counts, wrong = Counter(), []
    for item in json.loads(path.read_text())["messages"]:
        request = read(item["message"])
        label = item["kind"] if item["kind"] in (FORGET, LIST) else "none"
        got = "none" if request is None else ("tentative " if request.tentative else "") + request.kind
        counts[(label, got)] += 1
        if got.removeprefix("tentative ") != label:
            wrong.append((label, got, item["message"]))
    return {"counts": counts, "wrong": wrong}


def unasked() -> list[tuple[str, int, list[str]]]:
    """(corpus, messages read, those read as a request) for text where nothing asks the memory anything."""
    corpora = {}
    for path in chat_sets():
        if path.name == "chat_curation.json":  # asks to forget on purpose
            continue
        corpora[path.name] = [
            turn.get("say") or turn["ask"]
            for conversation in json.loads(path.read_text())["conversations"]
            for session in conversation["sessions"]
            for turn in session["turns"]
        ]
    locomo, longmemeval = memory_settings().locomo_file, memory_settings().longmemeval_file
    if locomo.exists():
        corpora["LoCoMo dev"] = [
            turn["text"]
            for sample in load_samples(locomo)
            for key, turns in sample["conversation"].items()
            if key.startswith("session") and isinstance(turns, list)
            for turn in turns
        ]
    if longmemeval.exists():
        corpora["LongMemEval dev (user turns)"] = [
            turn["content"]
            for question in load_questions(longmemeval)
            for session in question["haystack_sessions"]
            for turn in session
            if turn["role"] == "user"
        ]
    return [(name, len(texts), [t for t in texts if read(t) is not None]) for name, texts in corpora.items()]
