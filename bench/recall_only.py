"""Answers from memory alone: a conversation set's questions answered by recall (engine/recall.py), the
person's turns stored without a reply, the space consolidated after each turn with no key (the bundled
model's extraction: their own words). No model writes anything, so a set of 20 conversations takes
seconds, not minutes: for deciding how recall chooses what to quote, on the same sets and counts as
bench/chat_quality.py (facts recalled; never-told questions said to be unknown, or guessed with a quote).
A question recall leaves to the model (small talk) counts as unanswered. Every other message is read
by recall too, as a chat reply would: one it answers with a quote is small talk answered with the person's
words ("How is your day going?" -> "you told me ..."), which no reply should be.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.utils import timezone

from bench.chat_quality import found, load_conversations, says_not_told
from memory_engine.engine import recall
from memory_engine.services import spoken_curation
from memory_engine.services.consolidation import ConsolidationRequest, run_consolidation
from memory_engine.services.conversation import turn_add
from memory_engine.services.spaces import assistant_create, space_get, user_create

TURN_MINUTES = 2


@dataclass
class Answer:
    conversation: str
    asked: str
    text: str  # "" when recall left the question to the model
    expect: list[str] | None
    not_told: bool
    small_talk: bool = False  # a message of the set that asks nothing of the memory
    read_as: str = ""  # the rule that read it (language/intent.py), when recall answered
    memory_reply: str = ""  # the reply to a request to the memory (services/spoken_curation.py), carried out

    @property
    def recalled(self) -> bool:
        return bool(self.expect) and found(self.text, self.expect)

    @property
    def said_not_told(self) -> bool:
        return says_not_told(self.text)

    @property
    def guessed(self) -> bool:
        return self.not_told and bool(self.text) and not self.said_not_told


def run(path: Path) -> list[Answer]:
    """Every question of the set at `path`, answered as recall would, each conversation in a space of its
    own (memory users named ro-<run>-...)."""
    assistant_create(assistant_id="recall-only", name="Helper", persona="A friendly personal assistant.")
    run_id = uuid.uuid4().hex[:8]
    answers = []
    for conversation in load_conversations(path):
        user_id = f"ro-{run_id}-{conversation['id']}"[:100]
        user_create(user_id=user_id)
        space = space_get(user_id=user_id, assistant_id="recall-only")
        when = timezone.now() - timedelta(days=120)
        for session in conversation["sessions"]:
            when += timedelta(days=session.get("days_after_previous", 0))
            for turn in session["turns"]:
                when += timedelta(minutes=TURN_MINUTES)
                said = turn.get("say") or turn["ask"]
                # As a chat reply: a request to the memory is carried out, not answered (services/conversation.py)
                planned = spoken_curation.plan(space, said, now=when, replying=True)
                found_answer = None if planned is not None else recall.answer(space, said, now=when)
                answers.append(
                    Answer(
                        conversation=conversation["id"],
                        asked=said,
                        # a question beside a request is answered in the request's reply
                        text=found_answer.text if found_answer else (planned.answered if planned else ""),
                        expect=turn.get("expect"),
                        not_told=bool(turn.get("not_told")),
                        small_talk="ask" not in turn,
                        read_as=found_answer.read_as if found_answer else ("memory request" if planned else ""),
                        memory_reply=planned.text if planned else "",
                    )
                )
                turn_add(space=space, user_input=said, agent_response="", timestamp=when, planned=planned)
                run_consolidation(ConsolidationRequest(space.pk, retry_now=True))
    return answers


def summary(label: str, answers: list[Answer]) -> dict:
    asks = [a for a in answers if a.expect]
    never = [a for a in answers if a.not_told]
    small_talk = [a for a in answers if a.small_talk]
    return {
        "set": label,
        "facts recalled": f"{sum(a.recalled for a in asks)}/{len(asks)}",
        "never told, said so": f"{sum(a.said_not_told for a in never)}/{len(never)}",
        "never told, guessed with a quote": sum(a.guessed for a in never),
        "never told, left to the model": sum(not a.text for a in never),
        "small talk answered with a quote": f"{sum(bool(a.text) for a in small_talk)}/{len(small_talk)}",
    }


def small_talk_quoted(answers: list[Answer]) -> list[Answer]:
    """The messages asking nothing of the memory that recall answered with a quote."""
    return [a for a in answers if a.small_talk and a.text]
