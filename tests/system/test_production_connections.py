"""What a connection may hold of the production web server (gunicorn with uvicorn workers, DEBUG off, through
`scripts/serve web`; memory_engine/interfaces/connections.py): connections that send nothing or send slowly are
cut, and connections kept open never count as requests."""

import select
import socket

import pytest

from tests.conftest_production import serve
from tests.processes import healthy, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


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


def test_connections_that_send_no_request_or_send_it_slowly_are_cut_and_never_keep_a_client_out(start, tmp_path):
    """2,400 TCP connections that sent nothing took a web process down: each counted against its one limit,
    past which every request got 503, and none was ever closed. Silent ones past WEB_MAX_CONNECTIONS now make
    room for a new client, and every one is closed once WEB_HEADER_TIMEOUT_SECONDS pass; so is one sending its
    headers a byte at a time. A body that never finished arriving held its request (and a place among those in
    progress) for as long as the client liked: one slower than WEB_SLOWEST_BODY_BYTES_PER_SECOND allows is
    answered 408."""
    _, base, secret = serve(
        start,
        tmp_path,
        WEB_MAX_CONNECTIONS="20",
        WEB_HEADER_TIMEOUT_SECONDS="3",
        WEB_SLOWEST_BODY_BYTES_PER_SECOND="1000",
    )
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
    head = (
        "POST /api/v1/users/alice/spaces/helper/turns/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
        f"Authorization: Bearer {secret}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n"
    ).encode()
    with socket.create_connection((host, int(port)), timeout=120) as connection:
        connection.sendall(head + b'{"user_input": "')  # and nothing more
        assert connection.recv(64).split(b" ", 2)[1] == b"408"


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
