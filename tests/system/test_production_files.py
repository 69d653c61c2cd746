"""The production web server (gunicorn with uvicorn workers, DEBUG off, through `scripts/serve web`) against
what a hostile account sends it: a 171-byte file whose branches loop (a naive walk never ends), bodies sent
before any check, a body of no stated length, and a request that never ends its work."""

import contextlib
import json
import os
import select
import signal
import socket
import threading
from pathlib import Path

import httpx2
import pytest

from memory_engine.models import ImportUpload, MemoryUser
from memory_engine.services.spaces import assistant_create, space_get, user_create
from memory_engine.services.tokens import token_create
from tests.processes import free_port, healthy, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

LOOP = b'[{"title":"loop","mapping":{"a":{"parent":null,"children":["b"]},"b":{"parent":"a","children":["a"]}}}]'
UPLOADS = "/api/v1/users/alice/spaces/helper/imports/files/"


def serve(start, tmp_path: Path, **env: str) -> tuple[object, str, str]:
    """Migrate, then one web process with a TMPDIR of its own; the role, its URL and alice's token."""
    assert start("migrate").process.wait(300) == 0
    user_create(user_id="alice")
    assistant_create(assistant_id="helper")
    space_get(user_id="alice", assistant_id="helper")
    _, secret = token_create(memory_user=MemoryUser.objects.get(external_id="alice"))
    port = free_port()
    (tmp_path / "tmp").mkdir()
    web = start(
        "web",
        BIND=f"127.0.0.1:{port}",
        TMPDIR=str(tmp_path / "tmp"),
        MEMORYOS_IMPORT_DIR=str(tmp_path / "imports"),
        **env,
    )
    base = f"http://127.0.0.1:{port}"
    wait_until(lambda: healthy(f"{base}/healthz") or not web.running(), timeout=300, what="the web server")
    assert web.running(), web.output()[-3000:]
    return web, base, secret


def answer_to_headers(base: str, request: bytes, body_bytes: int) -> tuple[int, int]:
    """Send a request's head, then up to `body_bytes` of its body a megabyte at a time, stopping as soon
    as an answer comes; returns its status and how much of the body was sent by then."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=120) as connection:
        connection.sendall(request)
        connection.settimeout(1.0)
        sent, answer = 0, b""
        while not answer:
            try:
                answer = connection.recv(4096)
            except TimeoutError:
                if sent >= body_bytes:
                    connection.settimeout(120)
                    continue
                try:
                    connection.sendall(b" " * (1 << 20))
                except OSError:  # the server closed the connection after answering
                    connection.settimeout(120)
                    continue
                sent += 1 << 20
    return int(answer.split(b" ", 2)[1]), sent


def checked(client, answer) -> dict:
    """The upload a 202 answered with, once a worker's check of it is over (polled as a client does)."""
    assert answer.status_code == 202 and answer.json()["status"] == "checking", answer.text
    path = f"{UPLOADS}{answer.json()['id']}/"
    over = lambda: (now := client.get(path).json())["status"] != "checking" and now  # noqa: E731
    return wait_until(over, timeout=300, what="the file's check")


def test_hostile_bodies_are_refused_before_they_are_read_and_a_looping_file_at_once(start, tmp_path):
    web, base, secret = serve(start, tmp_path)
    start("worker", MEMORYOS_IMPORT_DIR=str(tmp_path / "imports"), MEMORYOS_INDEX_DIR=str(tmp_path / "w-indexes"))
    client = httpx2.Client(base_url=base, timeout=120, headers={"Authorization": f"Bearer {secret}"})

    # A 171-byte ChatGPT file whose branches loop: refused by its check, and the process goes on answering.
    looped = checked(client, client.post(f"{UPLOADS}?name=loop.json", content=LOOP))
    assert looped["status"] == "refused" and "the message tree has a cycle" in looped["error"], looped
    assert healthy(f"{base}/healthz") and client.get("/api/v1/users/alice/").status_code == 200

    # An unauthenticated 300 MB POST, and an unauthenticated export to restore: answered from the headers.
    status, sent = answer_to_headers(
        base,
        b"POST /api/v1/users/ HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Content-Length: 314572800\r\n\r\n",
        300 << 20,
    )
    assert status == 413 and sent < 32 << 20
    status, sent = answer_to_headers(
        base,
        b"POST /api/v1/users/alice/spaces/helper/restore/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        b"Content-Type: application/json\r\nContent-Length: 8000000\r\n\r\n",
        8_000_000,
    )
    assert status == 401 and sent < 8_000_000
    assert list((tmp_path / "tmp").iterdir()) == []  # nothing spooled

    # A file sent with no stated length (chunked) is read as it arrives, not taken as empty.
    body = json.dumps([{"role": "user", "content": "I keep bees on the roof"}]).encode()
    chunked = checked(client, client.post(f"{UPLOADS}?name=bees.json", content=iter([body[:10], body[10:]])))
    assert chunked["status"] == "ready" and chunked["turns"] == 1, chunked
    assert ImportUpload.objects.filter(space__user__external_id="alice", status="ready").count() == 1
    assert web.running()


def closed_by_server(connection: socket.socket) -> bool:
    """Whether the server closed the connection (an end of file, or a reset), waiting for it as long as the
    socket's timeout."""
    try:
        return connection.recv(1) == b""
    except ConnectionResetError:
        return True


def status_of(connection: socket.socket, request: bytes) -> str:
    connection.sendall(request)
    return connection.recv(64).split(b" ", 2)[1].decode()


def closed_while_sending_slowly(connection: socket.socket, data: bytes) -> bool:
    """Send `data` a byte every 0.2 s (two minutes for 600 bytes): whether the server closed the connection
    before it was all sent."""
    for byte in data:
        try:
            connection.sendall(bytes([byte]))
        except OSError:
            return True
        readable, _, _ = select.select([connection], [], [], 0.2)
        if readable and closed_by_server(connection):
            return True
    return False


HEALTH = b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def test_connections_that_send_no_request_never_keep_a_client_out(start, tmp_path):
    """2,400 TCP connections that sent nothing took a web process down: each counted against its one limit,
    past which every request got 503, and none was ever closed. Silent ones past WEB_MAX_CONNECTIONS now make
    room for a new client, and every one is closed once WEB_HEADER_TIMEOUT_SECONDS pass; so is one sending its
    headers a byte at a time."""
    _, base, _ = serve(start, tmp_path, WEB_MAX_CONNECTIONS="20", WEB_HEADER_TIMEOUT_SECONDS="3")
    host, port = base.removeprefix("http://").split(":")
    silent = [socket.create_connection((host, int(port)), timeout=120) for _ in range(60)]
    try:
        with socket.create_connection((host, int(port)), timeout=120) as client:
            assert status_of(client, HEALTH) == "200"
        assert all(closed_by_server(connection) for connection in silent)
        with socket.create_connection((host, int(port)), timeout=120) as slow:
            slow.sendall(b"GET /healthz HTTP/1.1\r\n")
            assert closed_while_sending_slowly(slow, b"X-Pad: 1\r\n" * 60)  # headers that never end
    finally:
        for connection in silent:
            connection.close()


def test_requests_in_progress_count_apart_from_connections_kept_open(start, tmp_path):
    """Connections kept alive between requests used to count as requests: with a limit of 3, the third
    connection got 503. A new connection is served however many others are kept open (the oldest idle one
    makes room); what is answered 503 at once is a request past WEB_MAX_REQUESTS in progress (two memory
    feeds held open here)."""
    _, base, secret = serve(start, tmp_path, WEB_MAX_CONNECTIONS="3", WEB_MAX_REQUESTS="2")
    host, port = base.removeprefix("http://").split(":")
    kept, answers = [], []
    try:
        for _ in range(6):  # each kept open once answered, the earliest closed to make room
            kept.append(socket.create_connection((host, int(port)), timeout=120))
            answers.append(status_of(kept[-1], HEALTH))
    finally:
        for connection in kept:
            connection.close()
    assert answers == ["200"] * 6
    feed = (
        f"GET /api/v1/users/alice/spaces/helper/events/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {secret}\r\nAccept: text/event-stream\r\n\r\n"
    ).encode()
    feeds = [socket.create_connection((host, int(port)), timeout=120) for _ in range(2)]
    try:
        assert [status_of(connection, feed) for connection in feeds] == ["200", "200"]
        with socket.create_connection((host, int(port)), timeout=120) as client:
            assert status_of(client, HEALTH) == "503"
    finally:
        for connection in feeds:
            connection.close()
    wait_until(lambda: healthy(f"{base}/healthz"), timeout=120, what="the feeds to end")


def test_a_body_sent_slowly_is_cut_off(start, tmp_path):
    """A body that never finished arriving held its request (and a place among those in progress) for as
    long as the client liked. One slower than WEB_SLOWEST_BODY_BYTES_PER_SECOND allows is answered 408."""
    _, base, secret = serve(start, tmp_path, WEB_HEADER_TIMEOUT_SECONDS="2", WEB_SLOWEST_BODY_BYTES_PER_SECOND="1000")
    host, port = base.removeprefix("http://").split(":")
    head = (
        "POST /api/v1/users/alice/spaces/helper/turns/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {secret}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    ).encode()
    with socket.create_connection((host, int(port)), timeout=120) as connection:
        connection.sendall(head + b'{"user_input": "')  # and nothing more
        assert connection.recv(64).split(b" ", 2)[1] == b"408"


def running(web, word: bytes) -> set[int]:
    """The web role's processes whose command line holds `word` (its gunicorn workers, its files' checks)."""
    found = set()
    for pid in web.pids()[1:]:
        with contextlib.suppress(OSError):
            if word in Path(f"/proc/{pid}/cmdline").read_bytes():
                found.add(pid)
    return found


def test_a_web_process_with_a_request_at_work_past_the_stuck_limit_is_replaced_while_a_new_one_serves(start, tmp_path):
    """A thread that never ends its work cannot be stopped from outside, and gunicorn's own timeout watches
    the event loop, which stays free: the process's housekeeping asks for its replacement. It used to end
    itself (SIGTERM), and with one web process nothing took connections until its stuck request ended; now
    gunicorn starts the new process first. The request stuck here is a file checked within its request
    (inline), its check stopped with SIGSTOP for as long as the test needs."""
    web, base, secret = serve(
        start,
        tmp_path,
        WEB_STUCK_SECONDS="3",
        MEMORYOS_INDEX_PRUNE_SECONDS="1",
        MEMORYOS_CONSOLIDATION="inline",
        WEB_GRACEFUL_TIMEOUT_SECONDS="600",  # the stuck request is let finish once its check goes on
    )
    big = tmp_path / "long.json"
    with big.open("wb") as out:  # a file whose check takes seconds (5 on an idle machine): 800,000 tiny messages
        out.write(b"[" + b'{"role":"user","content":"hi"},{"role":"assistant","content":"yo"},' * 400_000)
        out.write(b'{"role":"user","content":"end"}]')
    client = httpx2.Client(base_url=base, timeout=900, headers={"Authorization": f"Bearer {secret}"})
    first_workers = running(web, b"gunicorn")
    answers = []
    sending = threading.Thread(
        target=lambda: answers.append(client.post(f"{UPLOADS}?name=long.json", content=big.read_bytes()))
    )
    sending.start()
    checker = wait_until(lambda: running(web, b"memory_engine.file_check"), timeout=300, interval=0.01, what="a check")
    (checker,) = checker
    os.kill(checker, signal.SIGSTOP)
    try:
        wait_until(lambda: "asking gunicorn to replace this process" in web.output(), timeout=300, what="the watchdog")
        wait_until(
            lambda: running(web, b"gunicorn") - first_workers and healthy(f"{base}/healthz"),
            timeout=300,
            what="a new worker serving",
        )
        assert sending.is_alive()  # served by the new process while the stuck request is still at work
    finally:
        os.kill(checker, signal.SIGCONT)
    sending.join(timeout=900)
    assert answers and answers[0].status_code == 201, answers and answers[0].text
    assert web.running()
