"""Server-sent events: a chat reply as the model writes it, and a space's memory as it changes.

`ChatView` with `"stream": true` answers `text/event-stream`:

    event: delta     data: {"text": "..."}      the words added since the last event
    event: restart   data: {}                   the words so far were dropped (the guard rejected them and
                                                the model was asked again); what follows starts afresh
    event: reply     data: {...}                the stored turn: the same body as a reply not streamed
    event: error     data: {"status": 502, "detail": "..."}   no reply; nothing was stored

The reply runs in a thread of its own (the model's callback cannot yield to the response), and its
events reach the response through a queue. Under ASGI the response reads them asynchronously, so a
stream holds no server thread while the model writes; under WSGI (the development server) it holds its
request's thread, as every WSGI response does. When the client goes away (the stop button, a closed
tab), the response is closed, the reply is stopped at its next word, and nothing is stored.

`MemoryEventsView` (GET .../events/) is the chat page's memory feed, `SpaceFeed`: see its docstring and
store/changes.py.
"""

import asyncio
import contextlib
import json
import logging
import queue
import signal
import threading
import time
from collections import defaultdict
from collections.abc import AsyncIterator, Callable, Iterator

from asgiref.sync import sync_to_async
from django.db import connections
from django.http import StreamingHttpResponse
from rest_framework.renderers import BaseRenderer

from memory_engine.admission import gate
from memory_engine.models import MemorySpace
from memory_engine.services import feed
from memory_engine.services.conversation import ReplyStopped

logger = logging.getLogger(__name__)

# A comment line this often while the model is silent (loading, reading a long prompt): proxies keep
# the connection open, and a WSGI server learns that the client has gone.
KEEP_ALIVE_SECONDS = 10.0
_END = object()


def event(name: str, data: dict, *, event_id: str | None = None) -> bytes:
    """One server-sent event. Pure."""
    head = f"id: {event_id}\n" if event_id is not None else ""
    return f"{head}event: {name}\ndata: {json.dumps(data, separators=(',', ':'))}\n\n".encode()


def event_stream(content: Iterator[bytes] | AsyncIterator[bytes]) -> StreamingHttpResponse:
    """A response that sends `content` as it comes: no caching, no buffering by a proxy (nginx honours
    X-Accel-Buffering)."""
    response = StreamingHttpResponse(content, content_type="text/event-stream; charset=utf-8")
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"
    return response


class EventStreamRenderer(BaseRenderer):
    """For a client that accepts only text/event-stream: a refusal before the stream began (a 400, 404,
    429) comes as one `error` event, with the same status and detail as JSON would carry."""

    media_type = "text/event-stream"
    format = "event-stream"
    charset = "utf-8"

    def render(self, data, accepted_media_type=None, renderer_context=None) -> bytes:
        response = (renderer_context or {}).get("response")
        code = response.status_code if response is not None else 200
        return event("error" if code >= 400 else "message", {"status": code, **(data or {})})


class ReplyStream:
    """`work(on_text)` run in a thread, its progress as server-sent events: `sync()` for a WSGI response,
    `asynchronous()` for an ASGI one. `work` returns the final reply's body; an exception it raises
    becomes an `error` event through `failure(exc)`, which returns (status, body)."""

    def __init__(
        self,
        work: Callable[[Callable[[str], bool]], dict],
        failure: Callable[[Exception], tuple[int, dict]],
    ) -> None:
        self.work = work
        self.failure = failure
        self.stopped = threading.Event()
        self._sent = ""
        self._put: Callable[[object], None] = lambda item: None

    # --- the reply's thread ----------------------------------------------------------------------

    def _on_text(self, text: str) -> bool:
        if self.stopped.is_set():
            return True
        if text.startswith(self._sent):
            delta = text[len(self._sent) :]
        else:  # a new attempt: its words replace the rejected ones
            self._put(event("restart", {}))
            delta = text
        self._sent = text
        if delta:
            self._put(event("delta", {"text": delta}))
        return False

    def _run(self) -> None:
        # The reply's work counts among the process's requests at work (memory_engine/admission.py), as the
        # request unstreamed would; waiting on an LLM over HTTP gives the place up meanwhile.
        place = gate()
        place.enter(timeout=None)
        try:
            self._put(event("reply", self.work(self._on_text)))
        except ReplyStopped:
            logger.info("a streamed reply was stopped by its client; nothing was stored")
        except Exception as exc:  # every failure is the client's to see, as the same request unstreamed would
            code, body = self.failure(exc)
            if code >= 500 and code not in (502, 503):
                logger.exception("a streamed reply failed")
            self._put(event("error", {"status": code, **body}))
        finally:
            place.leave()
            connections.close_all()  # this thread's own connections
            self._put(_END)

    def _start(self) -> None:
        threading.Thread(target=self._run, name="reply-stream", daemon=True).start()

    # --- the response's side ---------------------------------------------------------------------

    def sync(self) -> Iterator[bytes]:
        items: queue.Queue = queue.Queue()
        self._put = items.put
        self._start()
        try:
            while True:
                try:
                    item = items.get(timeout=KEEP_ALIVE_SECONDS)
                except queue.Empty:
                    yield b": keep-alive\n\n"
                    continue
                if item is _END:
                    return
                yield item
        finally:  # the client went away, or the reply is over
            self.stopped.set()

    async def asynchronous(self) -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        items: asyncio.Queue = asyncio.Queue()

        def put(item: object) -> None:
            with contextlib.suppress(RuntimeError):  # the loop is closed: the server stopped, nobody reads
                loop.call_soon_threadsafe(items.put_nowait, item)

        self._put = put
        self._start()
        try:
            while True:
                try:
                    item = await asyncio.wait_for(items.get(), KEEP_ALIVE_SECONDS)
                except TimeoutError:
                    yield b": keep-alive\n\n"
                    continue
                if item is _END:
                    return
                yield item
        finally:  # the client went away (Django cancels the response), or the reply is over
            self.stopped.set()


# --- The memory panel's feed ----------------------------------------------------------------------------

# How often a stream reads the revision when no announcement came (a lost one, Redis down), and the
# longest a stream lasts: the page reconnects at once and says what it saw last (Last-Event-ID).
CHECK_SECONDS = 5.0
# Announcements that come close together (an import stores turns one after another) make one event.
GATHER_SECONDS = 0.25


def server_shutting_down() -> bool:
    """Has the server been told to stop (SIGTERM)? uvicorn's handler of the signal is its Server's method,
    and the Server says so; an open stream then ends, so that a restart does not wait for it (the page
    reconnects to the next process). False under any other server."""
    server = getattr(signal.getsignal(signal.SIGTERM), "__self__", None)
    return bool(getattr(server, "should_exit", False))


def give_connections_back() -> None:
    """Close this thread's database connections (a pool's go back to it), except one inside a transaction
    (a test's)."""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close()


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
    space's revision changes (store/changes.py), with the parts that changed and what the panel shows
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
        pubsub = _subscribe_sync(self.space_id)
        try:
            while time.monotonic() < ends:
                message = _next_message_sync(pubsub, min(CHECK_SECONDS, max(0.0, ends - time.monotonic())))
                if message:
                    time.sleep(GATHER_SECONDS)
                    while _next_message_sync(pubsub, 0):
                        pass
                found = self._next_in_pool()
                yield found or b": keep-alive\n\n"
                if found and found.startswith(b"event: gone"):
                    return
        finally:
            self._done()
            if pubsub is not None:
                with contextlib.suppress(Exception):
                    pubsub.close()

    async def asynchronous(self) -> AsyncIterator[bytes]:
        yield f"retry: {RECONNECT_MS}\n\n".encode()
        ends = time.monotonic() + self.lifetime
        listener = _listener()
        wake = listener.register(self.space_id)
        with contextlib.suppress(TimeoutError):  # so that nothing announced after the first event is missed
            await asyncio.wait_for(listener.ready.wait(), 2.0)
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
            await asyncio.wait_for(wake.wait(), min(1.0, max(0.0, deadline - time.monotonic())))
            return True
        except TimeoutError:
            continue
    return False


def _subscribe_sync(space_id: int):
    url = feed.events_url()
    if url is None:
        return None
    try:
        import redis

        pubsub = redis.Redis.from_url(url, socket_connect_timeout=0.5).pubsub(ignore_subscribe_messages=True)
        pubsub.subscribe(feed.channel(space_id))
        return pubsub
    except Exception as exc:  # no announcements: the stream reads the revision every CHECK_SECONDS
        logger.info("the memory feed of space %s hears no announcements (%s)", space_id, exc)
        return None


def _next_message_sync(pubsub, timeout: float) -> bool:
    if pubsub is None:
        if timeout:
            time.sleep(timeout)
        return False
    try:
        return pubsub.get_message(timeout=timeout) is not None
    except Exception:  # Redis went away mid-stream
        if timeout:
            time.sleep(timeout)
        return False


class _Listener:
    """One subscription per process (per event loop) to every space's announcements, waking the streams
    of the spaces announced: a thousand open pages cost one Redis connection, not a thousand."""

    def __init__(self) -> None:
        self.waiting: dict[int, set[asyncio.Event]] = defaultdict(set)
        self.task: asyncio.Task | None = None
        self.ready = asyncio.Event()  # subscribed: what is announced from now on is heard

    def register(self, space_id: int) -> asyncio.Event:
        if self.task is None or self.task.done():
            self.task = asyncio.get_running_loop().create_task(self._listen())
        wake = asyncio.Event()
        self.waiting[space_id].add(wake)
        return wake

    def unregister(self, space_id: int, wake: asyncio.Event) -> None:
        self.waiting[space_id].discard(wake)
        if not self.waiting[space_id]:
            del self.waiting[space_id]

    async def _listen(self) -> None:
        url = feed.events_url()
        if url is None:
            return
        import redis.asyncio

        while True:
            try:
                client = redis.asyncio.Redis.from_url(url, socket_connect_timeout=2)
                async with client.pubsub(ignore_subscribe_messages=True) as pubsub:
                    await pubsub.psubscribe(feed.CHANNEL_PREFIX + "*")
                    self.ready.set()
                    async for message in pubsub.listen():
                        name = message.get("channel") or b""
                        space_id = name.decode(errors="replace").removeprefix(feed.CHANNEL_PREFIX)
                        for wake in self.waiting.get(int(space_id) if space_id.isdigit() else -1, ()):
                            wake.set()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis is down: the streams read the revision every CHECK_SECONDS
                self.ready.clear()
                logger.info("the memory feeds hear no announcements (%s); trying again in 5 s", exc)
                await asyncio.sleep(5)


_listeners: dict[int, _Listener] = {}


def _listener() -> _Listener:
    loop = asyncio.get_running_loop()
    return _listeners.setdefault(id(loop), _Listener())
