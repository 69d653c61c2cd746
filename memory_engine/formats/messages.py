"""Plain chat messages, as OpenAI's chat API takes them: `[{"role": "user", "content": "..."}, ...]`.

One conversation a file (a JSON array of messages, or an object with "messages"), several (a JSON array of
such arrays or objects), or one a line (JSON Lines). A message may carry its time ("timestamp",
"created_at" or "time": ISO 8601 or seconds since 1970); its content is a string or a list of parts, whose
text parts are kept. System, developer and tool messages are left out.
"""

from memory_engine.formats.common import ASSISTANT, USER, Conversation, FormatError, Message, when

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


def conversation(raw: object, number: int) -> Conversation:
    """One conversation: a list of messages, or an object with "messages" (and perhaps "id", "title")."""
    where = f"conversation {number}"
    title, key, messages = "", str(number), raw
    if isinstance(raw, dict):
        title = raw.get("title") if isinstance(raw.get("title"), str) else ""
        key = str(raw.get("id") or number)
        messages = raw.get("messages")
    if not isinstance(messages, list):
        raise FormatError('a conversation is a list of {"role", "content"} messages', where)
    found = Conversation(key=key, title=title, created=None)
    for place, message in enumerate(messages, start=1):
        spot = f"{where}, message {place}"
        if not is_message(message):
            raise FormatError('a message is an object with "role" and "content"', spot)
        role = message["role"]
        if role in SKIPPED_ROLES:
            continue
        if role not in (USER, ASSISTANT):
            raise FormatError(f"a message's role is user or assistant (or system, tool), not {str(role)[:20]!r}", spot)
        time = next((message[name] for name in TIME_FIELDS if message.get(name) not in (None, "")), None)
        found.messages.append(
            Message(
                role=role,
                text=_text(message["content"], spot),
                time=when(time, spot),
                key=str(message.get("id") or place),
            )
        )
    found.created = found.messages[0].time if found.messages else None
    return found
