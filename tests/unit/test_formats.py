"""Reading other assistants' exports and memory systems' facts (memory_engine/formats): each format
recognised from its content, read as a stream, checked whole, and refused with where it differs."""

import io
import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_engine import formats
from memory_engine.formats import FormatError, recognise, records, scan, turns_of
from memory_engine.formats.common import CUT_MARK

DATA = Path(__file__).resolve().parents[1] / "data" / "imports"
BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark, as Windows editors write it first


def conversations(path) -> list:
    return list(records(path))


def said(conversation) -> list[tuple[str, str]]:
    return [(t.user_input, t.agent_response) for t in turns_of(conversation.messages)]


def test_a_chatgpt_export_follows_the_branch_last_seen_and_keeps_only_what_was_said():
    pets, dinner, empty = conversations(DATA / "chatgpt-conversations.json")
    assert recognise(DATA / "chatgpt-conversations.json").format == formats.CHATGPT
    assert (pets.key, pets.title, dinner.key, empty.messages) == ("c-pets", "Pets and plans", "c-dinner", [])
    # The edited first message's old branch (Rex) and the regenerated answer are left behind; the system
    # message, the custom instructions, the tool call and its output are not what was said.
    assert said(pets) == [
        ("I have a cat called Pepper, she is three", "Pepper is a lovely name for a cat!"),
        ("Here is her photo\n[image]", "What a cute cat."),
        ("We are moving to Lisbon in June", "Lisbon in June sounds wonderful."),
    ]
    turns = turns_of(pets.messages)
    assert turns[0].time == datetime(2024, 5, 1, 10, 0, 20, tzinfo=UTC)  # the message's own time
    assert turns[2].time == datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)
    assert turns[0].keys == ("m-u1", "m-a1")
    # No current_node: the last child at each step, so the later edit of the last message.
    assert said(dinner) == [
        ("What should I cook tonight?", "Try a mushroom risotto."),
        ("I am allergic to mushrooms", ""),
    ]


def test_a_chatgpt_zip_gives_the_conversations_json_inside_it_unpacked_within_the_limit(tmp_path):
    archive = tmp_path / "export.zip"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.write(DATA / "chatgpt-conversations.json", "export-2024/conversations.json")
        zipped.writestr("export-2024/chat.html", "<html></html>")
    assert formats.is_zip(archive.read_bytes()[:4])
    unpacked = tmp_path / "conversations.json"
    formats.unzip(archive, unpacked, limit=10**6, measuring=formats.meter())
    assert unpacked.read_bytes() == (DATA / "chatgpt-conversations.json").read_bytes()
    listed = scan(unpacked)
    assert [(c.key, c.title, c.turns) for c in listed.conversations] == [
        ("c-pets", "Pets and plans", 3),
        ("c-dinner", "Dinner", 2),
        ("c-empty", "Empty chat", 0),
    ]
    assert listed.conversations[0].created == datetime(2024, 5, 1, 10, 0, tzinfo=UTC)
    assert listed.conversations[0].last == datetime(2024, 5, 1, 12, 0, 10, tzinfo=UTC)
    # What it says it holds is refused before it is unpacked.
    with pytest.raises(FormatError, match="conversations.json unpacks to [0-9,]+ bytes; the limit is 1,000"):
        formats.unzip(archive, unpacked, limit=1000, measuring=formats.meter())
    without = tmp_path / "other.zip"
    with zipfile.ZipFile(without, "w") as zipped:
        zipped.writestr("user.json", "{}")
    with pytest.raises(FormatError, match="no conversations.json"):
        formats.unzip(without, unpacked, limit=10**6, measuring=formats.meter())


def test_a_claude_export_reads_text_blocks_and_names_attachments():
    garden, empty = conversations(DATA / "claude-conversations.json")
    assert recognise(DATA / "claude-conversations.json").format == formats.CLAUDE
    assert said(garden) == [
        ("My tomatoes are a variety called Sungold", "Sungold is a sweet cherry tomato."),
        ("Here is my planting plan\n[file: plan.txt]\n[file: bed.jpg]", "A good plan."),
    ]
    assert turns_of(garden.messages)[1].time == datetime(2024, 6, 1, 8, 5, tzinfo=UTC)
    assert empty.messages == [] and empty.title == ""


def test_plain_messages_one_a_line_or_one_conversation_a_file():
    first, work = conversations(DATA / "messages.jsonl")
    assert recognise(DATA / "messages.jsonl").layout == "lines"
    assert said(first) == [("My sister Ana lives in Porto", "Porto is beautiful.")]
    assert turns_of(first.messages)[0].time == datetime(2024, 7, 1, 7, 0, tzinfo=UTC)  # +02:00 kept
    assert (work.key, work.title) == ("conv-b", "Work")
    assert said(work) == [("I start at the bakery on Monday\n[image_url]", "Good luck at the bakery!")]
    assert turns_of(work.messages)[0].time == datetime.fromtimestamp(1720000000, UTC)
    (one,) = conversations(DATA / "messages-one.json")
    assert recognise(DATA / "messages-one.json").one_conversation
    turns = turns_of(one.messages)  # read once, as they stream
    assert [(t.user_input, t.agent_response) for t in turns] == [
        ("I play the cello", "Wonderful instrument."),
        ("And my teacher is called Ines", ""),
    ]
    assert turns[0].time is None  # no time given: the import's own


def test_memories_of_another_system_are_facts_not_turns():
    listed = scan(DATA / "mem0-memories.json")
    assert (listed.format, listed.facts, listed.conversations) == (formats.MEMORIES, 2, [])
    vegetarian, cat = records(DATA / "mem0-memories.json")
    assert (vegetarian.key, vegetarian.text, cat.text) == ("f-1", "Is vegetarian", "Has a cat named Pepper")
    assert vegetarian.metadata == {"source": "chat", "categories": ["food"], "user_id": "maria"}
    assert cat.time == datetime(2024, 4, 2, 18, 0, tzinfo=UTC)  # updated_at, when it was last true


def test_a_long_message_is_shortened_and_counted(tmp_path, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "MAX_TURN_CHARS": 40}
    path = tmp_path / "long.json"
    path.write_text(json.dumps([{"role": "user", "content": "word " * 30}, {"role": "assistant", "content": "ok"}]))
    listed = scan(path)
    assert listed.cut == 1 and listed.turns == 1
    (turn,) = turns_of(next(records(path)).messages)
    assert len(turn.user_input) <= 40 and turn.user_input.endswith(CUT_MARK) and turn.cut


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b"hello there", "the file is not JSON"),
        (b"", "the file is not JSON"),
        (b"[]", "the file holds nothing"),
        (b'[{"title": "x"}]', "none of the formats read here"),
        (b'[{"mapping": {}}, {"chat_messages": []}]', "item 2: not a ChatGPT export like the first"),
        (b'[{"mapping": {"a": {"id": "a", "parent": "b", "children": []}}, "current_node": "a"}]', "conversation 1"),
        (
            b'[{"title": "Trip", "mapping": {"a": {"id": "a", "message": {"id": "m", "author": {"role": "user"}, '
            b'"create_time": "yesterday", "content": {"content_type": "text", "parts": ["hi"]}}, "parent": null}}, '
            b'"current_node": "a"}]',
            "conversation 1 ('Trip'), message 'a': a time is seconds since 1970",
        ),
        (b'[{"chat_messages": [{"sender": "robot", "text": "hi"}]}]', "conversation 1, message 1: a message's sender"),
        (b'[[{"role": "user", "content": "a"}], [{"role": "narrator", "content": "b"}]]', "conversation 2, message 1"),
        (b'[{"role": "user", "content": "a"}, {"rol": "user"}]', "message 2"),
        (b'{"results": [{"memory": "a"}, {"memory": ""}]}', "memory 2: a memory's text is empty"),
        (b'[{"mapping": {}}, ', "the JSON is broken"),
        (b'[{"mapping": {}, "id": "x"}, {"mapping": {}, "id": "x"}]', "conversation 2: its id 'x'"),
        (b'[{"mapping": {}, "id": "' + b"x" * 201 + b'"}]', "conversation 1: its id is 201 characters long"),
    ],
)
def test_a_file_that_is_not_what_it_seems_is_refused_saying_where(tmp_path, content, expected):
    path = tmp_path / "upload.json"
    path.write_bytes(content)
    with pytest.raises(FormatError) as refused:
        scan(path)
    assert expected in str(refused.value)


@pytest.mark.parametrize(
    "content",
    [
        b"[" * 200_000 + b"]" * 200_000,  # ijson would name each level by its whole path: gigabytes
        b'[{"role": "user", "content": "hi"}]\n' + b"[" * 200_000 + b"]" * 200_000 + b"\n",  # json recurses
        b'{"results": [{"memory": ' + b"[" * 100 + b"]" * 100 + b"}]}",
    ],
)
def test_a_file_nested_too_deeply_is_refused_before_it_is_read(tmp_path, content):
    path = tmp_path / "deep.json"
    path.write_bytes(content)
    with pytest.raises(FormatError, match="nested more than 64 deep"):
        scan(path)


def test_a_file_of_more_conversations_than_a_listing_holds_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(formats, "MAX_CONVERSATIONS", 3)
    path = tmp_path / "many.json"
    path.write_text(json.dumps([[{"role": "user", "content": f"hi {n}"}] for n in range(4)]))
    with pytest.raises(FormatError, match="at most 3 conversations; split it"):
        scan(path)


def test_a_large_export_is_read_as_a_stream_one_conversation_at_a_time(tmp_path):
    """ijson yields each conversation as it is parsed: the first arrives before the file is read through,
    so a file larger than memory is never held whole."""
    path = tmp_path / "big.json"
    one = json.loads((DATA / "chatgpt-conversations.json").read_text())[0]
    with path.open("w") as out:
        out.write("[")
        for n in range(400):
            out.write(("," if n else "") + json.dumps(one | {"id": f"c{n}", "conversation_id": f"c{n}"}))
        out.write("]")
    with formats.opened(path) as stream:
        items = formats.ijson.items(stream, "item", use_float=True)
        next(items)
        assert stream.tell() < path.stat().st_size / 10  # read a buffer, not the file
    listed = scan(path)
    assert len(listed.conversations) == 400 and listed.turns == 1200


# --- What the import keeps, checked as it is kept -------------------------------------------------------


def chatgpt(*, conversation="c-1", title="Trip", message="m-1", text="I keep bees", system="Be brief") -> bytes:
    """A ChatGPT export of one conversation: a system message (node "n-s"), then the person's ("n-1")."""

    def node(key: str, parent: str | None, said: str, role: str, words: str) -> dict:
        content = {"content_type": "text", "parts": [words]}
        return {"id": key, "parent": parent, "message": {"id": said, "author": {"role": role}, "content": content}}

    mapping = {"n-s": node("n-s", None, "m-s", "system", system), "n-1": node("n-1", "n-s", message, "user", text)}
    return json.dumps([{"id": conversation, "title": title, "mapping": mapping, "current_node": "n-1"}]).encode()


def one_line(value: object) -> bytes:
    return json.dumps(value).encode()  # a str's NUL and lone surrogates written as JSON escapes them


NUL, LONE = "its id contains a NUL character", "its id is not valid unicode (it holds a lone surrogate)"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (chatgpt(message="m\x00"), f"conversation 1 ('Trip'), message 'n-1': {NUL}"),
        (chatgpt(message="m\ud800"), f"conversation 1 ('Trip'), message 'n-1': {LONE}"),
        (chatgpt(conversation="c\x00"), f"conversation 1: {NUL}"),
        (chatgpt(conversation="c\ud800"), f"conversation 1: {LONE}"),  # yajl read it as "c?"
        (chatgpt(title="Trip \udc00"), "conversation 1: its title is not valid unicode"),
        (chatgpt(text="two highs \ud800\ud800"), "conversation 1, turn 1: user_input is not valid unicode"),
        (chatgpt(message="m" * 201), "conversation 1 ('Trip'), message 'n-1': its id is 201 characters long"),
        (
            one_line(
                [{"uuid": "k", "name": "Garden", "chat_messages": [{"uuid": "k\x00", "sender": "human", "text": "hi"}]}]
            ),
            f"conversation 1 ('Garden'), message 1: {NUL}",
        ),
        (one_line([{"role": "user", "content": "hi", "id": "m\ud800"}]), f"conversation 1, message 1: {LONE}"),
        (one_line({"id": "c\ud800", "messages": [{"role": "user", "content": "hi"}]}), f"conversation 1: {LONE}"),
        (
            one_line([{"role": "user", "content": "hi"}])
            + b"\n"
            + one_line([{"role": "user", "content": "x", "id": "\x00"}]),
            f"conversation 2, message 1: {NUL}",
        ),
        (one_line({"results": [{"id": "f\x00", "memory": "keeps bees"}]}), f"memory 1: {NUL}"),
        (one_line({"results": [{"id": "f\udfff", "memory": "keeps bees"}]}), f"memory 1: {LONE}"),
    ],
)
def test_every_id_and_text_the_import_keeps_is_checked_as_it_is_kept(tmp_path, content, expected):
    """A NUL in a message's id, or a lone surrogate (yajl read "\\ud800" as "?"), passed the check of a file
    and reached the working copy (a lone one crashed the scan writing it). Each is refused with the words of
    inputs, saying where."""
    path = tmp_path / "upload.json"
    path.write_bytes(content)
    with pytest.raises(FormatError) as refused:
        scan(path, out=io.BytesIO())
    assert expected in str(refused.value)


def test_a_surrogate_pair_is_its_character_and_a_lone_one_the_import_leaves_out_is_no_matter(tmp_path):
    path = tmp_path / "upload.json"
    path.write_bytes(chatgpt(text="I keep bees \U0001f41d and \\ud800", system="broken \ud800"))
    assert b"\\ud83d\\udc1d" in path.read_bytes()  # the bee, escaped as a pair
    (conversation,) = records(path)
    assert said(conversation) == [("I keep bees \U0001f41d and \\ud800", "")]


@pytest.mark.parametrize(
    ("string", "lone"),
    [
        (rb"\ud83d\ude00", False),
        (rb"\uD83D\uDE00", False),
        (rb"\\ud800", False),  # an escaped backslash, then text
        (rb"\\\\\ud83d\ude00", False),
        (rb"a\u0041\n\"", False),
        (rb"\ud800", True),
        (rb"\udc00", True),
        (rb"\ud800\ud800", True),
        (rb"\ud800\\udc00", True),
        (rb"\\\ud800", True),
        (rb"\ud83d\ude00\udc00", True),
        (rb"\ud800\ud83d\ude00\udc00", True),
    ],
)
def test_the_meter_tells_a_lone_surrogate_from_a_pair_wherever_the_chunks_are_cut(string, lone):
    body = b'["x", "' + string + b'"]'
    assert lone == any(0xD800 <= ord(c) <= 0xDFFF for c in json.loads(body)[1])  # as Python reads it
    for cut in range(len(body) + 1):
        meter = formats.meter()
        meter.feed(body[:cut])
        meter.feed(body[cut:])
        assert meter.shape.lone_surrogate is lone, body[:cut]
    meter = formats.meter()
    for byte in body:
        meter.feed(bytes([byte]))
    assert meter.shape.lone_surrogate is lone


ONE_CONVERSATION = one_line({"id": "c-1", "title": "Bees", "messages": [{"role": "user", "content": "I keep bees"}]})
SAMPLES = sorted(path.name for path in DATA.iterdir())


@pytest.mark.parametrize(
    "content",
    [*((DATA / name).read_bytes() for name in SAMPLES), ONE_CONVERSATION],
    ids=[*SAMPLES, "one-conversation-object"],
)
def test_a_file_opening_with_a_byte_order_mark_is_read_as_if_it_were_not_there(tmp_path, content):
    """Windows editors write UTF-8 with a byte-order mark first ("utf-8-sig"): such a file was refused as
    broken JSON (and an object holding "messages" or "results" crashed the scan)."""
    plain, marked = tmp_path / "plain.json", tmp_path / "marked.json"
    plain.write_bytes(content)
    marked.write_bytes(BOM + content)
    expected, found = io.BytesIO(), io.BytesIO()
    assert scan(marked, out=found) == scan(plain, out=expected)
    assert found.getvalue() == expected.getvalue()  # the working copy
    assert formats.measure(marked) == formats.measure(plain)
    for cut in range(len(BOM) + 2):  # the mark cut between chunks, as a file arrives
        meter = formats.meter()
        meter.feed(marked.read_bytes()[:cut])
        meter.feed(marked.read_bytes()[cut:])
        assert meter.shape == formats.measure(plain)


def test_a_chatgpt_zips_conversations_json_opening_with_a_byte_order_mark_is_read_as_without_it(tmp_path):
    archive, unpacked = tmp_path / "export.zip", tmp_path / "conversations.json"
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zipped:
        zipped.writestr("conversations.json", BOM + (DATA / "chatgpt-conversations.json").read_bytes())
    measuring = formats.meter()
    formats.unzip(archive, unpacked, limit=10**6, measuring=measuring)
    assert measuring.shape == formats.measure(DATA / "chatgpt-conversations.json")
    assert scan(unpacked, shape=measuring.shape) == scan(DATA / "chatgpt-conversations.json")
