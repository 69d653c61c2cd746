"""Reading the LongMemEval benchmark (Wu et al., ICLR 2025) in its published format, as LoCoMo samples.

Each question of LongMemEval comes with its own history: about 50 sessions of a person talking to an
assistant (`haystack_sessions`, with `haystack_dates` and `haystack_session_ids` beside them, not in date
order), the turns holding the evidence marked `has_answer`, the sessions holding it in
`answer_session_ids`, the day it is asked in `question_date`; an abstention question's id ends in `_abs`.
The data and its quirks: /work/shared/data/longmemeval/README.md.

`as_sample` makes one question a LoCoMo sample (formats/locomo.py), so the evaluation reads both
benchmarks the same way: the person is speaker_a, the assistant speaker_b, the sessions in date order
numbered from 1, a message's dialogue id "D<session>:<message>" (1-based); a message longer than
MAX_TURN_CHARS is cut as an import cuts it (formats.common.clip). Only `load_questions` does I/O.
"""

import gzip
import json
from datetime import UTC, datetime
from os import PathLike
from typing import Any

from memory_engine.formats.common import clip

__all__ = [
    "QUESTION_TYPES",
    "USER",
    "as_sample",
    "is_abstention",
    "load_questions",
    "parse_date",
]

QUESTION_TYPES = (
    "single-session-user",
    "single-session-assistant",
    "single-session-preference",
    "multi-session",
    "knowledge-update",
    "temporal-reasoning",
)
USER, ASSISTANT = "User", "Assistant"


def load_questions(path: str | PathLike[str]) -> list[dict[str, Any]]:
    """The questions of a LongMemEval file (JSON, or gzipped JSON when it ends in .gz), unchanged."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as handle:
        questions = json.load(handle)
    if not isinstance(questions, list):
        raise ValueError(f"{path}: expected a JSON list of LongMemEval questions, got {type(questions).__name__}")
    return questions


def parse_date(value: str) -> datetime:
    """'2023/05/30 (Tue) 10:18' -> an aware UTC datetime. Raises ValueError for another format."""
    day, _, time = value.strip().partition(" (")
    return datetime.strptime(f"{day} {time.partition(') ')[2]}", "%Y/%m/%d %H:%M").replace(tzinfo=UTC)


def is_abstention(question: dict[str, Any]) -> bool:
    """A question whose history does not hold the answer (its id ends in "_abs")."""
    return str(question["question_id"]).endswith("_abs")


def _locomo_date(when: datetime) -> str:
    # formats.locomo.parse_session_datetime's form: "1:56 pm on 8 May, 2023"
    return f"{when.strftime('%I:%M %p').lstrip('0').lower()} on {when.day} {when.strftime('%B, %Y')}"


def as_sample(question: dict[str, Any]) -> dict[str, Any]:
    """One LongMemEval question as a LoCoMo sample: "conversation" (speakers, sessions in date order, their
    dates), one "qa" (the question, its answer as a string, the has_answer turns as evidence, its type as the
    category), and what LongMemEval adds: "session_ids" (session number -> the haystack's id), "answer_sessions"
    (the numbers of `answer_session_ids`), "question_date" (ISO 8601), "abstention". Pure."""
    sessions = sorted(
        zip(question["haystack_dates"], question["haystack_session_ids"], question["haystack_sessions"], strict=True),
        key=lambda session: (parse_date(session[0]), session[1]),
    )
    conversation: dict[str, Any] = {"speaker_a": USER, "speaker_b": ASSISTANT}
    session_ids: dict[int, str] = {}
    evidence: list[str] = []
    for number, (date, session_id, messages) in enumerate(sessions, start=1):
        session_ids[number] = session_id
        conversation[f"session_{number}_date_time"] = _locomo_date(parse_date(date))
        turns = []
        for place, message in enumerate(messages, start=1):
            dia_id = f"D{number}:{place}"
            speaker = USER if message["role"] == "user" else ASSISTANT
            turns.append({"speaker": speaker, "dia_id": dia_id, "text": clip(str(message["content"]))[0]})
            if message.get("has_answer"):
                evidence.append(dia_id)
        conversation[f"session_{number}"] = turns
    wanted = set(question.get("answer_session_ids") or [])
    return {
        "sample_id": str(question["question_id"]),
        "conversation": conversation,
        "qa": [
            {
                "question": question["question"],
                "answer": str(question["answer"]),
                "evidence": evidence,
                "category": question["question_type"],
            }
        ],
        "session_ids": session_ids,
        "answer_sessions": [number for number, session_id in session_ids.items() if session_id in wanted],
        "question_date": parse_date(question["question_date"]).isoformat(),
        "abstention": is_abstention(question),
    }
