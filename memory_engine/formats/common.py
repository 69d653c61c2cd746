"""What every format is read into: conversations of messages, and facts; and how messages become turns."""

import math
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime

from memory_engine import inputs
from memory_engine.config import memory_settings
from memory_engine.errors import MemoryInputError

USER, ASSISTANT = "user", "assistant"
CUT_MARK = " [...]"
# A turn holds at most this many messages: a longer run of one side's messages (a file of a million "hi"s
# in a row) is split into turns of this many, so that a turn is never held larger than this.
MAX_TURN_MESSAGES = 1000


class FormatError(MemoryInputError):
    """A file that is not what its format says: `where` names the place ("conversation 3 ('Trip'),
    message 5"), and the message says what was expected there."""

    def __init__(self, message: str, where: str = "") -> None:
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


@contextmanager
def refused_at(where: str) -> Iterator[None]:
    """An `inputs` check's refusal (a MemoryInputError) raised inside, as a FormatError saying where."""
    try:
        yield
    except FormatError:
        raise
    except MemoryInputError as error:
        raise FormatError(str(error), where) from None


def source_id(value: object, where: str) -> str:
    """The id a file gives a conversation, a message or a memory, as the import keeps it (in the working
    copy, and hashed into what a re-import is recognised by): inputs.source_id, refused saying where."""
    with refused_at(where):
        return inputs.source_id(str(value))


@dataclass(frozen=True)
class Message:
    role: str  # USER or ASSISTANT; other roles (system, tool) are skipped by the readers
    text: str
    time: datetime | None
    key: str  # the message's id in its source, or its place there


@dataclass
class Conversation:
    key: str  # the conversation's id in its source, or its place in the file
    title: str
    created: datetime | None  # None: its first message's time
    # A list, or (a conversation that is the whole file) an iterator read once, a message at a time.
    messages: Iterable[Message] = field(default_factory=list)


@dataclass(frozen=True)
class Fact:
    key: str
    text: str
    time: datetime | None
    metadata: dict


@dataclass(frozen=True)
class Turn:
    """What a page stores: the person's message and the replies after it (either may be empty, not both)."""

    user_input: str
    agent_response: str
    time: datetime | None
    keys: tuple[str, ...]  # the messages' keys, in order: what makes a re-import store nothing twice
    cut: bool  # a side was longer than MAX_TURN_CHARS and was shortened


def titled(title: object, number: int) -> tuple[str, str]:
    """A conversation's title (or "") and how errors name it: "conversation 3 ('Trip to Lisbon')"."""
    title = title if isinstance(title, str) else ""
    return title, f"conversation {number} ({title[:40]!r})" if title else f"conversation {number}"


def when(value: object, where: str) -> datetime | None:
    """A time as sources give it: seconds since 1970 (a number), or ISO 8601 (a string; "Z" and no offset
    are read as UTC). None for none. Raises FormatError for anything else."""
    if value is None or value == "":
        return None
    try:
        if isinstance(value, bool):
            raise ValueError
        if isinstance(value, int | float) or type(value).__name__ == "Decimal":
            seconds = float(value)
            if not math.isfinite(seconds):
                raise ValueError
            found = datetime.fromtimestamp(seconds, UTC)
        elif isinstance(value, str):
            found = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
            if found.tzinfo is None:
                found = found.replace(tzinfo=UTC)
        else:
            raise ValueError
    except (ValueError, OverflowError, OSError):
        raise FormatError(f"a time is seconds since 1970 or an ISO 8601 date, not {str(value)[:40]!r}", where) from None
    if not 1900 <= found.year <= 9000:
        raise FormatError(f"the time {found.isoformat()} is outside the years 1900-9000", where)
    return found


def clip(text: str, limit: int | None = None) -> tuple[str, bool]:
    """`text` within `limit` (MAX_TURN_CHARS), and whether it had to be shortened (marked with CUT_MARK)."""
    limit = memory_settings().max_turn_chars if limit is None else limit
    if len(text) <= limit:
        return text, False
    return text[: limit - len(CUT_MARK)].rstrip() + CUT_MARK, True


def turns_in(messages: Iterable[Message]) -> Iterator[Turn]:
    """The turns of a conversation, as its messages are read: each message of the person with the
    assistant's replies after it (several replies joined); the person's messages in a row are joined too,
    and a reply with no message before it (an assistant's greeting) is a turn of its own. A turn's time is
    its first message's. A turn is held until it closes: at most MAX_TURN_MESSAGES messages, and of each
    side's text at most MAX_TURN_CHARS and the message that passed them (the rest is cut, never kept)."""
    limit = memory_settings().max_turn_chars
    said: list[Message] = []
    replies: list[Message] = []
    sizes = [0, 0]  # characters held of each side; past the limit a message is kept only as its key

    def close() -> Turn:
        user_input, user_cut = clip("\n\n".join([m.text for m in said]), limit)
        agent_response, agent_cut = clip("\n\n".join([m.text for m in replies]), limit)
        first = (said or replies)[0]
        keys = tuple(m.key for m in (*said, *replies))
        said.clear()
        replies.clear()
        sizes[:] = [0, 0]
        return Turn(user_input, agent_response, first.time, keys, user_cut or agent_cut)

    for message in messages:
        if not message.text.strip():
            continue
        if (message.role == USER and replies) or len(said) + len(replies) == MAX_TURN_MESSAGES:
            yield close()
        side = 0 if message.role == USER else 1
        if sizes[side] > limit:  # the side is cut already: what it adds is never shown
            message = Message(message.role, "", message.time, message.key)
        sizes[side] += len(message.text) + 2
        (said if side == 0 else replies).append(message)
    if said or replies:
        yield close()


def turns_of(messages: Iterable[Message]) -> list[Turn]:
    """The turns of a conversation (turns_in), as a list."""
    return list(turns_in(messages))
