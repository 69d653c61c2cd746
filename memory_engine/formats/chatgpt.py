"""A ChatGPT data export: `conversations.json` (or the export's zip holding it), a JSON array of
conversations.

Each conversation keeps its messages as a tree (`mapping`: node id -> {message, parent, children}), since
an edited message or a regenerated answer starts a branch; `current_node` is the leaf of the branch the
person last saw. That branch is followed from the root, in order. Only what the person and the assistant
said is kept: system, tool and hidden messages, and content that is not text (the model's reasoning, browsing
and code output), are left out; an image or a file in a message is named in its text ("[image]").
"""

from memory_engine.formats.common import ASSISTANT, USER, Conversation, FormatError, Message, source_id, titled, when

KEYS = frozenset({"mapping"})  # what a conversation of this format has, and no other format's
TEXT_CONTENT = frozenset({"text", "multimodal_text"})
NON_TEXT_PART = {"image_asset_pointer": "[image]", "audio_asset_pointer": "[audio]", "file": "[file]"}


def _text(content: object, where: str) -> str:
    if not isinstance(content, dict):
        raise FormatError("a message's content is an object with a content_type", where)
    kind = content.get("content_type")
    if kind not in TEXT_CONTENT:
        return ""  # reasoning, browsing, code and its output: not what was said
    parts = content.get("parts")
    if parts is None:
        return ""
    if not isinstance(parts, list):
        raise FormatError("a text content's parts are a list", where)
    texts = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str):  # a voice message's transcript
                texts.append(part["text"])
            else:
                texts.append(NON_TEXT_PART.get(str(part.get("content_type")), "[attachment]"))
    return "\n".join(text for text in texts if text.strip())


def _node_id(value: object, what: str, where: str) -> str | None:
    """A node's id as the tree names it (a string), or None for none."""
    if value is None or isinstance(value, str):
        return value
    raise FormatError(f"{what} is a node's id (a string), not {type(value).__name__}", where)


def _branch(mapping: dict, current: object, where: str) -> list[dict]:
    """The nodes from the root to `current` (or, without it, along each node's last child). Each node is
    visited at most once each way, so a tree that loops is refused, not walked for ever."""
    current = _node_id(current, "current_node", where)
    if current is not None and current not in mapping:
        raise FormatError(f"current_node {current[:40]!r} is not in the mapping", where)
    if current is None:
        roots = [key for key, node in mapping.items() if isinstance(node, dict) and not node.get("parent")]
        if not roots:
            return []
        current, seen = roots[0], {roots[0]}
        while True:
            node = mapping[current]
            children = node.get("children") if isinstance(node, dict) else None
            if not children:
                break
            if not isinstance(children, list):
                raise FormatError(f"node {current[:40]!r}: its children are a list of ids", where)
            last = _node_id(children[-1], f"node {current[:40]!r}: a child", where)
            if last not in mapping:
                break
            if last in seen:
                raise FormatError("the message tree has a cycle", where)
            seen.add(last)
            current = last
    path, seen = [], set()
    while current is not None:
        if current in seen:
            raise FormatError("the message tree has a cycle", where)
        seen.add(current)
        node = mapping.get(current)
        if not isinstance(node, dict):
            raise FormatError(f"node {current[:40]!r} is missing or not an object", where)
        path.append(node)
        current = _node_id(node.get("parent"), f"node {current[:40]!r}: its parent", where)
    return path[::-1]


def conversation(raw: object, number: int) -> Conversation:
    """One conversation of the export; `number` (from 1) places it in errors. Raises FormatError."""
    where = f"conversation {number}"
    if not isinstance(raw, dict) or not isinstance(raw.get("mapping"), dict):
        raise FormatError("a ChatGPT conversation is an object with a mapping of its messages", where)
    title, where = titled(raw.get("title"), number)
    key = raw.get("conversation_id") or raw.get("id")
    found = Conversation(
        key=str(key) if isinstance(key, str | int) else str(number),
        title=title,
        created=when(raw.get("create_time"), where),
    )
    for node in _branch(raw["mapping"], raw.get("current_node"), where):
        message = node.get("message")
        if message is None:
            continue
        if not isinstance(message, dict):
            raise FormatError("a message is an object", f"{where}, message {str(node.get('id'))[:40]!r}")
        spot = f"{where}, message {str(node.get('id') or message.get('id'))[:40]!r}"
        author = message.get("author")
        role = author.get("role") if isinstance(author, dict) else None
        metadata = message.get("metadata") if isinstance(message.get("metadata"), dict) else {}
        if role not in (USER, ASSISTANT) or metadata.get("is_visually_hidden_from_conversation"):
            continue
        if message.get("recipient") not in (None, "all"):
            continue  # the assistant calling a tool
        text = _text(message.get("content"), spot)
        found.messages.append(
            Message(
                role=role,
                text=text,
                time=when(message.get("create_time"), spot),
                key=source_id(message.get("id") or node.get("id"), spot),
            )
        )
    return found
