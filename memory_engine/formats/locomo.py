"""Reading the LoCoMo benchmark (Maharana et al., ACL 2024): samples, turns and cleaned evidence ids.

Used by the lexical-search test and later by the engine's evaluation. The data format and its quirks are
described in /work/shared/data/locomo/README.md. Only ``load_samples`` does I/O (one JSON read).
"""

import json
import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime, timedelta
from os import PathLike
from typing import Any, NamedTuple

__all__ = [
    "CATEGORY_NAMES",
    "LocomoPage",
    "Turn",
    "clean_evidence",
    "iter_pages",
    "iter_turns",
    "load_samples",
    "parse_session_datetime",
    "turn_document",
]

# Official LoCoMo category ids; later papers often mislabel them, so the names travel with the ids.
CATEGORY_NAMES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}

_SESSION_KEY = re.compile(r"session_(\d+)")
# "D11:26", and the malformed "D:11:26" (stray colon) and "D30:05" (zero-padded turn).
_EVIDENCE_ID = re.compile(r"D:?(\d+):(\d+)")


class Turn(NamedTuple):
    dia_id: str
    speaker: str
    text: str
    session_no: int
    session_datetime: str


def load_samples(path: str | PathLike[str]) -> list[dict[str, Any]]:
    """Read a LoCoMo JSON file (a list of samples) and return it unchanged. Read-only; safe to repeat."""
    with open(path, encoding="utf-8") as handle:
        samples = json.load(handle)
    if not isinstance(samples, list):
        raise ValueError(f"{path}: expected a JSON list of LoCoMo samples, got {type(samples).__name__}")
    return samples


def iter_turns(sample: dict[str, Any], *, with_captions: bool = True) -> Iterator[Turn]:
    """Yield every turn of ``sample`` as ``Turn(dia_id, speaker, text, session_no, session_datetime)``,
    sessions in numeric order, turns in conversation order.

    Sessions come from the ``session_N`` keys that hold turns, not from the ``session_N_date_time`` keys
    (conv-26 has date keys for sessions that do not exist). With ``with_captions`` the caption of a
    shared image is appended to the text ("text caption"), as in the README's baselines: the caption is
    often where the answer is. ``session_datetime`` is the raw string ("1:56 pm on 8 May, 2023") or ""
    when missing. Pure; repeating it yields the same turns.
    """
    conversation = sample["conversation"]
    sessions = []
    for key, value in conversation.items():
        match = _SESSION_KEY.fullmatch(key)
        if match and isinstance(value, list):
            sessions.append((int(match.group(1)), value))
    for session_no, turns in sorted(sessions, key=lambda item: item[0]):
        when = conversation.get(f"session_{session_no}_date_time") or ""
        for turn in turns:
            text = turn.get("text") or ""
            caption = turn.get("blip_caption")
            if with_captions and caption:
                text = f"{text} {caption}"
            yield Turn(turn["dia_id"], turn["speaker"], text, session_no, when)


def turn_document(turn: Turn) -> str:
    """The text a retriever indexes for a turn: "Speaker: text" (the README's baseline format). Pure."""
    return f"{turn.speaker}: {turn.text}"


def clean_evidence(ids: Iterable[str], known: set[str]) -> list[str]:
    """Normalise a question's evidence ids and keep those naming a turn in ``known``.

    Splits entries on ";" and whitespace ("D8:6; D9:17"), repairs "D:11:26" -> "D11:26" and
    "D30:05" -> "D30:5", drops anything else malformed ("D") or unknown, and removes repeats while keeping
    the first-seen order. Pure; cleaning an already clean list returns it unchanged.
    """
    cleaned: list[str] = []
    for entry in ids:
        for part in re.split(r"[;\s]+", str(entry)):
            match = _EVIDENCE_ID.fullmatch(part)
            if not match:
                continue
            dia_id = f"D{int(match.group(1))}:{int(match.group(2))}"
            if dia_id in known and dia_id not in cleaned:
                cleaned.append(dia_id)
    return cleaned


class LocomoPage(NamedTuple):
    """One QA page made from LoCoMo turns: speaker_a speaks as the user, speaker_b as the assistant."""

    user_input: str
    agent_response: str
    timestamp: datetime
    dia_ids: list[str]


def parse_session_datetime(value: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> an aware UTC datetime. Raises ValueError for another format."""
    return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def _turn_text(turn: dict[str, Any]) -> str:
    text = (turn.get("text") or "").strip()
    if turn.get("blip_caption"):
        text = f"{text} [shares a photo: {turn['blip_caption']}]".strip()
    return text


def iter_pages(sample: dict[str, Any]) -> Iterator[LocomoPage]:
    """The conversation as QA pages, in order, as the reference's evaluation mapped it: a speaker_a
    turn and the speaker_b turn after it make one page. A turn with no partner (two turns of the same
    speaker in a row) makes a page with the other side empty. Turns of one session are one minute apart
    from the session's date. Pure.
    """
    conversation = sample["conversation"]
    speaker_a = conversation["speaker_a"]
    sessions = sorted(
        (int(m.group(1)), v)
        for k, v in conversation.items()
        if (m := _SESSION_KEY.fullmatch(k)) and isinstance(v, list)
    )
    for session_no, turns in sessions:
        start = parse_session_datetime(conversation[f"session_{session_no}_date_time"])
        pending: dict[str, Any] | None = None  # a speaker_a turn waiting for its answer
        pending_index = 0
        for i, turn in enumerate(turns):
            if turn["speaker"] == speaker_a:
                if pending is not None:
                    yield LocomoPage(
                        _turn_text(pending), "", start + timedelta(minutes=pending_index), [pending["dia_id"]]
                    )
                pending, pending_index = turn, i
            elif pending is not None:
                yield LocomoPage(
                    _turn_text(pending),
                    _turn_text(turn),
                    start + timedelta(minutes=pending_index),
                    [pending["dia_id"], turn["dia_id"]],
                )
                pending = None
            else:
                yield LocomoPage("", _turn_text(turn), start + timedelta(minutes=i), [turn["dia_id"]])
        if pending is not None:
            yield LocomoPage(_turn_text(pending), "", start + timedelta(minutes=pending_index), [pending["dia_id"]])
