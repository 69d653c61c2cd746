"""The chat page's memory feed (GET .../events/, `MemoryEventsView`): a `memory` event each time the space's
revision changes, woken by the announcements of store/changes.py (services/feed.py), and bounded in
number per process and per account (`FeedSlots`)."""

import asyncio
import contextlib
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterator

from asgiref.sync import sync_to_async

from memory_engine.interfaces.api.sse import event, give_connections_back, server_shutting_down
from memory_engine.models import MemorySpace
from memory_engine.services import feed

# How often a stream reads the revision when no announcement came (a lost one, Redis down), and the
# longest a stream lasts: the page reconnects at once and says what it saw last (Last-Event-ID).
CHECK_SECONDS = 5.0
# Announcements that come close together (an import stores turns one after another) make one event.
GATHER_SECONDS = 0.25


class FeedSlots:
    """How many memory feeds a process keeps open: at most `total`, and at most `per_account` for one
    account (each open page has one; a person has a few tabs). A slot is given back when its stream
    ends, and in any case once `lifetime` (a stream's longest) and a minute have passed, so a stream whose
    end was never seen (a client gone, a generator never closed) cannot keep its slot. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._open: dict[int, tuple[str, float]] = {}  # slot -> (account, taken at)
        self._next = 0

    def take(self, account: str, *, total: int, per_account: int, lifetime: float) -> int | None:
        """A slot for one more feed of `account`, or None when the process or the account has its limit."""
        now = time.monotonic()
        with self._lock:
            expired = [slot for slot, (_, taken) in self._open.items() if now - taken > lifetime + 60]
            for slot in expired:
                del self._open[slot]
            mine = sum(1 for owner, _ in self._open.values() if owner == account)
            if len(self._open) >= total or mine >= per_account:
                return None
            self._next += 1
            self._open[self._next] = (account, now)
            return self._next

    def give_back(self, slot: int) -> None:
        with self._lock:
            self._open.pop(slot, None)


feed_slots = FeedSlots()


class SpaceFeed:
    """Server-sent events of one space's memory, for its chat page: a `memory` event each time the
    space's revision changes (services/feed.py), with the parts that changed and what the panel shows
    at a glance; its id is the revision, so a page that reconnects is told at once what it missed.
    `snapshot(changed)` renders an event's data; `gone()` what to say when the space was deleted."""

    def __init__(
        self,
        space_id: int,
        last_seen: str | None,
        snapshot: Callable[[list[str]], dict],
        *,
        lifetime: float,
        slot: int | None = None,
    ) -> None:
        self.space_id = space_id
        self.seen = feed.revision_parts(last_seen)
        self.snapshot = snapshot
        self.lifetime = lifetime
        self.slot = slot  # of feed_slots, given back when the stream ends

    def _next(self) -> bytes | None:
        """The event to send now, if the revision moved."""
        try:
            parts = feed.revision(self.space_id)
            moved = feed.changed(self.seen, parts)
            if not moved:
                return None
            data = {"changed": moved, **self.snapshot(moved)}
        except MemorySpace.DoesNotExist:
            return event("gone", {"detail": "this memory space was deleted"})
        self.seen = parts
        return event("memory", data, event_id=feed.revision_text(parts))

    def _next_in_pool(self) -> bytes | None:
        """_next, and the thread's database connection given back at once: a stream lasts minutes, and a
        connection held while it waits is one the pool lacks (ten feeds took a pool of ten)."""
        try:
            return self._next()
        finally:
            give_connections_back()

    def sync(self) -> Iterator[bytes]:
        """The stream for a WSGI server: it reads in the request's thread, holding a connection only
        while it reads."""
        yield f"retry: {RECONNECT_MS}\n\n".encode()
        ends = time.monotonic() + self.lifetime
        subscription = feed.subscribe(self.space_id)
        try:
            while time.monotonic() < ends:
                heard = subscription.heard(min(CHECK_SECONDS, max(0.0, ends - time.monotonic())))
                if heard:
                    time.sleep(GATHER_SECONDS)
                    while subscription.heard(0):
                        pass
                found = self._next_in_pool()
                yield found or b": keep-alive\n\n"
                if found and found.startswith(b"event: gone"):
                    return
        finally:
            self._done()
            subscription.close()

    async def asynchronous(self) -> AsyncIterator[bytes]:
        yield f"retry: {RECONNECT_MS}\n\n".encode()
        ends = time.monotonic() + self.lifetime
        listener = feed.listener()
        wake = listener.register(self.space_id)
        with contextlib.suppress(TimeoutError):  # so that nothing announced after the first event is missed
            async with asyncio.timeout(2.0):
                await listener.ready.wait()
        try:
            first = True
            while time.monotonic() < ends and not server_shutting_down():
                if not first:
                    announced = await _wait(wake, min(CHECK_SECONDS, max(0.0, ends - time.monotonic())))
                    if announced:
                        await asyncio.sleep(GATHER_SECONDS)
                    wake.clear()
                first = False
                found = await sync_to_async(self._next_in_pool, thread_sensitive=False)()
                yield found or b": keep-alive\n\n"
                if found and found.startswith(b"event: gone"):
                    return
        finally:
            self._done()
            listener.unregister(self.space_id, wake)

    def _done(self) -> None:
        if self.slot is not None:
            feed_slots.give_back(self.slot)
            self.slot = None


RECONNECT_MS = 1000


async def _wait(wake: asyncio.Event, seconds: float) -> bool:
    """Wait for an announcement up to `seconds`, a second at a time, ending early when the server stops."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not server_shutting_down():
        try:
            async with asyncio.timeout(min(1.0, max(0.0, deadline - time.monotonic()))):
                await wake.wait()
            return True
        except TimeoutError:
            continue
    return False
