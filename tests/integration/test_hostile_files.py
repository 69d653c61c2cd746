"""Files made to hurt the service: each is refused with where
and why, or read within bounds, and nothing of a refused file is kept. The web door's part (a body decided on
before it is read) is driven through the production ASGI handler in process, with the ASGI messages a server
sends."""

import asyncio
import contextlib
import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
import tracemalloc
import zipfile
from pathlib import Path

import pytest
from django.core.cache import cache

from memory_engine import formats
from memory_engine.formats import FormatError, scan
from memory_engine.interfaces.asgi import GatedASGIHandler
from memory_engine.models import ImportUpload, MemoryUser, Page
from memory_engine.services.tokens import token_create
from tests.api_helpers import client_for
from tests.memory_helpers import nothing_extracted
from tests.processes import ROOT, wait_until

SPACE = "/api/v1/users/alice/spaces/helper/"
CHATGPT_MESSAGE = (
    b'[{"title": "Trip", "mapping": {"a": {"id": "a", "parent": null, "message": {"id": "ID", "author": {"role": '
    b'"user"}, "content": {"content_type": "text", "parts": ["I keep bees"]}}}}, "current_node": "a"}]'
)
LOOP = b'[{"title":"loop","mapping":{"a":{"parent":null,"children":["b"]},"b":{"parent":"a","children":["a"]}}}]'


@pytest.fixture
def alice(memory, fake_llm, settings, tmp_path):
    cache.clear()
    fake_llm.responder = nothing_extracted
    settings.MEMORYOS = {**settings.MEMORYOS, "IMPORT_DIR": tmp_path / "imports"}
    return client_for("alice")


def upload(client, content: bytes, name: str = "file.json"):
    return client.post(f"{SPACE}imports/files/?name={name}", content, content_type="application/octet-stream")


def kept(settings) -> list[Path]:
    folder = Path(settings.MEMORYOS["IMPORT_DIR"])
    return sorted(folder.iterdir()) if folder.exists() else []


def scanned_in_time(path: Path, seconds: float = 120.0):
    """scan(path) in a thread, waited for `seconds` (a generous bound: the file takes milliseconds); the
    old branch walk never returned."""
    outcome = {}

    def run():
        try:
            outcome["scan"] = scan(path)
        except Exception as exc:  # noqa: BLE001 (the outcome is what is asserted)
            outcome["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    assert not worker.is_alive(), "the scan never returned"
    return outcome


# --- What a file may be -----------------------------------------------------------------------------


def test_a_chatgpt_tree_whose_branches_loop_is_refused_not_walked_for_ever(tmp_path):
    path = tmp_path / "loop.json"
    path.write_bytes(LOOP)  # 171 bytes: no current_node, and b's child is a
    outcome = scanned_in_time(path)
    assert "the message tree has a cycle" in str(outcome.get("error"))
    path.write_bytes(LOOP.replace(b'"children":["a"]', b'"children":["b"]'))  # a node its own child
    assert "cycle" in str(scanned_in_time(path).get("error"))


@pytest.mark.parametrize(
    ("mapping", "expected"),
    [
        (b'{"a": {"parent": null, "children": ["b"]}, "b": "x"}', "node 'b' is missing or not an object"),
        (b'{"a": {"parent": null, "children": "b"}}', "its children are a list of ids"),
        (b'{"a": {"parent": null, "children": [["b"]]}, "b": {"parent": "a"}}', "a child is a node's id"),
        (b'{"r": {"parent": null, "children": ["a"]}, "a": {"parent": ["x"]}}', "its parent is a node's id"),
    ],
)
def test_a_chatgpt_tree_of_the_wrong_shapes_is_refused_saying_where(tmp_path, mapping, expected):
    path = tmp_path / "odd.json"
    path.write_bytes(b'[{"title": "odd", "mapping": ' + mapping + b', "current_node": null}]')
    with pytest.raises(FormatError, match=expected):
        scan(path)
    path.write_bytes(b'[{"title": "odd", "mapping": {"a": {"parent": null}}, "current_node": ["a"]}]')
    with pytest.raises(FormatError, match="current_node is a node's id"):
        scan(path)


def test_a_long_string_is_refused_at_its_first_megabytes(tmp_path, monkeypatch):
    """yajl reads a string spanning its buffers again at each (quadratic time) and holds it whole: one of
    400 MB in a 408 KB zip kept a thread busy for minutes. The meter refuses it as it arrives."""
    monkeypatch.setattr(formats, "MAX_STRING_BYTES", 1 << 20)
    meter = formats.meter()
    body = b'[{"role": "user", "content": "' + b"a" * (64 << 20)
    with pytest.raises(FormatError, match="a string is longer than 1,048,576 bytes") as refused:
        for start in range(0, len(body), 1 << 16):
            meter.feed(body[start : start + (1 << 16)])
    assert meter.offset < 2 << 20  # refused within a chunk of the bound, not at the end
    assert "byte " in str(refused.value)


def test_a_number_of_thousands_of_digits_is_refused_without_crashing_the_process(tmp_path):
    """ijson's C parser crashes the process (a segmentation fault) on an integer of more than 4,300
    digits: the scan runs in a process of its own here, so the old code fails this test, not the suite."""
    path = tmp_path / "digits.json"
    path.write_bytes(b'[{"role": "user", "content": "hi", "timestamp": ' + b"1" * 100_000 + b"}]")
    code = (
        "import django, os, sys; os.environ.setdefault('DJANGO_SETTINGS_MODULE', 'playground.settings'); "
        "django.setup(); from memory_engine.formats import scan\n"
        "try:\n    scan(sys.argv[1])\nexcept Exception as e:\n    print(type(e).__name__, e)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "a number or literal is longer than 100 characters" in done.stdout


def test_a_file_of_millions_of_tiny_messages_is_read_a_message_at_a_time(tmp_path):
    """One conversation of 300,000 messages (10 MB): the old reader listed them all first (a 200 MB file
    took the web process to 4 GB); streamed, the reading holds a turn at a time. A run of one side's
    messages longer than a turn may hold is split."""
    path = tmp_path / "tiny.json"
    with path.open("wb") as out:
        out.write(b"[")
        for n in range(300_000):
            role = b"user" if n % 2 == 0 or n > 200_000 else b"assistant"
            out.write(b'{"role":"' + role + b'","content":"hi"},')
        out.write(b'{"role":"user","content":"end"}]')
    tracemalloc.start()
    try:
        found = scan(path, out=io.BytesIO())
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert found.conversations[0].messages == 300_001
    assert found.turns == 100_001 + 100  # the last 100,000 user messages in turns of 1,000
    assert peak < 64 << 20, f"{peak / 2**20:.0f} MiB held while reading"


def test_a_conversation_larger_than_is_read_whole_is_refused_before_it_is_built(tmp_path, monkeypatch):
    monkeypatch.setattr(formats, "MAX_VALUE_BYTES", 4000)
    path = tmp_path / "big.json"
    one = json.loads((Path(__file__).parents[1] / "data/imports/chatgpt-conversations.json").read_text())[0]
    path.write_text(json.dumps([one, one | {"id": "other", "title": "x" * 5000}]))
    with pytest.raises(FormatError, match="a conversation is larger than 4,000 bytes; split the file"):
        scan(path)


def test_a_zip_is_told_by_its_first_bytes_and_unpacked_within_the_limit(alice, settings):
    """A zip holding 5 conversations and gigabytes of whitespace was accepted after 100 s of a web
    process's CPU; what a zip unpacks to is now held to the limit of a file."""
    settings.MEMORYOS = {**settings.MEMORYOS, "MAX_IMPORT_BYTES": 100_000}
    padded = io.BytesIO()
    with zipfile.ZipFile(padded, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("conversations.json", b"[" + b" " * 1_000_000 + LOOP[1:])
    answer = upload(alice, padded.getvalue(), "export.zip")
    assert answer.status_code == 400 and "unpacks to 1,000,1" in answer.data["detail"], answer.data
    assert not ImportUpload.objects.exists() and kept(settings) == []
    # A JSON file ending with what ends a zip is read as JSON (it was taken for a broken zip).
    tail = b"PK\x05\x06" + b"\x00" * 18
    answer = upload(alice, b'[{"role": "user", "content": "I keep bees"}]\n' + tail)
    assert answer.status_code == 400 and "the JSON is broken" in answer.data["detail"], answer.data


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (b'[{"role": "user", "content": "one"}, {"role": "user", "content": "two\\u0000"}]', "a NUL character"),
        (b'[{"id": "a\\u0000", "messages": [{"role": "user", "content": "hi"}]}]', "its id contains a NUL"),
        (b'[{"title": "t\\u0000", "messages": [{"role": "user", "content": "hi"}]}]', "its title contains a NUL"),
        (b'{"results": [{"memory": "keeps bees"}, {"memory": "x\\u0000"}]}', "memory 2: its text contains a NUL"),
        (CHATGPT_MESSAGE.replace(b"ID", b"m\\u0000"), "conversation 1 ('Trip'), message 'a': its id contains a NUL"),
        (CHATGPT_MESSAGE.replace(b"ID", b"m\\ud800"), "message 'a': its id is not valid unicode (it holds a lone"),
        (b'[{"role": "user", "content": "hi \\ud800"}]', "conversation 1, turn 1: user_input is not valid unicode"),
    ],
)
def test_what_the_import_would_refuse_is_refused_when_the_file_arrives(alice, alice_space, settings, content, expected):
    """A NUL in a message passed the upload's check and failed the import at its turn, the turns before it
    stored; a NUL in a title or id was a 500; a NUL in a message's id, and a lone surrogate anywhere (which the
    C parser read as "?"), were kept. Every text and id is checked as the import keeps it."""
    answer = upload(alice, content)
    assert answer.status_code == 400 and expected in answer.data["detail"], answer.data
    assert not ImportUpload.objects.exists() and kept(settings) == [] and not Page.objects.exists()


def test_a_name_with_a_nul_is_refused(alice, settings):
    answer = alice.post(
        f"{SPACE}imports/files/?name=a%00b", b'[{"role": "user", "content": "hi"}]', content_type="text/plain"
    )
    assert answer.status_code == 400 and "a NUL character" in answer.data["detail"]
    assert kept(settings) == []


def test_a_long_listing_is_paged_not_sent_whole(alice, settings):
    """A file of 50,000 conversations had its 23 MB listing stored in a row and sent on every GET."""
    many = [
        {"id": f"c{n}", "title": f"Chat {n}", "messages": [{"role": "user", "content": f"hi {n}"}]} for n in range(620)
    ]
    listed = upload(alice, json.dumps(many).encode()).data
    assert (listed["conversations_total"], len(listed["conversations"])) == (620, 500)
    page = alice.get(f"{SPACE}imports/files/{listed['id']}/conversations/?page=2&page_size=200").data
    assert page["count"] == 620 and [c["key"] for c in page["results"]][:2] == ["c200", "c201"]


def test_the_same_file_brought_twice_is_kept_once_and_an_account_keeps_a_bounded_amount(alice, settings):
    body = json.dumps([{"role": "user", "content": "I keep bees"}]).encode()
    first, again = upload(alice, body).data, upload(alice, body).data
    assert first["id"] == again["id"] and len(kept(settings)) == 1
    settings.MEMORYOS = {**settings.MEMORYOS, "MAX_KEPT_IMPORT_BYTES": first["kept_bytes"] + 10}
    other = upload(alice, json.dumps([{"role": "user", "content": "I keep wasps too"}]).encode())
    assert other.status_code == 413 and "an account keeps at most" in other.data["detail"]
    assert len(kept(settings)) == 1
    assert alice.delete(f"{SPACE}imports/files/{first['id']}/").status_code == 204
    assert upload(alice, json.dumps([{"role": "user", "content": "I keep wasps too"}]).encode()).status_code == 201


@pytest.mark.django_db(transaction=True)
def test_deleting_a_space_or_a_user_deletes_the_files_brought_to_it(alice, settings):
    from memory_engine.services.uploads import uploads_expire

    for n in range(2):
        assert (
            upload(alice, json.dumps([{"role": "user", "content": f"my diary, page {n}"}]).encode()).status_code == 201
        )
    assert len(kept(settings)) == 2
    assert alice.delete(SPACE).status_code == 204
    assert kept(settings) == []
    upload(alice, json.dumps([{"role": "user", "content": "page 3"}]).encode())
    assert alice.delete("/api/v1/users/alice/").status_code == 204
    assert kept(settings) == [] and not ImportUpload.objects.exists()
    # A file a web process left behind (killed while it read it) goes an hour after it was last written.
    orphan = Path(settings.MEMORYOS["IMPORT_DIR"]) / "0123.upload"
    orphan.write_bytes(b"[")
    uploads_expire()
    assert kept(settings) == [orphan]
    import os

    os.utime(orphan, (0, 0))
    uploads_expire()
    assert kept(settings) == []


def test_an_accounts_tokens_share_its_rate(memory, settings):
    """Rates counted per token let an account with 50 tokens send 50 times as much."""
    from django.contrib.auth.models import User
    from rest_framework.test import APIClient
    from rest_framework.throttling import SimpleRateThrottle

    account = User.objects.create_user("ana", password="pw-long-enough-1")
    MemoryUser.objects.filter(external_id__in=["alice", "bob"]).update(owner=account)
    clients = []
    for user in ("alice", "bob", "alice"):
        _, secret = token_create(memory_user=MemoryUser.objects.get(external_id=user))
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {secret}")
        clients.append((user, client))
    rates = SimpleRateThrottle.THROTTLE_RATES
    SimpleRateThrottle.THROTTLE_RATES = {"api": "4/min", "chat": "1/min"}
    try:
        codes = [client.get(f"/api/v1/users/{user}/").status_code for _ in range(2) for user, client in clients]
    finally:
        SimpleRateThrottle.THROTTLE_RATES = rates
    assert codes == [200, 200, 200, 200, 429, 429]


# --- The web door: bodies decided on before they are read ----------------------------------------------


class Exchange:
    """One request through the production ASGI handler, its body offered in chunks: what was answered,
    and how many of the body's chunks the server took."""

    def __init__(self, method: str, path: str, headers: dict, chunks: list[bytes], *, then_disconnect=False):
        self.method, self.path, self.headers, self.chunks = method, path, headers, chunks
        self.then_disconnect, self.taken, self.sent = then_disconnect, 0, []

    def run(self, handler=None) -> "Exchange":
        asyncio.run(self._run(handler or GatedASGIHandler()))
        return self

    async def _run(self, handler) -> None:
        path, _, query = self.path.partition("?")
        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": self.method,
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": query.encode(),
            "root_path": "",
            "headers": [(k.lower().encode(), v.encode()) for k, v in {"host": "127.0.0.1", **self.headers}.items()],
            "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000),
        }
        last = len(self.chunks) - 1

        async def receive():
            if self.taken <= last:
                chunk = self.chunks[self.taken]
                self.taken += 1
                return {"type": "http.request", "body": chunk, "more_body": self.taken <= last}
            if self.then_disconnect:
                return {"type": "http.disconnect"}
            await asyncio.sleep(3600)

        async def send(message):
            self.sent.append(message)

        await handler(scope, receive, send)

    @property
    def status(self) -> int:
        return self.sent[0]["status"]

    @property
    def body(self) -> dict:
        return json.loads(b"".join(m.get("body", b"") for m in self.sent[1:]) or b"{}")


def _secret(user: str = "alice") -> str:
    return token_create(memory_user=MemoryUser.objects.get(external_id=user))[1]


MEGABYTE = b" " * (1 << 20)


@pytest.mark.django_db(transaction=True)
def test_an_unauthenticated_body_is_refused_before_it_is_read(memory, settings):
    """An unauthenticated 300 MB POST put 308 MB in TMPDIR before its 401."""
    huge = {"content-type": "application/json", "content-length": str(300 << 20)}
    too_large = Exchange("POST", "/api/v1/users/", huge, [MEGABYTE] * 300).run()
    assert too_large.status == 413 and too_large.taken == 0
    restore = f"{SPACE}restore/"
    export = {"content-type": "application/json", "content-length": str(5 << 20)}
    refused = Exchange("POST", restore, export, [MEGABYTE] * 5).run()
    assert refused.status == 401 and refused.taken == 0
    chunked = {"content-type": "application/json", "transfer-encoding": "chunked"}
    unknown = Exchange("POST", restore, chunked, [MEGABYTE] * 300).run()
    assert unknown.status == 401 and unknown.taken == 0
    signed = {**chunked, "authorization": f"Bearer {_secret()}"}
    cut = Exchange("POST", restore, signed, [MEGABYTE] * 300).run()
    assert cut.status == 413 and cut.taken == 9  # cut off at the limit (8 MiB) as it arrives, not read to its end
    page = Exchange("POST", "/accounts/login/", {"content-length": str(50 << 20)}, [MEGABYTE] * 50).run()
    assert page.status == 413 and page.taken == 0


@pytest.mark.django_db(transaction=True)
def test_an_upload_over_what_it_may_send_or_keep_is_refused_before_it_is_read(alice, settings):
    headers = {"content-type": "application/octet-stream", "authorization": f"Bearer {_secret()}"}
    settings.MEMORYOS = {**settings.MEMORYOS, "MAX_IMPORT_BYTES": 10 << 20, "MAX_KEPT_IMPORT_BYTES": 5 << 20}
    over = Exchange("POST", f"{SPACE}imports/files/", {**headers, "content-length": str(20 << 20)}, [MEGABYTE] * 20)
    assert over.run().status == 413 and over.taken == 0
    kept_full = Exchange("POST", f"{SPACE}imports/files/", {**headers, "content-length": str(6 << 20)}, [MEGABYTE] * 6)
    assert kept_full.run().status == 413 and kept_full.taken == 0
    assert "an account keeps at most" in kept_full.body["detail"]
    from rest_framework.throttling import SimpleRateThrottle

    cache.clear()  # the refusals above counted
    rates = SimpleRateThrottle.THROTTLE_RATES
    SimpleRateThrottle.THROTTLE_RATES = {"api": "100/min", "chat": "1/min"}
    try:
        body = json.dumps([{"role": "user", "content": "I keep bees"}]).encode()
        first = Exchange("POST", f"{SPACE}imports/files/", {**headers, "content-length": str(len(body))}, [body])
        assert first.run().status == 201
        throttled = Exchange(
            "POST", f"{SPACE}imports/files/", {**headers, "content-length": str(4 << 20)}, [MEGABYTE] * 4
        )
        assert throttled.run().status == 429 and throttled.taken == 0
    finally:
        SimpleRateThrottle.THROTTLE_RATES = rates
    assert len(kept(settings)) == 1


@pytest.mark.django_db(transaction=True)
def test_an_upload_of_no_stated_length_is_read_as_it_arrives(alice, alice_space, settings):
    """A chunked upload was read as empty ("the file is empty")."""
    headers = {
        "content-type": "application/octet-stream",
        "transfer-encoding": "chunked",
        "authorization": f"Bearer {_secret()}",
    }
    body = (Path(__file__).parents[1] / "data/imports/chatgpt-conversations.json").read_bytes()
    chunks = [body[i : i + 1000] for i in range(0, len(body), 1000)]
    answer = Exchange("POST", f"{SPACE}imports/files/?name=conversations.json", headers, chunks).run()
    assert answer.status == 201, answer.body
    assert (answer.body["turns"], answer.body["conversations_total"]) == (5, 3)


@pytest.mark.django_db(transaction=True)
def test_an_upload_whose_client_leaves_before_its_file_arrived_keeps_nothing(alice, settings):
    """The client disconnects half way through its body: the upload stops and nothing is kept (a file that
    arrived whole is kept and checked in the background, whoever waits for it)."""
    many = [{"id": f"c{n}", "messages": [{"role": "user", "content": f"hi {n}"}] * 20} for n in range(20_000)]
    body = json.dumps(many).encode()
    headers = {
        "content-type": "application/octet-stream",
        "authorization": f"Bearer {_secret()}",
        "content-length": str(len(body)),
    }
    chunks = [body[i : i + (1 << 16)] for i in range(0, len(body) // 2, 1 << 16)]
    gone = Exchange("POST", f"{SPACE}imports/files/", headers, chunks, then_disconnect=True).run()
    assert gone.sent == []  # nobody to answer
    assert not ImportUpload.objects.exists() and kept(settings) == []


def _a_check_running(folder: Path) -> int | None:
    """A process this test's request started to check its file (memory_engine/file_check.py), its order in
    this test's `folder`. Only this process's children: the suite runs on every core, and a check another
    test started is not this test's (stopping one made this test see its own file taken, ten times, and
    that test wait 30 s); nor is the last test's, which may still be ending."""
    for process in Path("/proc").iterdir():
        try:
            command = (process / "cmdline").read_bytes() if process.name.isdigit() else b""
            if b"memory_engine.file_check" not in command or str(folder).encode() not in command:
                continue
            parent = int((process / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except OSError:  # it ended meanwhile
            continue
        if parent == os.getpid():
            return int(process.name)
    return None


def _stopped_or_ended(pid: int) -> str | None:
    """The state: "T" once the process is stopped, "ended" once it has ended; None while it still runs (R, S, D)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:  # reaped
        return "ended"
    return "T" if state == "T" else "ended" if state in {"Z", "X"} else None


def _stop_a_check(folder: Path, seconds: float, stopped: list[bool]) -> None:
    """Stop the first check found for `seconds`; whether it was at work when stopped (stopped, its result not
    written yet: a check stopped as it ends has done its work) goes in `stopped`."""
    pid = wait_until(lambda: _a_check_running(folder), timeout=300, interval=0.01, what="a check")
    try:
        order = Path(Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[3].decode())  # python -m module ORDER
    except (OSError, IndexError):  # it ended meanwhile
        stopped.append(False)
        return
    os.kill(pid, signal.SIGSTOP)
    # A signal takes effect when its process next runs, which on a busy machine can be a while.
    state = wait_until(lambda: _stopped_or_ended(pid), timeout=300, interval=0.01, what="the stop to take effect")
    stopped.append(state == "T" and not order.with_suffix(".result").exists())
    time.sleep(seconds)
    with contextlib.suppress(ProcessLookupError):  # the request gave up on it and ended it
        os.kill(pid, signal.SIGCONT)


def _upload_with_the_check_stopped(client, settings, seconds: float):
    """Upload a small file while its check is stopped for `seconds`, as a busy machine leaves a process
    waiting; the answer, once the check was stopped while it was still at work. A check can end between
    being found and being stopped (on a busy machine the finding thread may wait for its turn): such a try
    tested nothing, so its file is deleted and the upload tried again."""
    for _ in range(10):
        stopped: list[bool] = []
        folder = Path(settings.MEMORYOS["IMPORT_DIR"])
        pausing = threading.Thread(target=_stop_a_check, args=(folder, seconds, stopped))
        pausing.start()
        answer = upload(client, json.dumps([{"role": "user", "content": "I play the cello."}]).encode())
        pausing.join()
        if stopped == [True]:
            return answer
        if answer.status_code == 201:
            assert client.delete(f"{SPACE}imports/files/{answer.data['id']}/").status_code == 204
    raise AssertionError("no check was stopped while it was at work in ten tries: nothing was tested")


def test_a_check_the_machine_leaves_waiting_is_slower_never_refused(alice, settings):
    # A file's check is bounded by the processor time it uses, not by the clock: on a busy machine, which
    # gives the check little of its time (here it is stopped for three seconds), the file is still taken.
    settings.MEMORYOS = {**settings.MEMORYOS, "UPLOAD_CHECK_SECONDS": 1}
    answer = _upload_with_the_check_stopped(alice, settings, 3)
    assert answer.status_code == 201, answer.data


def test_a_check_the_machine_gives_no_time_within_its_limit_is_refused_saying_to_try_again(alice, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "UPLOAD_WAIT_SECONDS": 1}
    answer = _upload_with_the_check_stopped(alice, settings, 3)
    assert answer.status_code == 503 and "try again later" in answer.data["detail"], answer.data
    assert int(answer["Retry-After"]) > 0
    assert kept(settings) == [] and not ImportUpload.objects.exists()


def test_a_file_whose_check_uses_its_processor_time_is_refused_and_nothing_is_kept(alice, settings):
    settings.MEMORYOS = {**settings.MEMORYOS, "UPLOAD_CHECK_SECONDS": 1}
    many = b"[" + b'{"role":"user","content":"hi"},{"role":"assistant","content":"yo"},' * 300_000
    answer = upload(alice, many + b'{"role":"user","content":"end"}]')
    assert answer.status_code == 413, answer.data
    assert "1 s of processor time" in answer.data["detail"]
    assert kept(settings) == [] and not ImportUpload.objects.exists()
