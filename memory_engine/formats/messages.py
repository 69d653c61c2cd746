"""Plain chat messages, as OpenAI's chat API takes them: `[{"role": "user", "content": "..."}, ...]`.

One conversation a file (a JSON array of messages, or an object with "messages"), several (a JSON array of
such arrays or objects), or one a line (JSON Lines). A message may carry its time ("timestamp",
"created_at" or "time": ISO 8601 or seconds since 1970); its content is a string or a list of parts, whose
text parts are kept. System, developer and tool messages are left out. A conversation that is the whole
file is read a message at a time (`streamed`): a file of millions of messages is never held.
"""

from collections.abc import Iterable, Iterator

from memory_engine.formats.common import ASSISTANT, USER, Conversation, FormatError, Message, source_id, when

SKIPPED_ROLES = frozenset({"system", "developer", "tool", "function"})
TIME_FIELDS = ("timestamp", "created_at", "time")


def is_message(value: object) -> bool:
    return isinstance(value, dict) and "role" in value and "content" in value


def _text(content: object, where: str) -> str:
    if isinstance(content, str):
        return content
    if content is None:
        return ""
    if not isinstance(content, list):
        raise FormatError("a message's content is a string or a list of parts", where)
    texts = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif isinstance(part, dict):
            texts.append(f"[{str(part.get('type') or 'attachment')[:30]}]")
    return "\n".join(texts)


def _messages(raw: Iterable[object], where: str) -> Iterator[Message]:
    """The messages of a conversation, checked one at a time as they are read."""
    for place, message in enumerate(raw, start=1):
        if not isinstance(message, dict) or "role" not in message or "content" not in message:
            raise FormatError('a message is an object with "role" and "content"', f"{where}, message {place}")
        role = message["role"]
        if role != USER and role != ASSISTANT:
            if role in SKIPPED_ROLES:
                continue
            raise FormatError(
                f"a message's role is user or assistant (or system, tool), not {str(role)[:20]!r}",
                f"{where}, message {place}",
            )
        time = None
        for name in TIME_FIELDS:
            if message.get(name) not in (None, ""):
                time = when(message[name], f"{where}, message {place}")
                break
        content, key = message["content"], message.get("id")
        yield Message(
            role=role,
            text=content if isinstance(content, str) else _text(content, f"{where}, message {place}"),
            time=time,
            key=source_id(key, f"{where}, message {place}") if isinstance(key, str | int) else str(place),
        )


def conversation(raw: object, number: int) -> Conversation:
    """One conversation: a list of messages, or an object with "messages" (and perhaps "id", "title")."""
    where = f"conversation {number}"
    title, key, messages = "", str(number), raw
    if isinstance(raw, dict):
        title = raw.get("title") if isinstance(raw.get("title"), str) else ""
        key = str(raw["id"]) if isinstance(raw.get("id"), str | int) and raw.get("id") != "" else str(number)
        messages = raw.get("messages")
    if not isinstance(messages, list):
        raise FormatError('a conversation is a list of {"role", "content"} messages', where)
    found = Conversation(key=key, title=title, created=None, messages=list(_messages(messages, where)))
    found.created = found.messages[0].time if found.messages else None
    return found


def streamed(raw: Iterator[object], *, key: str = "1", title: str = "") -> Conversation:
    """The file's one conversation, its messages read and checked as they are iterated (once)."""
    return Conversation(key=key, title=title, created=None, messages=_messages(raw, "conversation 1"))
