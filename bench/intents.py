"""How language/intent.py reads messages: the labelled corpus (data/intents.json) and every chat set's
questions ("ask" turns: about what the person said) and small talk ("say" turns: the model's to answer).
No database and no model: seconds. `manage.py bench_intents` prints it.

On a chat set, an "ask" read as None is a question the memory never tries to answer (the model does);
a "say" read as MEMORY is small talk that recall tries to answer from memory (it answers only when a
statement scores, or says "you haven't told me").
"""

import json
from collections import Counter
from pathlib import Path

from memory_engine.language.intent import MAYBE, MEMORY, read

DATA = Path(__file__).resolve().parent / "data"
CORPUS = DATA / "intents.json"
ACCEPTED = {"memory": {MEMORY}, "maybe": {MAYBE}, "none": {None}, "not memory": {MAYBE, None}}


def corpus(path: Path = CORPUS) -> dict:
    """The labelled messages read: how many, how many as labelled, and the ones that were not."""
    items = json.loads(path.read_text())["messages"]
    wrong = []
    for item in items:
        found = read(item["message"])
        if found.kind not in ACCEPTED[item["kind"]]:
            wrong.append({"message": item["message"], "label": item["kind"], "read": found.kind, "rule": found.rule})
    return {"messages": len(items), "as labelled": len(items) - len(wrong), "wrong": wrong}


def chat_set(path: Path) -> dict:
    """A chat set's turns read: its questions by kind, its small talk read as MEMORY, and the rules that
    decided its questions, most used first."""
    conversations = json.loads(path.read_text())["conversations"]
    turns = [turn for c in conversations for session in c["sessions"] for turn in session["turns"]]
    asks = [read(turn["ask"]) for turn in turns if "ask" in turn]
    says = [read(turn["say"]) for turn in turns if "say" in turn]
    kinds = Counter(found.kind for found in asks)
    return {
        "set": path.stem,
        "questions": len(asks),
        "memory": kinds[MEMORY],
        "maybe": kinds[MAYBE],
        "none": kinds[None],
        "small talk": len(says),
        "small talk as memory": sum(found.kind == MEMORY for found in says),
        "rules": Counter(found.rule for found in asks).most_common(),
        "questions read as none": [found.message for found in asks if found.kind is None],
    }


def chat_sets() -> list[Path]:
    return sorted(DATA.glob("chat_*.json"))
