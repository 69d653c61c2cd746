"""A chat reply as the model writes it, as server-sent events.

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
tab), the reply is stopped at its next word, and nothing is stored: the response is closed, and under
ASGI the server's disconnect watcher says so too (`gone`), so the reply stops even if the response's
cancellation is lost (see `asynchronous`).
"""

import asyncio
import contextlib
import logging
import queue
import threading
from collections.abc import AsyncIterator, Callable, Iterator

from django.db import connections

from memory_engine.admission import gate
from memory_engine.errors import ReplyStopped
from memory_engine.interfaces.api.sse import event

logger = logging.getLogger(__name__)

# A comment line this often while the model is silent (loading, reading a long prompt): proxies keep
# the connection open, and a WSGI server learns that the client has gone.
KEEP_ALIVE_SECONDS = 10.0
_END = object()


class ReplyStream:
    """`work(on_text)` run in a thread, its progress as server-sent events: `sync()` for a WSGI response,
    `asynchronous()` for an ASGI one. `work` returns the final reply's body; an exception it raises
    becomes an `error` event through `failure(exc)`, which returns (status, body)."""

    def __init__(
        self,
        work: Callable[[Callable[[str], bool]], dict],
        failure: Callable[[Exception], tuple[int, dict]],
        gone: Callable[[], bool] = lambda: False,
    ) -> None:
        self.work = work
        self.failure = failure
        self.gone = gone
        self.stopped = threading.Event()
        self._sent = ""
        self._put: Callable[[object], None] = lambda item: None

    # --- the reply's thread ----------------------------------------------------------------------

    def should_stop(self) -> bool:
        """Whether the reply is to stop: its response was closed, or the client has disconnected."""
        return self.stopped.is_set() or self.gone()

    def _on_text(self, text: str) -> bool:
        if self.should_stop():
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
                try:  # not asyncio.wait_for: on Python 3.11 it loses a cancellation that arrives with an item
                    async with asyncio.timeout(KEEP_ALIVE_SECONDS):
                        item = await items.get()
                except TimeoutError:
                    yield b": keep-alive\n\n"
                    continue
                if item is _END:
                    return
                yield item
        finally:  # the client went away (Django cancels the response), or the reply is over
            self.stopped.set()
