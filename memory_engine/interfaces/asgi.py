"""The web process's door (playground/asgi.py): what a request may send is decided from its headers before
its body is read, and work for a client that left can stop.

Django's own ASGIHandler reads every body whole (to memory, then to a temporary file) before any middleware
or view sees the request: an unauthenticated 300 MB POST to /api/v1/users/ put 308 MB in TMPDIR before its
401, and a throttled upload the same before its 429. Here:

- each path has a body limit (an API view's `body_limit()`, MEMORYOS_API_MAX_BODY_BYTES for everything
  else); a larger Content-Length is answered 413 at once, and a body of no stated length (chunked) is cut
  off at the limit as it arrives;
- a body of an API view larger than EARLY_CHECK_BYTES, or of no stated length, is read only after the
  request has passed, on its headers alone, everything the view checks before reading (authentication,
  permissions, throttles, size): the request is run once with no body and the view answers
  PRECHECK_PASSED (or why not) without doing its work, and its real run does not count against the
  throttles again;
- a view that reads its body as it arrives (`streams_body`: the import upload) is given it unread: it
  pulls it from the connection a chunk at a time (ArrivingBody), giving its admission place up while it
  waits on the client, and stops when the client goes quiet for MEMORYOS_UPLOAD_IDLE_SECONDS;
- any other body must arrive at WEB_SLOWEST_BODY_BYTES_PER_SECOND on average, after a grace of
  WEB_HEADER_TIMEOUT_SECONDS, or the request is answered 408: a client sending a byte now and then holds
  no request open for long (interfaces/connections.py bounds the headers the same way);
- when the client disconnects, `client_gone(request)` says so, and long work polls it.
"""

import asyncio
import concurrent.futures
import contextlib
import contextvars
import io
import tempfile
import threading

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.exceptions import RequestAborted
from django.core.handlers.asgi import ASGIHandler, get_script_prefix
from django.core.signals import request_finished, request_started
from django.http import HttpResponse, JsonResponse
from django.urls import Resolver404, resolve, set_script_prefix

from memory_engine.admission import waiting_elsewhere
from memory_engine.config import memory_settings

GONE = "memoryos.client_gone"  # the scope's threading.Event, set when the client disconnects
PRECHECK = "memoryos.precheck"  # in the scope of the bodiless first run of a request
PRECHECKED = "memoryos.prechecked"  # in the scope of the real run, once the first passed
PRECHECK_PASSED = 299  # what a view answers the first run when all its checks passed (never sent)
EARLY_CHECK_BYTES = 64 * 1024  # smaller bodies are read before the checks: spooled in memory, cheaply


class ClientGone(Exception):
    """The client disconnected, or stopped sending its body, before the request was done."""


def client_gone(request) -> bool:
    """Whether the client of this request (a Django or DRF request) has disconnected."""
    scope = getattr(getattr(request, "_request", request), "scope", None) or {}
    gone = scope.get(GONE)
    return gone is not None and gone.is_set()


def is_precheck(request) -> bool:
    scope = getattr(getattr(request, "_request", request), "scope", None) or {}
    return bool(scope.get(PRECHECK))


def was_prechecked(request) -> bool:
    scope = getattr(getattr(request, "_request", request), "scope", None) or {}
    return bool(scope.get(PRECHECKED))


def _view_class(path: str):
    try:
        match = resolve(path)
    except Resolver404:
        return None
    return getattr(match.func, "cls", None)


def _body_plan(path: str) -> tuple[int, bool, bool]:
    """(the body limit, whether its view reads a body early (a checked API view), whether it streams it)."""
    view = _view_class(path)
    if view is None or not hasattr(view, "body_limit"):
        return memory_settings().api_max_body_bytes, False, False
    return view.body_limit(), True, bool(getattr(view, "streams_body", False))


def _declared(scope) -> tuple[int | None, bool]:
    """The body's stated length (None when unknown) and whether one may follow at all."""
    length, chunked = None, False
    for name, value in scope.get("headers", []):
        if name == b"content-length":
            try:
                length = int(value)
            except ValueError:
                length = -1
        elif name == b"transfer-encoding" and b"chunked" in value.lower():
            chunked = True
    if length is not None:
        return length, length > 0
    return None, chunked


class ArrivingBody(io.RawIOBase):
    """A request's body, read from the connection as the view asks for it (in the view's thread), up to
    `limit` bytes; ClientGone when the client disconnects or sends nothing for `idle` seconds."""

    def __init__(self, receive, loop: asyncio.AbstractEventLoop, gone: threading.Event, limit: int, idle: float):
        super().__init__()
        self._receive, self._loop, self._gone, self._limit, self._idle = receive, loop, gone, limit, idle
        # receive() runs in the request's own context, as Django's reading of a body does: what it sets in
        # motion on the loop (uvicorn re-arms the connection's reader) must not carry the view thread's
        # context, whose asgiref executor is gone once the request ends (the next request on the
        # connection failed with "CurrentThreadExecutor already quit").
        self._context = contextvars.copy_context()
        self._buffer = bytearray()
        self._done = False  # the last chunk came (read in the view's thread)
        self.received = 0
        self.complete = asyncio.Event()  # the same, for the disconnect watcher on the loop

    def readable(self) -> bool:
        return True

    def _next_message(self) -> dict:
        result: concurrent.futures.Future = concurrent.futures.Future()
        started: list[asyncio.Task] = []

        def start() -> None:
            task = self._loop.create_task(self._receive())
            started.append(task)
            task.add_done_callback(lambda done: _settle(result, done))

        self._loop.call_soon_threadsafe(start, context=self._context.copy())
        try:
            with waiting_elsewhere():  # waiting on the client is not work: the place is given up
                return result.result(timeout=self._idle)
        except (TimeoutError, concurrent.futures.CancelledError):
            self._loop.call_soon_threadsafe(lambda: [task.cancel() for task in started])
            self._gone.set()
            raise ClientGone(f"the client sent nothing for {self._idle:.0f} s") from None

    def read(self, size: int = -1) -> bytes:
        while not self._done and (size < 0 or len(self._buffer) < size):
            message = self._next_message()
            if message["type"] == "http.disconnect":
                self._gone.set()
                raise ClientGone("the client disconnected")
            chunk = message.get("body", b"")
            self.received += len(chunk)
            if self.received > self._limit:
                raise RequestTooLarge(self._limit)
            self._buffer += chunk
            if not message.get("more_body", False):
                self._done = True
                self._loop.call_soon_threadsafe(self.complete.set)
        size = len(self._buffer) if size < 0 else min(size, len(self._buffer))
        taken = bytes(self._buffer[:size])
        del self._buffer[:size]
        return taken

    def readinto(self, target) -> int:
        data = self.read(len(target))
        target[: len(data)] = data
        return len(data)


def _settle(result: concurrent.futures.Future, done: asyncio.Task) -> None:
    """Hand a finished task's outcome to the thread waiting on `result`."""
    if done.cancelled():
        result.cancel()
    elif done.exception() is not None:
        result.set_exception(done.exception())
    else:
        result.set_result(done.result())


class RequestTooLarge(Exception):
    def __init__(self, limit: int) -> None:
        super().__init__(f"the body is larger than {limit:,} bytes")
        self.limit = limit


def _too_large(limit: int, length: int | None = None) -> HttpResponse:
    said = f"the body is {length:,} bytes" if length is not None else "the body is larger than that"
    return JsonResponse({"detail": f"{said}; the limit is {limit:,}"}, status=413)


class GatedASGIHandler(ASGIHandler):
    """Django's ASGI handler, with the body decided on before it is read (see the module's note)."""

    async def handle(self, scope, receive, send):
        gone = threading.Event()
        scope[GONE] = gone
        length, has_body = _declared(scope)
        limit, checked_early, streams = _body_plan(scope["path"])
        if length is not None and (length < 0 or length > limit):
            if length < 0:
                return await self._answer(scope, send, JsonResponse({"detail": "bad Content-Length"}, status=400))
            return await self._answer(scope, send, _too_large(limit, length))
        # A view that streams its body checks everything before reading it; the others read it first.
        if checked_early and not streams and has_body and (length is None or length > EARLY_CHECK_BYTES):
            refused = await self._precheck(scope)
            if refused is not None:
                return await self._answer(scope, send, refused)
            scope[PRECHECKED] = True
        if streams:
            body = ArrivingBody(receive, asyncio.get_running_loop(), gone, limit, memory_settings().upload_idle_seconds)
            await self._serve(scope, receive, send, body, gone, listen_after=body.complete)
            return
        try:
            body_file = await self._read_body(receive, limit, expected=length)
        except RequestAborted:
            return
        except RequestTooLarge:
            return await self._answer(scope, send, _too_large(limit))
        except TimeoutError:
            slow = JsonResponse({"detail": "the body arrived too slowly"}, status=408)
            slow["Connection"] = "close"
            return await self._answer(scope, send, slow)
        await self._serve(scope, receive, send, body_file, gone)

    async def _read_body(self, receive, limit: int, *, expected: int | None):
        """The body, spooled; TimeoutError when it arrives slower than WEB_SLOWEST_BODY_BYTES_PER_SECOND
        allows for its stated length (or, with none, for the path's limit)."""
        seconds = settings.WEB_HEADER_TIMEOUT_SECONDS + (expected or limit) / settings.WEB_SLOWEST_BODY_BYTES_PER_SECOND
        # Returned to the caller, which closes it (as Django's own read_body does).
        body_file = tempfile.SpooledTemporaryFile(max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE, mode="w+b")  # noqa: SIM115
        size = 0
        try:
            async with asyncio.timeout(seconds):
                while True:
                    message = await receive()
                    if message["type"] == "http.disconnect":
                        raise RequestAborted()
                    chunk = message.get("body", b"")
                    size += len(chunk)
                    if size > limit:
                        raise RequestTooLarge(limit)
                    body_file.write(chunk)
                    if not message.get("more_body", False):
                        break
        except BaseException:
            body_file.close()
            raise
        body_file.seek(0)
        return body_file

    async def _precheck(self, scope) -> HttpResponse | None:
        """Run the request with no body: its view answers PRECHECK_PASSED when everything it checks before
        reading a body passed, or why not (401, 403, 404, 413, 429, ...)."""
        first = {**scope, PRECHECK: True}
        request, error = self.create_request(first, io.BytesIO(b""))
        if request is None:
            return error
        response = await self.run_get_response(request)
        if response.status_code == PRECHECK_PASSED:
            await sync_to_async(response.close)()
            return None
        return response

    async def _answer(self, scope, send, response: HttpResponse) -> None:
        """Send a response made without running the request (its body unread)."""
        set_script_prefix(get_script_prefix(scope))
        await self.send_response(response, send)
        await sync_to_async(response.close)()

    async def _serve(self, scope, receive, send, body, gone: threading.Event, listen_after=None) -> None:
        """Django's handle() from its body on, the disconnect watcher setting `gone` (and, for a body the
        view reads as it arrives, starting once it has arrived: until then the view reads the connection)."""
        set_script_prefix(get_script_prefix(scope))
        await request_started.asend(sender=self.__class__, scope=scope)
        request, error_response = self.create_request(scope, body)
        if request is None:
            body.close()
            await self.send_response(error_response, send)
            await sync_to_async(error_response.close)()
            return

        async def process_request():
            response = await self.run_get_response(request)
            with contextlib.suppress(asyncio.CancelledError):
                await self.send_response(response, send)
            return response

        async def watch():
            if listen_after is not None:
                await listen_after.wait()
            message = await receive()
            if message["type"] == "http.disconnect":
                gone.set()
                raise RequestAborted()

        tasks = [asyncio.create_task(watch()), asyncio.create_task(process_request())]
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        for task in tasks:
            if task.done():
                with contextlib.suppress(RequestAborted):
                    task.result()
            else:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        try:
            response = tasks[1].result()
        except asyncio.CancelledError:
            await request_finished.asend(sender=self.__class__)
        else:
            await sync_to_async(response.close)()
        body.close()
