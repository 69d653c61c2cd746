"""Long work in a web request, kept in bounds: one at a time per caller, stopped by a deadline or when the
client leaves (interfaces/asgi.py tells)."""

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from django.core.cache import cache
from rest_framework import status
from rest_framework.exceptions import APIException, Throttled

from memory_engine.interfaces.asgi import ClientGone, client_gone

HELD_AT_MOST_SECONDS = 900  # a marker a killed process left behind lapses after this


class ServerTooBusy(APIException):
    """Work on what a request sent waited past its deadline: the machine gave it too little of its time (503:
    the same request later may pass; what bounds the work itself is its own limit, as a file's check's
    processor time)."""

    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "too_busy"
    wait = 30  # seconds; DRF's handler sends it as Retry-After


@contextmanager
def one_at_a_time(key: str, busy: str) -> Iterator[None]:
    """Hold `key` (in Django's cache, shared by the web processes when CACHE_URL is set) while the block
    runs; 429 (`busy`) when it is held already."""
    marker = f"memoryos:one-at-a-time:{key}"
    if not cache.add(marker, 1, timeout=HELD_AT_MOST_SECONDS):
        raise Throttled(wait=10, detail=f"{busy}; wait for it to end")
    try:
        yield
    finally:
        cache.delete(marker)


def work_wait(request, seconds: float, what: str) -> Callable[[], None]:
    """A check for long work to call as it goes: raises ClientGone once the client has left, and
    ServerTooBusy `seconds` after now."""
    ends = time.monotonic() + seconds

    def check() -> None:
        if client_gone(request):
            raise ClientGone("the client disconnected")
        if time.monotonic() > ends:
            raise ServerTooBusy(f"{what} waited more than {seconds:.0f} s for the machine: try again later")

    return check
