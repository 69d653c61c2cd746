"""Histories people bring from other assistants and memory systems, read in their own formats.

A file's format is recognised from its content (`recognise`): a ChatGPT export (its conversations.json, or
the zip holding it), a Claude export, plain chat messages (a conversation a file, an array of them, or one a
line), facts from a memory system such as mem0, or this project's own transcript. It is read as a stream
(ijson, or a line at a time), one conversation in memory at once, however large the file: `scan` reads it
whole to check it and list what it holds, before anything is stored, and `records` reads it again for the
conversations the person chose. Errors say what was expected and where ("conversation 3 ('Trip to
Lisbon'), message 'a1b2': ...").
"""

import json
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import BinaryIO

import ijson

from memory_engine.formats import chatgpt, claude, memories, messages
from memory_engine.formats.common import Conversation, Fact, FormatError, Message, Turn, turns_of, when

CHATGPT, CLAUDE, MESSAGES, MEMORIES, TRANSCRIPT, LOCOMO = (
    "chatgpt",
    "claude",
    "messages",
    "memories",
    "transcript",
    "locomo",
)
LABELS = {
    CHATGPT: "a ChatGPT export",
    CLAUDE: "a Claude export",
    MESSAGES: "chat messages",
    MEMORIES: "memories of another memory system",
    TRANSCRIPT: "a transcript",
    LOCOMO: "LoCoMo samples",
}
EXPECTED = (
    "expected a ChatGPT or Claude export (conversations.json, or ChatGPT's zip), chat messages "
    '([{"role", "content"}], an array of such conversations, or one a line), mem0-style memories '
    '({"results": [{"memory", ...}]}) or a transcript ([{"user_input", "agent_response"}])'
)
LINE_LIMIT = 1 << 20  # a line of JSON Lines; a longer first line is read as a whole JSON file

__all__ = ["Conversation", "Fact", "FormatError", "Message", "Scan", "Turn", "recognise", "records", "scan", "turns_of"]


@contextmanager
def opened(path: str | Path) -> Iterator[BinaryIO]:
    """The file, or the conversations.json inside a zip (ChatGPT's export)."""
    if zipfile.is_zipfile(path):
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == "conversations.json"]
            if not names:
                raise FormatError("the zip holds no conversations.json (a ChatGPT export holds one)")
            with archive.open(min(names, key=len)) as stream:
                yield stream
    else:
        with open(path, "rb") as stream:
            yield stream


def _layout(path: str | Path) -> str:
    """ "lines" (JSON Lines: two or more lines, each a whole value), "array" or "object"."""
    with opened(path) as stream:
        first = stream.readline(LINE_LIMIT)
        while first and not first.strip():
            first = stream.readline(LINE_LIMIT)
        start = first.lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
        if start not in (b"[", b"{"):
            raise FormatError(f"the file is not JSON: {EXPECTED}")
        second = stream.readline(LINE_LIMIT)
        while second and not second.strip():
            second = stream.readline(LINE_LIMIT)
        if first.endswith(b"\n") and second.strip():
            try:
                json.loads(first)
                json.loads(second)
                return "lines"
            except RecursionError:
                return "lines"  # a whole line, nested too deeply to decode: _check_depth says so
            except ValueError:
                pass
    return "array" if start == b"[" else "object"


def _object_list(path: str | Path) -> str | None:
    """The key of a top-level object's list of memories ("results", "memories"), or None."""
    with opened(path) as stream:
        for prefix, event, value in ijson.parse(stream):
            if prefix == "" and event == "map_key" and value in memories.LIST_FIELDS:
                return value
            if prefix == "" and event == "end_map":
                return None
    return None


def _raw(path: str | Path, layout: str, list_key: str | None) -> Iterator[object]:
    """The file's items, streamed: each line, each array item, each memory of the object's list, or the
    object itself."""
    try:
        with opened(path) as stream:
            if layout == "lines":
                for number, line in enumerate(iter(lambda: stream.readline(LINE_LIMIT + 1), b""), start=1):
                    if len(line) > LINE_LIMIT:
                        raise FormatError(f"a line of JSON Lines is at most {LINE_LIMIT} bytes", f"line {number}")
                    if line.strip():
                        try:
                            yield json.loads(line)
                        except ValueError as error:
                            raise FormatError(f"not JSON: {error}", f"line {number}") from None
            elif layout == "array":
                yield from ijson.items(stream, "item", use_float=True)
            elif list_key:
                yield from ijson.items(stream, f"{list_key}.item", use_float=True)
            else:
                yield from ijson.items(stream, "", use_float=True)
    except ijson.JSONError as error:
        raise FormatError(f"the JSON is broken ({error}); {EXPECTED}") from None
    except (zipfile.BadZipFile, UnicodeDecodeError) as error:
        raise FormatError(f"the file cannot be read: {error}") from None


def _format_of(item: object, layout: str) -> str:
    if isinstance(item, dict):
        if item.keys() >= chatgpt.KEYS:
            return CHATGPT
        if item.keys() >= claude.KEYS:
            return CLAUDE
        if "conversation" in item and "qa" in item:
            return LOCOMO
        if "user_input" in item or "agent_response" in item:
            return TRANSCRIPT
        if memories.is_fact(item):
            return MEMORIES
        if messages.is_message(item) or isinstance(item.get("messages"), list):
            return MESSAGES
    if isinstance(item, list) and (not item or messages.is_message(item[0])):
        return MESSAGES
    raise FormatError(
        f"the first {'line' if layout == 'lines' else 'item'} is none of the formats read here: {EXPECTED}"
    )


@dataclass(frozen=True)
class Reading:
    format: str
    layout: str
    list_key: str | None
    one_conversation: bool  # an array of messages: the file is one conversation


MAX_DEPTH = 64  # arrays and objects within each other; a ChatGPT export nests about 10 deep
# What a file's listing may hold (it is kept, and sent to the page to choose from): a heavy ChatGPT user has
# a few thousand conversations, with ids of 36 characters.
MAX_CONVERSATIONS = 50_000
MAX_KEY = 200


def _check_depth(path: str | Path, layout: str) -> None:
    """Refuse a file nested deeper than MAX_DEPTH, in one pass of the C parser without building anything:
    ijson names each value by its path from the top, so a 400 KB file of nested brackets would take it
    hundreds of gigabytes of names, and Python's json, used for a line of JSON Lines, recurses."""
    depth = 0
    try:
        with opened(path) as stream:
            for event, _ in ijson.basic_parse(stream, multiple_values=layout == "lines"):
                if event in ("start_map", "start_array"):
                    depth += 1
                    if depth > MAX_DEPTH:
                        raise FormatError(f"the JSON is nested more than {MAX_DEPTH} deep")
                elif event in ("end_map", "end_array"):
                    depth -= 1
    except ijson.JSONError as error:
        raise FormatError(f"the JSON is broken ({error}); {EXPECTED}") from None
    except (zipfile.BadZipFile, UnicodeDecodeError) as error:
        raise FormatError(f"the file cannot be read: {error}") from None


def recognise(path: str | Path) -> Reading:
    """The file's format, from its content. Raises FormatError when it is none of them, or nested too
    deeply to read safely."""
    layout = _layout(path)
    _check_depth(path, layout)
    list_key = _object_list(path) if layout == "object" else None
    first = next(iter(_raw(path, layout, list_key)), None)
    if first is None:
        raise FormatError(f"the file holds nothing: {EXPECTED}")
    found = MEMORIES if list_key else _format_of(first, layout)
    one = found == MESSAGES and (messages.is_message(first) and layout == "array")
    return Reading(found, layout, list_key, one)


def _transcript(raw: object, number: int) -> Conversation:
    where = f"turn {number}"
    if not isinstance(raw, dict):
        raise FormatError('a transcript turn is an object with "user_input" and "agent_response"', where)
    time = when(raw.get("timestamp"), where)
    conversation = Conversation(key="transcript", title="", created=time)
    for role, name in (("user", "user_input"), ("assistant", "agent_response")):
        text = raw.get(name, "")
        if not isinstance(text, str):
            raise FormatError(f"{name} is a string", where)
        conversation.messages.append(Message(role=role, text=text, time=time, key=f"{number}.{role}"))
    return conversation


def records(path: str | Path, reading: Reading | None = None) -> Iterator[Conversation | Fact]:
    """The file's conversations (or facts), in order, each checked. Raises FormatError at the first
    problem; an item of another format than the first's is one."""
    reading = reading or recognise(path)
    if reading.format == LOCOMO:
        raise FormatError("LoCoMo samples are imported by their sample id (the import's LoCoMo choice)")
    items = _raw(path, reading.layout, reading.list_key)
    if reading.one_conversation:
        yield messages.conversation(list(items), 1)
        return
    if reading.format == TRANSCRIPT:
        whole = Conversation(key="transcript", title="", created=None)
        for number, raw in enumerate(items, start=1):
            whole.messages += _transcript(raw, number).messages
        whole.created = whole.messages[0].time if whole.messages else None
        yield whole
        return
    read = {CHATGPT: chatgpt.conversation, CLAUDE: claude.conversation, MESSAGES: messages.conversation}
    for number, raw in enumerate(items, start=1):
        if reading.format == MEMORIES:
            yield memories.fact(raw, number)
            continue
        if _format_of(raw, reading.layout) != reading.format:
            raise FormatError(f"not {LABELS[reading.format]} like the first", f"item {number}")
        yield read[reading.format](raw, number)


@dataclass(frozen=True)
class Listed:
    """A conversation as the person chooses among them."""

    key: str
    title: str
    created: datetime | None
    last: datetime | None
    messages: int
    turns: int


@dataclass
class Scan:
    format: str
    conversations: list[Listed] = field(default_factory=list)
    facts: int = 0
    turns: int = 0
    cut: int = 0  # turns with a side shortened to MAX_TURN_CHARS

    @property
    def label(self) -> str:
        return LABELS[self.format]


def scan(path: str | Path) -> Scan:
    """Read the whole file once, checking every item, and list what it holds. Raises FormatError."""
    reading = recognise(path)
    found = Scan(format=reading.format)
    keys: set[str] = set()
    for number, record in enumerate(records(path, reading), start=1):
        if isinstance(record, Fact):
            found.facts += 1
            continue
        if record.key in keys:
            raise FormatError(f"its id {record.key[:40]!r} is another conversation's too", f"conversation {number}")
        if len(record.key) > MAX_KEY:
            raise FormatError(f"its id is longer than {MAX_KEY} characters", f"conversation {number}")
        if len(found.conversations) == MAX_CONVERSATIONS:
            raise FormatError(f"a file holds at most {MAX_CONVERSATIONS:,} conversations; split it")
        keys.add(record.key)
        turns = turns_of(record.messages)
        title = record.title[:MAX_KEY]
        found.conversations.append(
            Listed(record.key, title, record.created, record.last, len(record.messages), len(turns))
        )
        found.turns += len(turns)
        found.cut += sum(turn.cut for turn in turns)
    return found
