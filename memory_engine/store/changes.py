"""What tells an open chat page that a space's memory changed: the announcement (hearing it, and the
revision a page compares, are services/feed.py's).

Every write to a space announces it once its transaction commits (`announce`): the write path
(`writes.space_write`), a retrieval's hits, a consolidation run's start and end, an import's progress.
The announcement is a Redis message on the space's channel (the broker's Redis), which the event stream
of each open page hears (`subscribe` in a thread, `listener` in an event loop; the streams:
interfaces/api/memory_feed.py). It carries nothing but the space's id: the page
then reads the space's `revision` from the database, which says which parts of the memory changed since
the revision it saw last. So a lost announcement (Redis down, a message dropped while a page was
reconnecting) costs only time: the stream reads the revision again at least every few seconds, and a
page that reconnects sends the last revision it saw and is told at once what changed meanwhile.
"""

import logging
import threading
import time

from django.conf import settings
from django.db import transaction

logger = logging.getLogger(__name__)

CHANNEL_PREFIX = "memoryos:space:"
# After a failed announcement, this long without trying again: a write must not wait on a Redis that is
# down, and the streams notice the change on their next read anyway.
QUIET_AFTER_FAILURE_SECONDS = 30.0

# The parts of a revision, in the order the revision's text gives them.
PARTS = ("tiers", "heat", "entries", "runs", "imports", "parameters")


def channel(space_id: int) -> str:
    return f"{CHANNEL_PREFIX}{space_id}"


def events_url() -> str | None:
    """The Redis that carries announcements: the broker's, when it is a Redis."""
    url = settings.CELERY_BROKER_URL or ""
    return url if url.startswith(("redis://", "rediss://", "unix://")) else None


class _Announcer:
    def __init__(self) -> None:
        self._client = None
        self._url: str | None = None
        self._quiet_until = 0.0
        self._lock = threading.Lock()

    def publish(self, space_id: int) -> None:
        url = events_url()
        if url is None or time.monotonic() < self._quiet_until:
            return
        try:
            with self._lock:
                if self._client is None or self._url != url:
                    import redis

                    self._client = redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5)
                    self._url = url
                client = self._client
            client.publish(channel(space_id), b"")
        except Exception as exc:  # the broker's Redis is down: the streams' own reads catch up
            self._quiet_until = time.monotonic() + QUIET_AFTER_FAILURE_SECONDS
            logger.info("space %s changed; announcing it failed (%s); pages see it on their next read", space_id, exc)


_announcer = _Announcer()


def announce(space_id: int) -> None:
    """Tell open pages that the space changed, once the current transaction commits (at once outside
    one). Never raises; costs one Redis message."""
    transaction.on_commit(lambda: _announcer.publish(space_id))


# --- Hearing the announcements -------------------------------------------------------------------------
