"""A Claude data export: `conversations.json`, a JSON array of conversations, each with its
`chat_messages` in order (sender "human" or "assistant", the text, the time it was sent). A message's text is
its `text`, or the text blocks of its `content`; its attachments and files are named ("[file: notes.pdf]").
"""

from memory_engine.formats.common import ASSISTANT, USER, Conversation, FormatError, Message, source_id, titled, when

KEYS = frozenset({"chat_messages"})
SENDERS = {"human": USER, "assistant": ASSISTANT}


def _text(message: dict, where: str) -> str:
    text = message.get("text")
    if not isinstance(text, str) or not text.strip():
        blocks = message.get("content")
        if blocks is not None and not isinstance(blocks, list):
            raise FormatError("a message's content is a list of blocks", where)
        text = "\n".join(
            block["text"] for block in blocks or () if isinstance(block, dict) and isinstance(block.get("text"), str)
        )
    names = []
    for listed in ("attachments", "files"):
        for item in message.get(listed) or ():
            if isinstance(item, dict):
                names.append(str(item.get("file_name") or item.get("name") or "attachment")[:100])
    return "\n".join([text, *(f"[file: {name}]" for name in names)]).strip()


def conversation(raw: object, number: int) -> Conversation:
    """One conversation of the export; `number` (from 1) places it in errors. Raises FormatError."""
    where = f"conversation {number}"
    if not isinstance(raw, dict) or not isinstance(raw.get("chat_messages"), list):
        raise FormatError("a Claude conversation is an object with a list of chat_messages", where)
    title, where = titled(raw.get("name"), number)
    found = Conversation(key=str(raw.get("uuid") or number), title=title, created=when(raw.get("created_at"), where))
    for place, message in enumerate(raw["chat_messages"], start=1):
        spot = f"{where}, message {place}"
        if not isinstance(message, dict):
            raise FormatError("a message is an object", spot)
        role = SENDERS.get(message.get("sender"))
        if role is None:
            raise FormatError(
                f"a message's sender is human or assistant, not {str(message.get('sender'))[:20]!r}", spot
            )
        found.messages.append(
            Message(
                role=role,
                text=_text(message, spot),
                time=when(message.get("created_at"), spot),
                key=source_id(message.get("uuid") or place, spot),
            )
        )
    return found
