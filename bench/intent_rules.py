"""Which rules of language/intent.py earn their place: each rule left out in turn, how the labelled corpus
(data/intents.json) and the chat sets' turns are read, the sets written from our own misses (data/chat_*.json)
apart from those written by someone who never saw the code (data/heldout/chat_issue64_*.json). A rule earns its
place where leaving it out reads the held-out sets' messages otherwise: a question read as small talk or the
other way, or MEMORY (answered from memory, or "you haven't told me") read as MAYBE (answered when the memory's
own match scores), or back. No database and no model: `python -m bench.intent_rules`.
"""

import json
from pathlib import Path

from bench.intents import CORPUS, DATA, corpus
from memory_engine.language import intent

HELD_OUT = sorted((DATA / "heldout").glob("chat_issue64_*.json"))
OWN = sorted(DATA.glob("chat_*.json"))


def _turns(paths: list[Path]) -> tuple[list[str], list[str]]:
    asks, says = [], []
    for path in paths:
        for conversation in json.loads(path.read_text())["conversations"]:
            for session in conversation["sessions"]:
                for turn in session["turns"]:
                    asks += [turn["ask"]] if "ask" in turn else []
                    says += [turn["say"]] if "say" in turn else []
    return asks, says


def _read(asks: list[str], says: list[str]) -> tuple[list, list]:
    """How each question and each message of small talk is read: MEMORY, MAYBE or None."""
    return [intent.question_kind(m) for m in asks], [intent.question_kind(m) for m in says]


def ablation() -> list[dict]:
    """Each rule left out in turn (the last, which decides what nothing else did, stays), beside all of them."""
    groups = {"own": _turns(OWN), "held out": _turns(HELD_OUT)}
    rules = intent.RULES
    rows = []
    try:
        for left_out in (None, *rules[:-1]):
            intent.RULES = tuple(rule for rule in rules if rule is not left_out)
            row = {"left out": left_out.name if left_out else "(none)", "corpus": corpus(CORPUS)["as labelled"]}
            for name, (asks, says) in groups.items():
                row[name] = _read(asks, says)
            rows.append(row)
    finally:
        intent.RULES = rules
    return rows


def _changed(kinds: list, base: list) -> int:
    return sum(kind != was for kind, was in zip(kinds, base, strict=True))


def main() -> None:
    rows = ablation()
    base = rows[0]
    for name in ("own", "held out"):
        asks, says = base[name]
        tried, talk = sum(k is not None for k in asks), sum(k == intent.MEMORY for k in says)
        print(f"{name}: {len(asks)} questions ({tried} tried), {len(says)} small talk ({talk} read as MEMORY)")
    print(f"corpus: {base['corpus']} read as labelled")
    print("Each rule left out: the corpus's messages read as labelled (change), and the chat sets' questions and")
    print("small talk read otherwise than with every rule (MEMORY, MAYBE or None changed).")
    print(f"{'left out':52} {'corpus':>7} {'own asks':>9} {'own talk':>9} {'held asks':>10} {'held talk':>10}")
    for row in rows[1:]:
        cells = [row["corpus"] - base["corpus"]]
        for name in ("own", "held out"):
            cells += [_changed(row[name][0], base[name][0]), _changed(row[name][1], base[name][1])]
        widths = (9, 9, 10, 10)
        changed = " ".join(f"{cell:>{width}}" for cell, width in zip(cells[1:], widths, strict=True))
        print(f"{row['left out'][:52]:52} {cells[0]:>+7} {changed}")


if __name__ == "__main__":
    main()
