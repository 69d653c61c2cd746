"""Chat quality: how the assistant's replies read, over scripted conversations (data/chat_quality.json).

Each conversation is one user who tells the assistant a few facts, makes small talk and later asks about
those facts, some in a later session days afterwards, after the fact has left short-term memory. Every
turn goes through the real reply path (`jobs.conversation.reply`: retrieval, the guarded LLM call, the turn
stored, consolidation inline). The same questions are also asked of a space with no memory, as the
baseline. Per run it counts what a demo audience sees: replies at the token cap, loops, reply length and
time, whether an answer contains the fact it was told, and whether the assistant speaks as the user.
"""

from __future__ import annotations

import json
import re
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from django.utils import timezone

from memory_engine.jobs.consolidation import run_consolidation
from memory_engine.jobs.conversation import reply
from memory_engine.llm import LLM, chat_sampling
from memory_engine.llm.degeneration import most_repeated_ngram
from memory_engine.store.spaces import assistant_create, space_get, user_create

DATA = Path(__file__).parent / "data" / "chat_quality.json"
TURN_MINUTES = 2


@dataclass
class ReplyRecord:
    conversation: str
    said: str
    text: str
    seconds: float
    prompt_tokens: int
    completion_tokens: int
    at_cap: bool
    withheld: bool
    retried: bool
    max_ngram_repeats: int
    claims_identity: bool
    expect: list[str] | None = None  # an ask: the alternatives of the told fact
    found: bool | None = None


@dataclass
class RunResult:
    label: str
    memory: bool
    records: list[ReplyRecord] = field(default_factory=list)
    same_reply_conversations: int = 0

    def summary(self) -> dict:
        records = self.records
        warm = records[1:] or records  # the first reply also loads the model
        asks = [r for r in records if r.expect is not None]
        seconds = sorted(r.seconds for r in warm)
        tokens = [r.completion_tokens for r in records]
        return {
            "label": self.label,
            "memory": self.memory,
            "replies": len(records),
            "questions": len(asks),
            "at_cap": _share(r.at_cap for r in records),
            "looping (a 4-word sequence > 3 times)": _share(r.max_ngram_repeats > 3 for r in records),
            "max 4-gram repeats": max((r.max_ngram_repeats for r in records), default=0),
            "withheld": _share(r.withheld for r in records),
            "retried": _share(r.retried for r in records),
            "mean prompt tokens": round(statistics.fmean(r.prompt_tokens for r in records), 1) if records else 0,
            "mean tokens": round(statistics.fmean(tokens), 1) if tokens else 0,
            "p95 tokens": _p95(sorted(tokens)),
            "mean seconds": round(statistics.fmean(seconds), 2) if seconds else 0,
            "p95 seconds": round(_p95(seconds), 2),
            "fact recalled": _share(r.found for r in asks),
            "claims the user's identity": _share(r.claims_identity for r in records),
            "conversations with one reply to two questions": self.same_reply_conversations,
        }


def _share(flags) -> float:
    flags = list(flags)
    return round(sum(bool(f) for f in flags) / len(flags), 3) if flags else 0.0


def _p95(values: list[float]) -> float:
    if not values:
        return 0.0
    return values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]


def load_conversations(path: Path = DATA, limit: int | None = None) -> list[dict]:
    conversations = json.loads(path.read_text())["conversations"]
    return conversations[:limit] if limit else conversations


def found(text: str, expect: list[str]) -> bool:
    """Whether the reply contains any alternative of the fact (case-insensitive, on word boundaries)."""
    return any(re.search(rf"(?<!\w){re.escape(alt)}(?!\w)", text, re.IGNORECASE) for alt in expect)


def claims_identity(text: str, name: str, identity: list[str]) -> bool:
    """Whether the reply speaks as the user: "I'm Sam", "my name is Sam", "I'm a nurse", "I work as a
    nurse"."""
    text = text.replace("\u2019", "'")
    subjects = r"\b(?:i'm|i am|my name is|my name's|call me|i work as|i'm working as)\s+(?:an?\s+|the\s+)?"
    wanted = [re.escape(name), *(re.escape(word) for word in identity)]
    return re.search(subjects + r"(?:" + "|".join(wanted) + r")\b", text, re.IGNORECASE) is not None


def run(
    conversations: list[dict],
    *,
    llm: LLM,
    label: str,
    memory: bool = True,
    progress: Callable[[str], None] | None = None,
) -> RunResult:
    """Play every conversation through the reply path (`memory`), or ask only its questions, each of a
    fresh empty space (the baseline). Creates memory users named `cq-<run>-...`; changes nothing else."""
    result = RunResult(label=label, memory=memory)
    run_id = uuid.uuid4().hex[:8]
    assistant_create(assistant_id="chat-quality", name="Helper", persona="A friendly personal assistant.")
    start = timezone.now() - timedelta(days=120)
    for number, conversation in enumerate(conversations, 1):
        records = _play(conversation, llm=llm, run_id=run_id, memory=memory, start=start)
        result.records.extend(records)
        replies = {}
        for record in records:
            if record.expect is not None:
                replies.setdefault(" ".join(record.text.lower().split()), set()).add(record.said)
        if any(len(questions) > 1 for questions in replies.values()):
            result.same_reply_conversations += 1
        if progress:
            asks = [r for r in records if r.expect is not None]
            progress(
                f"{label}: {number}/{len(conversations)} {conversation['id']}: {sum(r.found for r in asks)}/{len(asks)}"
            )
    return result


def _play(conversation: dict, *, llm: LLM, run_id: str, memory: bool, start: datetime) -> list[ReplyRecord]:
    user_id = f"cq-{run_id}-{conversation['id']}"[:100]
    records = []
    when = start
    asked = 0
    for session in conversation["sessions"]:
        when += timedelta(days=session.get("days_after_previous", 0))
        for turn in session["turns"]:
            when += timedelta(minutes=TURN_MINUTES)
            if "say" in turn and not memory:
                continue
            said = turn.get("say") or turn["ask"]
            if memory:
                space = _space(user_id)
            else:  # each question of the baseline to a space that has never heard anything
                asked += 1
                space = _space(f"{user_id}-q{asked}")
            began = time.perf_counter()
            response = reply(space=space, query=said, llm=llm, timestamp=when, consolidate=False)
            seconds = time.perf_counter() - began
            # What a worker does after the turn, off the reply's clock.
            run_consolidation(space.pk, retry_now=True)
            _, repeats = most_repeated_ngram(response.text)
            expect = turn.get("expect")
            records.append(
                ReplyRecord(
                    conversation=conversation["id"],
                    said=said,
                    text=response.text,
                    seconds=round(seconds, 3),
                    prompt_tokens=response.prompt_tokens,
                    completion_tokens=response.completion_tokens,
                    at_cap=response.completion_tokens >= chat_sampling().max_tokens,
                    withheld=response.withheld,
                    retried=response.retried_because is not None,
                    max_ngram_repeats=repeats,
                    claims_identity=claims_identity(response.text, conversation["user_name"], conversation["identity"]),
                    expect=expect,
                    found=found(response.text, expect) if expect else None,
                )
            )
    return records


def _space(user_id: str):
    user_create(user_id=user_id)
    return space_get(user_id=user_id, assistant_id="chat-quality")


def write_json(results: list[RunResult], path: Path) -> None:
    path.write_text(
        json.dumps([{"summary": r.summary(), "records": [asdict(x) for x in r.records]} for r in results], indent=1)
    )


def markdown(results: list[RunResult]) -> str:
    """One column per run, one row per measure."""
    summaries = [r.summary() for r in results]
    rows = [key for key in summaries[0] if key != "label"]
    lines = ["| | " + " | ".join(s["label"] for s in summaries) + " |", "| --- |" + " --- |" * len(summaries)]
    for key in rows:
        lines.append(f"| {key} | " + " | ".join(str(s[key]) for s in summaries) + " |")
    return "\n".join(lines)
