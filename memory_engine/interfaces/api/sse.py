"""Server-sent events on the wire: one event, a response that streams them, and the renderer that answers a
client accepting only text/event-stream. Used by the streamed chat reply (reply_stream.py) and the memory
feed (memory_feed.py)."""

import json
import signal
from collections.abc import AsyncIterator, Iterator

from django.db import connections
from django.http import StreamingHttpResponse
from rest_framework.renderers import BaseRenderer


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
