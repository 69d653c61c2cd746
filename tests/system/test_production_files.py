"""The production web server (gunicorn with uvicorn workers, DEBUG off, through `scripts/serve web`) against
what a hostile account sends it: a 171-byte file whose branches loop (a naive walk never ends), bodies sent
before any check, a body of no stated length, and a request that never ends its work. What a connection may
hold: test_production_connections.py."""

import contextlib
import json
import os
import signal
import socket
import threading
from pathlib import Path

import httpx2
import pytest

from memory_engine.models import ImportUpload
from tests.conftest_production import serve
from tests.processes import healthy, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

LOOP = b'[{"title":"loop","mapping":{"a":{"parent":null,"children":["b"]},"b":{"parent":"a","children":["a"]}}}]'
UPLOADS = "/api/v1/users/alice/spaces/helper/imports/files/"


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
