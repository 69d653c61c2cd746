"""The reverse proxy in front of the production stack, as CI runs it: `scripts/serve proxy` (nginx, its
configuration playground/nginx.conf) in front of `scripts/serve web` and `scripts/serve mcp`, DEBUG off, on
loopback; other clients are other loopback addresses (127.0.0.2, 127.0.0.3). And docker-compose.yml checked
to put it in front, the only service that publishes ports."""

import ipaddress
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
import yaml
from django.contrib.auth import get_user_model

from bench.fake_llm_server import reply
from memory_engine.models import MemoryUser
from memory_engine.services.spaces import assistant_create, space_get, user_create
from memory_engine.services.tokens import token_create
from playground import proxy as proxy_config
from tests.memory_helpers import nothing_extracted
from tests.processes import ROOT, client_at, free_port, healthy, port_open, wait_until

SILENT_CONNECTIONS = 2000
# Every wait below is for an event, with this much room: a busy machine is slow, never wrong.
GENEROUS_SECONDS = 120
HELLO = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}


@pytest.fixture
def start_proxy(start, tmp_path):
    """`start_proxy(web, mcp, **env)`: `scripts/serve proxy` on free loopback ports in front of the web and
    MCP servers at those addresses, with a state folder of its own; the role and its two ports, once it
    listens."""

    def start_one(web: str, mcp: str = "127.0.0.1:9", **env: str) -> tuple[object, int, int]:
        assert shutil.which("nginx") or Path("/usr/sbin/nginx").is_file(), (
            "nginx is not installed: scripts/test installs Debian's nginx package"
        )
        port, mcp_port = free_port(), free_port()
        role = start(
            "proxy",
            PROXY_STATE_DIR=str(tmp_path / f"proxy-{port}"),
            PROXY_BIND=f"127.0.0.1:{port}",
            PROXY_MCP_BIND=f"127.0.0.1:{mcp_port}",
            PROXY_WEB_UPSTREAM=web,
            PROXY_MCP_UPSTREAM=mcp,
            **env,
        )
        wait_until(lambda: port_open(mcp_port) or not role.running(), timeout=GENEROUS_SECONDS, what="the proxy")
        assert role.running(), role.output()[-3000:]
        return role, port, mcp_port

    return start_one


def serving(start, role: str, port: int, **env: str):
    """`role` (web or mcp) on a free loopback port, trusting X-Forwarded-For from the proxy's address only,
    once its /healthz answers."""
    where = {"BIND": f"127.0.0.1:{port}"} if role == "web" else {"MCP_PORT": str(port)}
    process = start(role, FORWARDED_ALLOW_IPS="127.0.0.1", **where, **env)
    wait_until(lambda: healthy(f"http://127.0.0.1:{port}/healthz") or not process.running(), timeout=300, what=role)
    assert process.running(), process.output()[-3000:]
    return process


def token_for(name: str) -> str:
    """An API token of a memory user `name`, who has a space with `helper`."""
    user = user_create(user_id=name)
    assistant_create(assistant_id="helper")
    space_get(user_id=name, assistant_id="helper")
    return token_create(memory_user=user, name="proxy")[1]


def enough_open_files(count: int) -> None:
    """Let this process hold `count` sockets more (its soft limit raised up to the hard one)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = count + 1024
    if soft < wanted:
        assert hard == resource.RLIM_INFINITY or hard >= wanted, f"{hard} open files at most: {wanted} needed"
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


def still_open(sock: socket.socket) -> bool:
    """Whether the server has not closed `sock` (nothing to read, and no end)."""
    sock.setblocking(False)
    try:
        return sock.recv(1) != b""
    except BlockingIOError:
        return True
    except ConnectionResetError:
        return False


def closed_by_server(sock: socket.socket) -> bool:
    """Waits for the server to close `sock` (an end, or a reset); fails after GENEROUS_SECONDS."""
    sock.settimeout(GENEROUS_SECONDS)
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True


@pytest.mark.django_db(transaction=True)
def test_through_the_proxy_the_site_answers_and_silent_connections_neither_shut_others_out_nor_stay(start, start_proxy):
    """The red team's attack, on the proxy: 2,000 connections that send nothing. Another client is served
    while they are all open; and the proxy closes a connection that sends nothing, or its headers too
    slowly, after its header timeout."""
    secret = token_for("sam")
    web_port, mcp_port = free_port(), free_port()
    web = serving(start, "web", web_port)
    serving(start, "mcp", mcp_port)
    # Patient with silent connections: none is closed while the test runs, however slow the machine.
    _, port, mcp_proxy = start_proxy(
        f"127.0.0.1:{web_port}", f"127.0.0.1:{mcp_port}", PROXY_HEADER_TIMEOUT_SECONDS="3600"
    )
    other = client_at("127.0.0.3", f"http://127.0.0.1:{port}")
    for path in ("/", "/accounts/login/", "/healthz"):
        assert other.get(path).status_code == 200, path
    # The web server was told who the client is (X-Forwarded-For, trusted from the proxy's address).
    wait_until(lambda: "127.0.0.3" in web.output(), timeout=GENEROUS_SECONDS, what="the web server's access log")
    mcp = client_at("127.0.0.3", f"http://127.0.0.1:{mcp_proxy}")
    assert mcp.get("/healthz").status_code == 200
    hello = mcp.post(
        "/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": HELLO},
        headers={"Authorization": f"Bearer {secret}", "Accept": "application/json, text/event-stream"},
    )
    assert hello.status_code == 200 and "serverInfo" in hello.text, hello.text

    enough_open_files(SILENT_CONNECTIONS)
    silent = [socket.create_connection(("127.0.0.1", port)) for _ in range(SILENT_CONNECTIONS)]
    try:
        for path in ("/healthz", "/accounts/login/"):
            assert other.get(path).status_code == 200, path
        assert all(still_open(sock) for sock in silent)  # they were all open while the client was served
    finally:
        for sock in silent:
            sock.close()

    impatient, brief, _ = start_proxy(f"127.0.0.1:{web_port}", PROXY_HEADER_TIMEOUT_SECONDS="1")
    quiet = socket.create_connection(("127.0.0.1", brief))
    slow = socket.create_connection(("127.0.0.1", brief))
    slow.sendall(b"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # and the rest of its headers never
    assert closed_by_server(quiet) and closed_by_server(slow)
    assert client_at("127.0.0.3", f"http://127.0.0.1:{brief}").get("/healthz").status_code == 200
    assert impatient.stop() == 0, impatient.output()[-3000:]  # SIGTERM, as compose stops it


@pytest.mark.django_db(transaction=True)
def test_an_address_over_its_rate_or_its_connections_gets_429_from_the_proxy_while_another_gets_through(
    start, start_proxy
):
    """Per client address: past its rate, 429 from the proxy; with its requests at once all held (memory
    feeds, whose first event comes through the proxy as it is sent), 429 for one more; another address is
    served all along."""
    secret = token_for("sam")
    web_port = free_port()
    serving(start, "web", web_port, MEMORYOS_EVENTS_STREAM_SECONDS="600")

    # One request a minute and one more at once: the first two pass, the next ones (however slow) come too soon.
    _, port, _ = start_proxy(f"127.0.0.1:{web_port}", PROXY_RATE="1r/m", PROXY_BURST="1")
    flooder = client_at("127.0.0.2", f"http://127.0.0.1:{port}")
    answers = [flooder.get("/healthz") for _ in range(4)]
    assert answers[0].status_code == answers[1].status_code == 200
    refused = next(answer for answer in answers if answer.status_code == 429)
    assert "too many requests" in refused.json()["detail"] and refused.headers["Retry-After"]
    assert client_at("127.0.0.3", f"http://127.0.0.1:{port}").get("/healthz").status_code == 200

    # Two requests at once per address: two memory feeds hold them.
    _, port, _ = start_proxy(f"127.0.0.1:{web_port}", PROXY_CONNECTIONS_PER_ADDRESS="2")
    flooder = client_at("127.0.0.2", f"http://127.0.0.1:{port}")
    feed = "/api/v1/users/sam/spaces/helper/events/"
    feeds = [
        flooder.send(flooder.build_request("GET", feed, headers={"Authorization": f"Bearer {secret}"}), stream=True)
        for _ in range(2)
    ]
    kept = [response.iter_lines() for response in feeds]  # a line iterator closes its response when dropped
    for response, lines in zip(feeds, kept, strict=True):
        assert response.status_code == 200
        # The stream stays open (600 s): its first event came through the proxy unbuffered.
        assert next(line for line in lines if line.startswith("event: ")) == "event: memory"
    assert flooder.get("/healthz").status_code == 429
    assert client_at("127.0.0.3", f"http://127.0.0.1:{port}").get("/healthz").status_code == 200
    for response in feeds:
        response.close()
    wait_until(
        lambda: flooder.get("/healthz").status_code == 200, timeout=GENEROUS_SECONDS, what="the feeds' places back"
    )


@pytest.mark.django_db(transaction=True)
def test_a_streamed_reply_passes_the_proxy_as_it_is_written_and_bodies_are_held_to_the_applications_limits(
    start, start_proxy, fake_llm
):
    """The chat reply's first words reach the client through the proxy while the model is still held
    mid-reply; a file up to MEMORYOS_MAX_IMPORT_BYTES passes to the import, one byte more is refused by the
    proxy, and elsewhere the largest body taken is a restore's (MEMORYOS_API_MAX_EXPORT_BYTES)."""
    get_user_model().objects.create_user("sam", password="pw-sam-123456")
    user = MemoryUser.objects.create(external_id="sam-bot")
    _, secret = token_create(memory_user=user, name="stream")
    gate = threading.Event()
    words = "Hello there, and " + " ".join(f"word{n}" for n in range(20)) + "."
    fake_llm.responder = lambda request: (
        reply(words, pause_after=2, gate=gate) if "response_format" not in request else nothing_extracted()
    )
    limits = {
        "MEMORYOS_MAX_IMPORT_BYTES": str(1 << 20),
        "MEMORYOS_API_MAX_EXPORT_BYTES": str(64 << 10),
        "MEMORYOS_API_MAX_BODY_BYTES": str(16 << 10),
    }
    web_port = free_port()
    serving(
        start,
        "web",
        web_port,
        MEMORYOS_LLM_PROVIDER="openai",
        MEMORYOS_LLM_BASE_URL=fake_llm.base_url,
        MEMORYOS_LLM_TIMEOUT_SECONDS="600",  # the model is held longer than the client waits for a line
        **limits,
    )
    _, port, _ = start_proxy(f"127.0.0.1:{web_port}", **limits)
    api = client_at("127.0.0.3", f"http://127.0.0.1:{port}/api/v1/users/sam-bot/")
    api.headers["Authorization"] = f"Bearer {secret}"

    with api.stream("POST", "spaces/helper/chat/", json={"query": "Hi!", "stream": True}) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        lines = stream.iter_lines()
        assert next(line for line in lines if line.startswith("data: ")).startswith('data: {"text":')
        held = fake_llm.streams[0]
        assert held.sent < held.total and not held.hung_up  # the model is held mid-reply: the stream is open
        gate.set()
        assert "event: reply" in [line for line in lines if line.startswith("event: ")]

    upload = {"url": "spaces/helper/imports/files/?name=talk.json", "headers": {"Content-Type": "text/plain"}}
    said = json.dumps([{"role": "user", "content": "I keep bees on the roof. " * 40_000}]).encode()
    assert (64 << 10) < len(said) <= 1 << 20
    brought = api.post(content=said, **upload)  # arrived whole: checked in the background (no worker here)
    assert brought.status_code == 202 and brought.json()["status"] == "checking", brought.text
    too_large = api.post(content=b"x" * ((1 << 20) + 1), **upload)
    assert too_large.status_code == 413 and "larger than this path takes" in too_large.json()["detail"]
    restore = api.post("spaces/helper/restore/", content=b"x" * ((64 << 10) + 1))
    assert restore.status_code == 413 and "larger than this path takes" in restore.json()["detail"]


def test_the_compose_file_puts_the_proxy_in_front_and_only_it_publishes_ports(monkeypatch):
    for name in [name for name in os.environ if name.startswith("PROXY_")]:
        monkeypatch.delenv(name)
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    services = compose["services"]
    proxy = services["proxy"]
    assert proxy["command"] == "proxy"
    assert {name for name, service in services.items() if "ports" in service} == {"proxy"}
    # Its configuration as compose leaves it (the defaults): listening on the ports it publishes, in front
    # of web and mcp on theirs (BIND and MCP_PORT are left at their defaults too).
    filled = proxy_config.values()
    assert proxy["ports"] == [f"{filled['WEB_BIND'].split(':')[1]}:8000", f"{filled['MCP_BIND'].split(':')[1]}:8001"]
    assert (filled["WEB_UPSTREAM"], filled["MCP_UPSTREAM"]) == ("web:8000", "mcp:8001")
    assert "BIND" not in services["web"]["environment"] and "MCP_PORT" not in services["mcp"]["environment"]
    assert proxy["depends_on"]["web"]["condition"] == proxy["depends_on"]["mcp"]["condition"] == "service_healthy"
    assert "healthcheck" in proxy
    # Web and mcp believe X-Forwarded-For from the proxy's fixed address alone, which no other container
    # can be given (outside the range Docker hands out).
    address = ipaddress.ip_address(proxy["networks"]["default"]["ipv4_address"])
    (network,) = compose["networks"]["default"]["ipam"]["config"]
    assert address in ipaddress.ip_network(network["subnet"])
    assert address not in ipaddress.ip_network(network["ip_range"])
    for name in ("web", "mcp"):
        assert services[name]["environment"]["FORWARDED_ALLOW_IPS"] == str(address), name


def test_a_bad_proxy_setting_stops_the_proxy_with_its_name(tmp_path):
    made = subprocess.run(
        [sys.executable, "-m", "playground.proxy", str(tmp_path / "nginx.conf")],
        cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "PROXY_RATE": "fast"},
        capture_output=True,
        text=True,
    )
    assert made.returncode == 1 and "PROXY_RATE must look like 10r/s" in made.stderr
    assert not (tmp_path / "nginx.conf").exists()
