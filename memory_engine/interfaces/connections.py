"""What a connection may hold of a server (the web role's gunicorn workers, playground/web_worker.py, and the
MCP server over HTTP): uvicorn's HTTP protocol, with connections that do no work counted apart from requests.

Uvicorn alone keeps a connection that never sends a request open for ever, and counts it, like a request at
work, against its one limit (`limit_concurrency`), past which every request, /healthz included, is answered
503: 2,400 silent TCP connections took a web process down for as long as their client kept them. Here:

- a connection must send its request line and headers within WEB_HEADER_TIMEOUT_SECONDS of opening (or, on
  a connection kept alive, of its next request's first byte); one that does not is closed;
- a process keeps at most WEB_MAX_CONNECTIONS connections: past it, the one idle longest (no request in
  progress: silent, sending headers slowly, or kept alive between requests; by the last time it sent
  something or was answered) is closed to make room, so new clients are served however many connections
  others hold open;
- requests in progress are counted apart, against WEB_MAX_REQUESTS: one more is answered 503 at once, before
  Django sees it. A connection with no request in progress never counts against it.

A body's arrival is bounded by the handler (interfaces/asgi.py: WEB_SLOWEST_BODY_BYTES_PER_SECOND).
"""

import asyncio
import resource
import time
from dataclasses import dataclass

from django.conf import settings
from uvicorn.protocols.http.h11_impl import H11Protocol


@dataclass
class ConnectionStats:
    open: int = 0  # connections open now
    working: int = 0  # requests in progress now: headers read, answer not yet sent
    most_open: int = 0
    cut_silent: int = 0  # closed for sending no request, or its headers too slowly
    cut_for_room: int = 0  # idle, closed to make room for a new connection
    refused_busy: int = 0  # requests answered 503: WEB_MAX_REQUESTS were in progress


stats = ConnectionStats()
HEADROOM_FILES = 256  # the process's other files: database connections, index files, logs


def allow_connections() -> None:
    """Let the process open WEB_MAX_CONNECTIONS sockets and its other files, as far as the system's hard limit
    allows: past the soft limit (often 1,024), accepting fails and the server stops taking connections."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = settings.WEB_MAX_CONNECTIONS + HEADROOM_FILES
    if soft != resource.RLIM_INFINITY and soft < wanted:
        raised = wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)
        resource.setrlimit(resource.RLIMIT_NOFILE, (raised, hard))


class GuardedProtocol(H11Protocol):
    """uvicorn's h11 protocol with the bounds of the module's note. Read by uvicorn's Config as `http`."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.active_at = time.monotonic()  # when it last sent something or was answered
        self.working = False  # a request of this connection counted in progress (stats.working)
        self.header_deadline: asyncio.TimerHandle | None = None
        self._arm_header_deadline()
        stats.open = len(self.connections)
        stats.most_open = max(stats.most_open, stats.open)
        if len(self.connections) > settings.WEB_MAX_CONNECTIONS:
            self._make_room()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_header_deadline()
        self._done_working()  # its client went before the answer
        super().connection_lost(exc)
        stats.open = len(self.connections)

    def data_received(self, data: bytes) -> None:
        self.active_at = time.monotonic()
        if self.idle() and self.header_deadline is None:  # a kept-alive connection's next request begins
            self._arm_header_deadline()
        super().data_received(data)

    def handle_events(self) -> None:
        """Where a request begins (its headers read: from data received, or a pipelined one once the last is
        answered). uvicorn answers 503 itself when `limit_concurrency` is reached; it is set per request, so
        that only requests in progress count: from their headers until their answer is sent (not uvicorn's
        tasks, which go on after it while Django finishes: counted so, requests answered one after another
        were refused), never connections."""
        busy = stats.working >= settings.WEB_MAX_REQUESTS
        self.limit_concurrency = 0 if busy else None
        started = self.cycle
        super().handle_events()
        if self.cycle is not started:  # a request's headers arrived
            self._disarm_header_deadline()
            stats.refused_busy += busy
            if not busy:
                self.working = True
                stats.working += 1

    def on_response_complete(self) -> None:
        self.active_at = time.monotonic()
        self._done_working()
        super().on_response_complete()  # which may begin a pipelined request

    def _done_working(self) -> None:
        if self.working:
            self.working = False
            stats.working -= 1

    def idle(self) -> bool:
        """No request in progress: none sent yet, its headers still arriving, or between requests."""
        return self.cycle is None or self.cycle.response_complete

    def _arm_header_deadline(self) -> None:
        self.header_deadline = self.loop.call_later(settings.WEB_HEADER_TIMEOUT_SECONDS, self._headers_too_slow)

    def _disarm_header_deadline(self) -> None:
        if self.header_deadline is not None:
            self.header_deadline.cancel()
            self.header_deadline = None

    def _headers_too_slow(self) -> None:
        self.header_deadline = None
        if self.idle() and not self.transport.is_closing():
            stats.cut_silent += 1
            self.transport.close()

    def _make_room(self) -> None:
        """Close the connection idle longest (this one, when every other has a request in progress)."""
        idle = [c for c in self.connections if c is not self and isinstance(c, GuardedProtocol) and c.idle()]
        longest = min(idle, key=lambda c: c.active_at, default=self)
        stats.cut_for_room += 1
        longest.transport.close()
