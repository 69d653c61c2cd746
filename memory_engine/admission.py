"""How many requests a web process works on at once: WEB_REQUESTS_AT_ONCE (3 by default), the rest wait.

Under ASGI, Django runs every request in a thread of its own, and a process's threads take turns on one
interpreter lock. Sixteen requests computing at once in one process did not finish sooner than three;
each cost more CPU (measured with bench_tenants: 28 ms of a web process's CPU a request at 16 clients
against 23 ms with this limit, 2026-11-24). So `AdmissionMiddleware` lets a few requests in and holds
the others, waiting without computing, until one finishes; a request that waits longer than
WEB_QUEUE_TIMEOUT_SECONDS is answered 503 with Retry-After. A request that waits on something else
(an LLM over HTTP, `waiting_elsewhere`) gives its place up meanwhile, so slow LLM replies never hold up
retrievals. Only web requests are counted; workers, commands and tests outside a request are not.

A place held longer than WEB_STUCK_SECONDS means a request's work never ended (a bug: all work in a request
is bounded): `/healthz` then answers 503 naming it, and the process's housekeeping asks the server to
replace it (housekeeping.py), since its thread cannot be stopped from outside.

Imports nothing of the engine, so any layer may mark a wait (the LLM client does).
"""

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from django.conf import settings
from django.http import JsonResponse


@dataclass
class AdmissionStats:
    limit: int = 0
    working: int = 0  # requests holding a place now
    waiting: int = 0  # requests waiting for one now
    most_working: int = 0  # the most ever held at once
    admitted: int = 0
    turned_away: int = 0  # waited longer than WEB_QUEUE_TIMEOUT_SECONDS
    gave_way: int = 0  # places given up while waiting elsewhere


class Gate:
    """A process's places for working requests; a thread holds at most one."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._places = threading.BoundedSemaphore(limit) if limit > 0 else None
        self._count = threading.Lock()
        self._held = threading.local()
        self._since: dict[int, float] = {}  # thread -> when it took its place
        self.stats = AdmissionStats(limit=limit)

    def longest_held(self) -> float:
        """Seconds the longest-held place has been held (0 when none is)."""
        with self._count:
            oldest = min(self._since.values(), default=None)
        return 0.0 if oldest is None else time.monotonic() - oldest

    def holds(self) -> bool:
        return getattr(self._held, "place", False)

    def enter(self, timeout: float | None) -> bool:
        """Take a place, waiting up to `timeout` seconds (None: as long as it takes); False when none
        came free."""
        if self._places is None:
            return True
        with self._count:
            self.stats.waiting += 1
        try:
            taken = self._places.acquire(timeout=timeout)
        finally:
            with self._count:
                self.stats.waiting -= 1
                if taken:
                    self._since[threading.get_ident()] = time.monotonic()
                    self.stats.working += 1
                    self.stats.admitted += 1
                    self.stats.most_working = max(self.stats.most_working, self.stats.working)
                else:
                    self.stats.turned_away += 1
        self._held.place = taken
        return taken

    def leave(self, *, giving_way: bool = False) -> None:
        """Free this thread's place (`giving_way`: for a while, to wait on another service)."""
        if self._places is None or not self.holds():
            return
        self._held.place = False
        with self._count:
            self._since.pop(threading.get_ident(), None)
            self.stats.working -= 1
            self.stats.gave_way += giving_way
        self._places.release()

    def give_way(self) -> None:
        self.leave(giving_way=True)


_gate: Gate | None = None
_gate_guard = threading.Lock()


def gate() -> Gate:
    """This process's gate, made with the limit in the settings at first use."""
    global _gate
    with _gate_guard:
        if _gate is None or _gate.limit != settings.WEB_REQUESTS_AT_ONCE:
            _gate = Gate(settings.WEB_REQUESTS_AT_ONCE)
        return _gate


def admission_stats() -> AdmissionStats:
    return gate().stats


def stuck_for() -> float:
    """How long a request of this process has held its place past WEB_STUCK_SECONDS (0: none has)."""
    current = _gate
    if current is None:
        return 0.0
    held = current.longest_held()
    return held if held > settings.WEB_STUCK_SECONDS else 0.0


@contextmanager
def waiting_elsewhere() -> Iterator[None]:
    """Around a wait on another service: the calling request gives its place up, and takes one again
    after (waiting for it as long as it must: the request is half done). Outside a request, nothing."""
    current = _gate
    if current is None or not current.holds():
        yield
        return
    current.give_way()
    try:
        yield
    finally:
        current.enter(timeout=None)


class AdmissionMiddleware:
    """Every request past it holds one of the process's places while Django works on it."""

    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        current = gate()
        began = time.monotonic()
        if not current.enter(timeout=settings.WEB_QUEUE_TIMEOUT_SECONDS):
            response = JsonResponse(
                {"detail": f"the server is busy: no place came free in {time.monotonic() - began:.0f} s; retry"},
                status=503,
            )
            response["Retry-After"] = "5"
            return response
        try:
            return self.get_response(request)
        finally:
            current.leave()
