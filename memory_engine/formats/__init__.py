"""Histories people bring from other assistants and memory systems, read in their own formats.

A file's format is recognised from its content (`recognise`): a ChatGPT export (its conversations.json, or
the zip holding it), a Claude export, plain chat messages (a conversation a file, an array of them, or one a
line), facts from a memory system such as mem0, or this project's own transcript. It is read as a stream
(ijson, or a line at a time): a conversation of a ChatGPT or Claude export is held whole while it is read,
a conversation that is the whole file a message at a time (a UTF-8 byte-order mark that opens a file is read
as if it were not there, as "utf-8-sig" does). `scan` reads it whole once to check it and list what it
holds, before anything is stored, writing what an import will store to a working copy (`Record`s, a line
each) that the import then reads from wherever it stopped. Errors say what was expected and where
("conversation 3 ('Trip to Lisbon'), message 'a1b2': ...").

What a file may be is bounded before it is parsed (formats/shape.py): its nesting, its strings and numbers,
the size of what is built whole, and, for a zip, the bytes it unpacks to; so no file costs the parser more
than linear time or more memory than those bounds.
"""

import hashlib
import json
import zipfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from types import ModuleType
from typing import BinaryIO

import ijson

from memory_engine import inputs
from memory_engine.formats import chatgpt, claude, memories, messages
from memory_engine.formats.common import (
    Conversation,
    Fact,
    FormatError,
    Message,
    Turn,
    refused_at,
    source_id,
    turns_in,
    turns_of,
    when,
)
from memory_engine.formats.shape import BOM, Bounds, Shape, ShapeMeter

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
READ_BUFFER = 1 << 20  # ijson's: a token spanning its buffers is read again at each, so larger is cheaper
# yajl (ijson's C parser) writes a lone surrogate escaped in a string ("\\ud800") as "?", or pairs two high
# ones into another character: the text would be changed where it must be refused. A file the meter saw one
# in is read by ijson's Python parser, which keeps it as JSON says, for `inputs` to refuse where it is (about
# ten times slower; such a file is rare).
EXACT_PARSER = ijson.get_backend("python")

MAX_DEPTH = 64  # arrays and objects within each other; a ChatGPT export nests about 10 deep
MAX_STRING_BYTES = 8 << 20  # a message longer than MAX_TURN_CHARS is shortened anyway
MAX_TOKEN_BYTES = 100  # a number or literal: ChatGPT's times are 17 characters
# What is built whole: a conversation of a ChatGPT or Claude export (a tree must be whole to find its branch),
# a line, a message, a memory. A long ChatGPT conversation is a few megabytes.
MAX_VALUE_BYTES = 32 << 20
MAX_ZIP_ENTRIES = 100_000  # a ChatGPT export's zip holds its conversations, and a file a picture
ZIP_MAGIC = b"PK\x03\x04"  # what a zip starts with (a JSON file may end with what a zip ends with)
# What a file's listing may hold (it is kept, and sent to the page to choose from): a heavy ChatGPT user has
# a few thousand conversations, with ids of 36 characters (inputs.SOURCE_ID_CHARS at most).
MAX_CONVERSATIONS = 50_000
MAX_KEY = 200  # a title is cut to this, and a one-conversation file's id and title as they are read

__all__ = [
    "Conversation",
    "Fact",
    "FormatError",
    "Message",
    "Scan",
    "Turn",
    "recognise",
    "records",
    "scan",
    "turns_in",
    "turns_of",
]


def bounds() -> Bounds:
    return Bounds(depth=MAX_DEPTH, string=MAX_STRING_BYTES, token=MAX_TOKEN_BYTES)


def meter() -> ShapeMeter:
    """A meter for a file arriving a chunk at a time (formats/shape.py)."""
    return ShapeMeter(bounds())


def measure(path: str | Path) -> Shape:
    """The shape of the file at `path`, read once. Raises FormatError past a bound."""
    measuring = meter()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(READ_BUFFER), b""):
            measuring.feed(chunk)
    return measuring.shape


def is_zip(head: bytes) -> bool:
    """Whether a file starting with `head` is a zip (by its first bytes: a JSON file cannot start so)."""
    return head.startswith(ZIP_MAGIC)


def unzip(path: str | Path, into: str | Path, *, limit: int, measuring: ShapeMeter) -> None:
    """Write the conversations.json inside the zip at `path` (ChatGPT's export) to `into`, measured as it
    is unpacked. Raises FormatError for a zip that holds none, is broken, holds more than MAX_ZIP_ENTRIES
    files, or unpacks to more than `limit` bytes (it is refused at that byte, whatever it says it holds)."""
    with open(path, "rb") as raw:
        try:
            end = zipfile._EndRecData(raw)  # the directory's size, read before the directory is
        except OSError:
            end = None
    if end is None:
        raise FormatError("the file starts as a zip but is not one (its directory is missing)")
    if end[zipfile._ECD_ENTRIES_TOTAL] > MAX_ZIP_ENTRIES:
        raise FormatError(f"the zip holds more than {MAX_ZIP_ENTRIES:,} files")
    try:
        with zipfile.ZipFile(path) as archive:
            names = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == "conversations.json"]
            if not names:
                raise FormatError("the zip holds no conversations.json (a ChatGPT export holds one)")
            info = archive.getinfo(min(names, key=len))
            if info.file_size > limit:
                raise FormatError(f"its conversations.json unpacks to {info.file_size:,} bytes; the limit is {limit:,}")
            size = 0
            with archive.open(info) as stream, open(into, "wb") as out:
                for chunk in iter(lambda: stream.read(READ_BUFFER), b""):
                    size += len(chunk)
                    if size > limit:
                        raise FormatError(f"its conversations.json unpacks to more than {limit:,} bytes")
                    measuring.feed(chunk)
                    out.write(chunk)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, RuntimeError, EOFError, zlib.error) as error:
        raise FormatError(f"the zip cannot be read: {error}") from None


@contextmanager
def opened(path: str | Path) -> Iterator[BinaryIO]:
    """The file, read from after its byte-order mark if it opens with one."""
    with open(path, "rb") as stream:
        if stream.read(len(BOM)) != BOM:
            stream.seek(0)
        yield stream


@contextmanager
def parsing() -> Iterator[None]:
    """What the parsers raise for a file that is not JSON, or not UTF-8, as a FormatError."""
    try:
        yield
    except ijson.JSONError as error:
        raise FormatError(f"the JSON is broken ({str(error)[:200]}); {EXPECTED}") from None
    except UnicodeDecodeError as error:
        raise FormatError(f"the file cannot be read: {error}") from None


def _layout(path: str | Path) -> str:
    """ "lines" (JSON Lines: two or more lines, each a whole value), "array" or "object"."""
    with opened(path) as stream:
        first = stream.readline(LINE_LIMIT)
        while first and not first.strip():
            first = stream.readline(LINE_LIMIT)
        start = first.lstrip(b" \t\r\n")[:1]
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
            except ValueError:
                pass
    return "array" if start == b"[" else "object"


LIST_FIELDS = (*memories.LIST_FIELDS, "messages")  # an object holding a list that is read an item at a time


def _object_list(path: str | Path, parser: ModuleType = ijson) -> tuple[str | None, dict]:
    """The key of a top-level object's list read an item at a time ("results", "memories": facts;
    "messages": one conversation) or None, and the object's "id" and "title" seen before it."""
    seen: dict = {}
    with opened(path) as stream, parsing():
        for prefix, event, value in parser.parse(stream, buf_size=READ_BUFFER):
            if prefix == "" and event == "map_key" and value in LIST_FIELDS:
                return value, seen
            if prefix in ("id", "title") and event in ("string", "number"):
                seen[prefix] = str(value)[:MAX_KEY]
            if prefix == "" and event == "end_map":
                return None, seen
    return None, seen


def _raw(path: str | Path, layout: str, list_key: str | None, parser: ModuleType = ijson) -> Iterator[object]:
    """The file's items, streamed: each line, each array item, each item of the object's list, or the
    object itself."""
    with opened(path) as stream, parsing():
        if layout == "lines":
            for number, line in enumerate(iter(lambda: stream.readline(LINE_LIMIT + 1), b""), start=1):
                if len(line) > LINE_LIMIT:
                    raise FormatError(f"a line of JSON Lines is at most {LINE_LIMIT} bytes", f"line {number}")
                if line.strip():
                    try:
                        yield json.loads(line)
                    except ValueError as error:
                        raise FormatError(f"not JSON: {str(error)[:200]}", f"line {number}") from None
        elif layout == "array":
            yield from parser.items(stream, "item", use_float=True, buf_size=READ_BUFFER)
        elif list_key:
            yield from parser.items(stream, f"{list_key}.item", use_float=True, buf_size=READ_BUFFER)
        else:
            yield from parser.items(stream, "", use_float=True, buf_size=READ_BUFFER)


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
    one_conversation: bool  # the file is one conversation, read a message at a time
    heading: dict = field(default_factory=dict)  # the object's id and title, when it is one conversation
    parser: ModuleType = ijson  # EXACT_PARSER for a file holding a lone surrogate


def _built_level(layout: str, list_key: str | None) -> int:
    """The level of the values read whole (formats/shape.py): an array's items, the items of an object's
    list, each line, or the object itself."""
    if layout == "array":
        return 1
    return 2 if list_key else 0


def recognise(path: str | Path, shape: Shape | None = None) -> Reading:
    """The file's format, from its content. Raises FormatError when it is none of them, or passes a bound
    (`shape`: the file's, when it was measured as it arrived)."""
    shape = shape or measure(path)
    parser = EXACT_PARSER if shape.lone_surrogate else ijson
    layout = _layout(path)
    list_key, heading = _object_list(path, parser) if layout == "object" else (None, {})
    if shape.largest[_built_level(layout, list_key)] > MAX_VALUE_BYTES:
        what = "a conversation" if layout == "array" else "what is read whole"
        raise FormatError(f"{what} is larger than {MAX_VALUE_BYTES:,} bytes; split the file")
    first = next(iter(_raw(path, layout, list_key, parser)), None)
    if first is None:
        raise FormatError(f"the file holds nothing: {EXPECTED}")
    if list_key in memories.LIST_FIELDS:
        return Reading(MEMORIES, layout, list_key, False, parser=parser)
    found = MESSAGES if list_key == "messages" else _format_of(first, layout)
    one = list_key == "messages" or (found == MESSAGES and layout == "array" and messages.is_message(first))
    return Reading(found, layout, list_key, one, heading, parser)


def _transcript(raw: object, number: int) -> Iterator[Message]:
    where = f"turn {number}"
    if not isinstance(raw, dict):
        raise FormatError('a transcript turn is an object with "user_input" and "agent_response"', where)
    time = when(raw.get("timestamp"), where)
    for role, name in (("user", "user_input"), ("assistant", "agent_response")):
        text = raw.get(name, "")
        if not isinstance(text, str):
            raise FormatError(f"{name} is a string", where)
        yield Message(role=role, text=text, time=time, key=f"{number}.{role}")


def records(path: str | Path, reading: Reading | None = None) -> Iterator[Conversation | Fact]:
    """The file's conversations (or facts), in order, each checked as it is read. Raises FormatError at
    the first problem; an item of another format than the first's is one."""
    reading = reading or recognise(path)
    if reading.format == LOCOMO:
        raise FormatError("LoCoMo samples are imported by their sample id (the import's LoCoMo choice)")
    items = _raw(path, reading.layout, reading.list_key, reading.parser)
    if reading.one_conversation:
        yield messages.streamed(items, key=reading.heading.get("id") or "1", title=reading.heading.get("title", ""))
        return
    if reading.format == TRANSCRIPT:
        said = (message for number, raw in enumerate(items, start=1) for message in _transcript(raw, number))
        yield Conversation(key="transcript", title="", created=None, messages=said)
        return
    read = {CHATGPT: chatgpt.conversation, CLAUDE: claude.conversation, MESSAGES: messages.conversation}
    for number, raw in enumerate(items, start=1):
        if reading.format == MEMORIES:
            yield memories.fact(raw, number)
            continue
        if _format_of(raw, reading.layout) != reading.format:
            raise FormatError(f"not {LABELS[reading.format]} like the first", f"item {number}")
        yield read[reading.format](raw, number)


# --- Scanning: the whole file checked, listed, and written as the import will read it -------------------


@dataclass(frozen=True)
class Listed:
    """A conversation as the person chooses among them, and where its turns are in the working copy."""

    key: str
    title: str
    created: datetime | None
    last: datetime | None
    messages: int
    turns: int
    start: int = 0  # its records' first byte in the working copy
    end: int = 0  # and the byte after its last


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


def identity(file_format: str, *parts: str) -> str:
    """What names a turn or fact of a source wherever it is brought from: its format and ids, hashed (so
    that the same file brought again stores nothing twice)."""
    return hashlib.sha256("\x1f".join((file_format, *parts)).encode()).hexdigest()


# The working copy: a line a turn or fact, JSON, in the order they are imported; times ISO 8601 or null.
#   turn: ["turn", its conversation's place in the listing (from 0), [its messages' keys], user_input,
#          agent_response, time, cut]
#   fact: ["fact", its key, its text, time]


@dataclass(frozen=True)
class Record:
    """A turn or fact as the import stores it, read from the working copy."""

    kind: str  # "turn" or "fact"
    conversation: int  # a turn's conversation, its place in the listing (a fact: -1)
    keys: tuple[str, ...]  # a turn's messages' keys; a fact's own
    text: str  # a turn's user_input, or a fact's text
    reply: str  # a turn's agent_response
    time: datetime | None
    cut: bool = False


_ENCODER = json.JSONEncoder(ensure_ascii=False)


def record_line(record: Record) -> bytes:
    time = record.time.isoformat() if record.time else None
    if record.kind == "fact":
        row = ["fact", record.keys[0], record.text, time]
    else:
        row = ["turn", record.conversation, list(record.keys), record.text, record.reply, time, record.cut]
    return _ENCODER.encode(row).encode() + b"\n"


def record_read(line: bytes) -> Record:
    row = json.loads(line)
    if row[0] == "fact":
        _, key, text, time = row
        return Record("fact", -1, (key,), text, "", datetime.fromisoformat(time) if time else None)
    _, conversation, keys, said, reply, time, cut = row
    return Record("turn", conversation, tuple(keys), said, reply, datetime.fromisoformat(time) if time else None, cut)


class _Counted:
    """A conversation's messages as they pass: how many, and the first and latest times."""

    def __init__(self, source) -> None:
        self.source, self.count, self.first, self.last = source, 0, None, None

    def __iter__(self):
        for message in self.source:
            self.count += 1
            if message.time is not None:
                self.first = self.first or message.time
                self.last = max(self.last, message.time) if self.last else message.time
            yield message


def scan(path: str | Path, *, shape: Shape | None = None, out: BinaryIO | None = None) -> Scan:
    """Read the whole file once, checking every item as the import will (its texts as `inputs` takes
    them), and list what it holds; with `out`, write its records there (the working copy the import
    reads), each conversation's place in it listed. Raises FormatError. (A file brought to import is
    scanned in a process of its own: memory_engine/file_check.py.)"""
    reading = recognise(path, shape)
    found = Scan(format=reading.format)
    keys: set[str] = set()
    for number, record in enumerate(records(path, reading), start=1):
        if isinstance(record, Fact):
            with refused_at(f"memory {number}"):
                text = inputs.entry_value(record.text, "its text")
            if out is not None:
                out.write(record_line(Record("fact", -1, (record.key,), text, "", record.time)))
            found.facts += 1
            continue
        found.conversations.append(_conversation_scanned(record, number, found, keys, out))
    return found


def _conversation_scanned(
    record: Conversation, number: int, found: Scan, keys: set[str], out: BinaryIO | None
) -> Listed:
    where = f"conversation {number}"
    if record.key in keys:
        raise FormatError(f"its id {record.key[:40]!r} is another conversation's too", where)
    source_id(record.key, where)
    with refused_at(where):
        title = inputs.text(record.title[:MAX_KEY], "its title", limit=MAX_KEY)
    if len(keys) == MAX_CONVERSATIONS:
        raise FormatError(f"a file holds at most {MAX_CONVERSATIONS:,} conversations; split it")
    keys.add(record.key)
    place = len(found.conversations)
    start = out.tell() if out is not None else 0
    counted, turns = _Counted(record.messages), 0
    write = out.write if out is not None else None
    for turns, turn in enumerate(turns_in(counted), start=1):
        with refused_at(f"{where}, turn {turns}"):
            said, reply = inputs.turn_texts(turn.user_input, turn.agent_response)
        if write is not None:
            write(record_line(Record("turn", place, turn.keys, said, reply, turn.time, turn.cut)))
        found.cut += turn.cut
    found.turns += turns
    created = record.created or counted.first
    last = counted.last or created
    end = out.tell() if out is not None else 0
    return Listed(record.key, title, created, last, counted.count, turns, start, end)
