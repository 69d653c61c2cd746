"""A real OpenAI-compatible HTTP server for tests, scripted step by step.

    with FakeLLMServer() as server:
        server.script(reply("hello"), status(500), reply_json({"profile": []}))
        ...  # point an OpenAI client at server.base_url

Each request to `POST /v1/chat/completions` consumes the next scripted step. When the queue is
empty, `server.responder(request_json)` (if set) chooses the step; with neither, the server answers
500 "unscripted request", which the SDK retries and the engine sees as LLMUnavailable.
`server.requests` records every parsed request body, in order.

A request with `"stream": true` gets a reply step as server-sent events, one chunk per word (as
OpenAI streams tokens), then the finish reason, the usage when `stream_options.include_usage` asks for
it, and `data: [DONE]`. `server.streams` records, per streamed reply, how many word chunks it had to
send, how many it sent, and whether the client hung up before the end.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

CHAT_PATH = "/v1/chat/completions"
MODELS_PATH = "/v1/models"


@dataclass(frozen=True)
class Step:
    """One scripted answer. Build it with reply/reply_json/status/redirect/slow/held/malformed/drop."""

    kind: str
    text: str = ""
    finish_reason: str = "stop"
    usage: tuple[int, int] | None = None  # (prompt, completion); None: estimated from word counts
    include_usage: bool = True
    code: int = 200
    body: bytes | None = None
    seconds: float = 0.0
    then: Step | None = None
    gate: threading.Event | None = None
    chunk_seconds: float = 0.0  # pause between streamed chunks, as a model takes time per token
    pause_after: int | None = None  # streamed: send this many word chunks, then wait for `gate`


@dataclass
class StreamRecord:
    """What one streamed reply did: `sent` of `total` word chunks went out; `hung_up` when the client
    closed the connection before the end."""

    total: int
    sent: int = 0
    hung_up: bool = False


def reply(
    text: str,
    *,
    finish_reason: str = "stop",
    usage: tuple[int, int] | None = None,
    include_usage: bool = True,
    chunk_seconds: float = 0.0,
    pause_after: int | None = None,
    gate: threading.Event | None = None,
) -> Step:
    """A normal chat completion whose message content is `text` (streamed word by word, `chunk_seconds`
    apart, when the request asks for a stream; with `pause_after` and `gate`, the stream stops after
    that many words until the test sets the gate)."""
    assert (pause_after is None) == (gate is None), "pause_after and gate go together"
    return Step(
        "reply",
        text=text,
        finish_reason=finish_reason,
        usage=usage,
        include_usage=include_usage,
        chunk_seconds=chunk_seconds,
        pause_after=pause_after,
        gate=gate,
    )


def reply_json(obj: Any, **kwargs: Any) -> Step:
    """A chat completion whose content is `obj` serialised as JSON."""
    return reply(json.dumps(obj), **kwargs)


def status(code: int, body: dict | str | bytes | None = None) -> Step:
    """An HTTP error (or any status) with an OpenAI-style error body unless `body` is given."""
    if body is None:
        payload: bytes = json.dumps(
            {"error": {"message": f"fake server answered {code}", "type": "fake_error", "code": code}}
        ).encode()
    elif isinstance(body, bytes):
        payload = body
    elif isinstance(body, str):
        payload = body.encode()
    else:
        payload = json.dumps(body).encode()
    return Step("status", code=code, body=payload)


def redirect(location: str, code: int = 307) -> Step:
    """A redirect to `location` (a 307 keeps the method and body: the prompt would be sent there)."""
    return Step("redirect", code=code, text=location)


def slow(seconds: float, then: Step | None = None) -> Step:
    """Wait `seconds` before answering with `then` (default: reply("slow answer"))."""
    return Step("slow", seconds=seconds, then=then or reply("slow answer"))


def held(gate: threading.Event, then: Step) -> Step:
    """Answer with `then` once the test sets `gate`: the request stays in flight until then, so a test
    can look at the system mid-call without guessing how long the call takes."""
    return Step("held", gate=gate, then=then)


def malformed(raw_bytes: bytes = b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{') -> Step:
    """A 200 with a JSON content type whose body is `raw_bytes` (by default truncated JSON)."""
    return Step("malformed", body=raw_bytes)


def drop() -> Step:
    """Close the connection without sending any response."""
    return Step("drop")


def _word_count(value: Any) -> int:
    return len(str(value).split())


class FakeLLMServer:
    """An OpenAI-compatible chat-completions server on 127.0.0.1 and a random free port.

    Starts a daemon thread on `start()` (or entering the context manager) and stops it on `stop()`.
    """

    def __init__(self, *, model: str = "fake-model") -> None:
        self.model = model
        self.requests: list[dict] = []
        self.authorizations: list[str] = []  # each request's Authorization header, in order
        self.responder: Callable[[dict], Step] | None = None
        self.unscripted_requests = 0
        self.streams: list[StreamRecord] = []
        self._steps: deque[Step] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FakeLLMServer:
        handler = type("Handler", (_Handler,), {"fake": self})
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        # A short poll interval makes stop() return at once instead of after up to 0.5 s per test.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, name="fake-llm-server", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in slow() and held() steps
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        """What to give an OpenAI client as base_url."""
        return f"http://127.0.0.1:{self.port}/v1"

    # --- scripting -----------------------------------------------------------------------------

    def script(self, *steps: Step) -> None:
        """Queue steps; each request consumes one, in order."""
        with self._lock:
            self._steps.extend(steps)

    @property
    def pending(self) -> int:
        """How many scripted steps no request has consumed yet."""
        with self._lock:
            return len(self._steps)

    def _next_step(self, request_json: dict) -> Step | None:
        with self._lock:
            self.requests.append(request_json)
            if self._steps:
                return self._steps.popleft()
        if self.responder is not None:
            return self.responder(request_json)
        with self._lock:
            self.unscripted_requests += 1
        return None

    def usage_of(self, step: Step, request_json: dict) -> dict:
        if step.usage is not None:
            prompt, completion = step.usage
        else:
            messages = request_json.get("messages") or []
            prompt = sum(_word_count(m.get("content", "")) for m in messages if isinstance(m, dict))
            completion = _word_count(step.text)
        return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}

    def completion_body(self, step: Step, request_json: dict) -> dict:
        """The JSON body of a chat completion for a reply step, in OpenAI's shape."""
        body: dict[str, Any] = {
            "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request_json.get("model", self.model),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": step.text},
                    "finish_reason": step.finish_reason,
                }
            ],
        }
        if step.include_usage:
            body["usage"] = self.usage_of(step, request_json)
        return body

    def chunk(self, request_json: dict, delta: dict, finish_reason: str | None = None, **extra: Any) -> bytes:
        """One server-sent event of a streamed chat completion."""
        body = {
            "id": "chatcmpl-stream",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": request_json.get("model", self.model),
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}] if delta is not None else [],
            **extra,
        }
        return b"data: " + json.dumps(body).encode() + b"\n\n"


class _Handler(BaseHTTPRequestHandler):
    fake: FakeLLMServer  # set on the per-server subclass

    def log_message(self, format: str, *args: Any) -> None:
        # Test output stays readable; failures are visible in the client's exceptions instead.
        pass

    def do_GET(self) -> None:
        # OpenAI's model list, as Ollama, LM Studio and llama.cpp's server answer it.
        if self.path.rstrip("/") != MODELS_PATH:
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        self._send(200, {"object": "list", "data": [{"id": self.fake.model, "object": "model", "owned_by": "fake"}]})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if self.path.rstrip("/") != CHAT_PATH:
            self._send(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})
            return
        try:
            request_json = json.loads(raw or b"{}")
        except ValueError:
            self._send(400, {"error": {"message": "request body is not JSON", "type": "invalid_request_error"}})
            return
        self.fake.authorizations.append(self.headers.get("Authorization") or "")
        step = self.fake._next_step(request_json)
        if step is None:
            self._send(
                500,
                {
                    "error": {
                        "message": "fake LLM server: unscripted request (no step queued, no responder set)",
                        "type": "unscripted_request",
                    }
                },
            )
            return
        self._play(step, request_json)

    def _play(self, step: Step, request_json: dict) -> None:
        if step.kind == "slow":
            if self.fake._stopping.wait(step.seconds):
                return
            assert step.then is not None
            self._play(step.then, request_json)
        elif step.kind == "held":
            assert step.gate is not None and step.then is not None
            while not step.gate.wait(0.1):
                if self.fake._stopping.is_set():
                    return
            self._play(step.then, request_json)
        elif step.kind == "reply" and request_json.get("stream"):
            self._stream(step, request_json)
        elif step.kind == "reply":
            self._send(200, self.fake.completion_body(step, request_json))
        elif step.kind == "status":
            self._send_bytes(step.code, step.body or b"")
        elif step.kind == "redirect":
            self.send_response(step.code)
            self.send_header("Location", step.text)
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif step.kind == "malformed":
            self._send_bytes(200, step.body or b"")
        elif step.kind == "drop":
            self.close_connection = True
            with contextlib.suppress(OSError):
                self.connection.shutdown(socket.SHUT_RDWR)
        else:
            raise ValueError(f"unknown step kind {step.kind!r}")

    def _stream(self, step: Step, request_json: dict) -> None:
        fake = self.fake
        pieces = re.findall(r"\s*\S+", step.text) or [step.text]
        record = StreamRecord(total=len(pieces))
        fake.streams.append(record)
        self.close_connection = True
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            self.wfile.write(fake.chunk(request_json, {"role": "assistant", "content": ""}))
            for number, piece in enumerate(pieces):
                if step.chunk_seconds and fake._stopping.wait(step.chunk_seconds):
                    return
                if number == step.pause_after:
                    assert step.gate is not None
                    while not step.gate.wait(0.1):
                        if fake._stopping.is_set():
                            return
                self.wfile.write(fake.chunk(request_json, {"content": piece}))
                self.wfile.flush()
                record.sent += 1
            self.wfile.write(fake.chunk(request_json, {}, step.finish_reason))
            wants_usage = (request_json.get("stream_options") or {}).get("include_usage")
            if wants_usage and step.include_usage:
                self.wfile.write(fake.chunk(request_json, None, usage=fake.usage_of(step, request_json)))
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            record.hung_up = True

    def _send(self, code: int, body: dict) -> None:
        self._send_bytes(code, json.dumps(body).encode())

    def _send_bytes(self, code: int, payload: bytes) -> None:
        try:
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (timeout) before a slow answer arrived


def extraction(profile=(), user_facts=(), assistant_knowledge=()):
    """A scripted answer of the extraction call; items as tuples (attribute|topic, value|fact, page)."""
    return reply_json(
        {
            "profile": [{"attribute": a, "value": v, "page": p} for a, v, p in profile],
            "user_facts": [{"topic": t, "fact": f, "page": p} for t, f, p in user_facts],
            "assistant_knowledge": [{"topic": t, "fact": f, "page": p} for t, f, p in assistant_knowledge],
        }
    )


def nothing_extracted(request=None):
    return extraction()
