"""What tells an open page that a space's memory changed: the announcements heard (`subscribe` in a
thread, `listener` in an event loop; the streams: interfaces/api/memory_feed.py), and the space's
`revision`, which says which parts of the memory changed since the revision a page saw last. An
announcement carries nothing but the space's id (store/changes.py sends it when a write commits), so a
lost one costs only time: a stream reads the revision again at least every few seconds, and a page that
reconnects sends the last revision it saw and is told at once what changed meanwhile.
"""

import asyncio
import contextlib
import logging
import time
import zlib
from collections import defaultdict

from django.db.models import Max

from memory_engine.models import SPACE_PARAMETERS, ConsolidationRun, EntryVersion, HeatEvent, ImportJob, MemorySpace
from memory_engine.store.changes import CHANNEL_PREFIX, PARTS, channel, events_url

__all__ = [
    "Listener",
    "Subscription",
    "changed",
    "listener",
    "revision",
    "revision_parts",
    "revision_text",
    "subscribe",
]

logger = logging.getLogger(__name__)


class Subscription:
    """One space's announcements, heard in a thread (a stream under WSGI). Without Redis it hears nothing,
    and `heard` only waits: the stream reads the revision anyway."""

    def __init__(self, space_id: int) -> None:
        self._pubsub = None
        url = events_url()
        if url is None:
            return
        try:
            import redis

            pubsub = redis.Redis.from_url(url, socket_connect_timeout=0.5).pubsub(ignore_subscribe_messages=True)
            pubsub.subscribe(channel(space_id))
            self._pubsub = pubsub
        except Exception as exc:  # no announcements: the stream reads the revision every few seconds
            logger.info("the memory feed of space %s hears no announcements (%s)", space_id, exc)

    def heard(self, timeout: float) -> bool:
        """Whether an announcement came within `timeout` seconds."""
        if self._pubsub is not None:
            try:
                return self._pubsub.get_message(timeout=timeout) is not None
            except Exception:  # Redis went away mid-stream
                pass
        if timeout:
            time.sleep(timeout)
        return False

    def close(self) -> None:
        if self._pubsub is not None:
            with contextlib.suppress(Exception):
                self._pubsub.close()


def subscribe(space_id: int) -> Subscription:
    return Subscription(space_id)


class Listener:
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
        url = events_url()
        if url is None:
            return
        import redis.asyncio

        while True:
            try:
                client = redis.asyncio.Redis.from_url(url, socket_connect_timeout=2)
                async with client.pubsub(ignore_subscribe_messages=True) as pubsub:
                    await pubsub.psubscribe(CHANNEL_PREFIX + "*")
                    self.ready.set()
                    async for message in pubsub.listen():
                        name = message.get("channel") or b""
                        space_id = name.decode(errors="replace").removeprefix(CHANNEL_PREFIX)
                        for wake in self.waiting.get(int(space_id) if space_id.isdigit() else -1, ()):
                            wake.set()
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # Redis is down: the streams read the revision every CHECK_SECONDS
                self.ready.clear()
                logger.info("the memory feeds hear no announcements (%s); trying again in 5 s", exc)
                await asyncio.sleep(5)


_listeners: dict[int, Listener] = {}


def listener() -> Listener:
    """This event loop's one subscription to every space's announcements (a stream under ASGI)."""
    loop = asyncio.get_running_loop()
    return _listeners.setdefault(id(loop), Listener())


def revision(space_id: int) -> dict[str, str]:
    """Where each part of the space's memory stands, as short texts that change when the part changes:
    `tiers` (its pages and sessions: the vector version and the newest page), `heat` (the newest heat
    event), `entries` (the newest entry version), `runs` (the newest consolidation run and its state),
    `imports` (the newest import and its progress), `parameters`. Five indexed reads. Raises
    MemorySpace.DoesNotExist when the space is gone."""
    names = ["vector_version", "last_seq", *SPACE_PARAMETERS]
    space = MemorySpace.objects.filter(pk=space_id).values(*names).first()
    if space is None:
        raise MemorySpace.DoesNotExist(f"space {space_id} does not exist")
    heat = HeatEvent.objects.filter(space_id=space_id).order_by("-at", "-pk").values_list("pk", flat=True).first()
    entries = EntryVersion.objects.filter(entry__space_id=space_id).aggregate(newest=Max("pk"))["newest"]
    run = ConsolidationRun.objects.filter(space_id=space_id).order_by("-pk").values("pk", "status", "attempts").first()
    job = ImportJob.objects.filter(space_id=space_id).order_by("-pk").values("pk", "done", "status").first()
    parameters = "|".join(str(space[name]) for name in SPACE_PARAMETERS)
    return {
        "tiers": f"{space['vector_version']}.{space['last_seq']}",
        "heat": str(heat or 0),
        "entries": str(entries or 0),
        "runs": f"{run['pk']}.{run['status']}.{run['attempts']}" if run else "0",
        "imports": f"{job['pk']}.{job['done']}.{job['status']}" if job else "0",
        "parameters": f"{zlib.crc32(parameters.encode()):08x}",
    }


def revision_text(parts: dict[str, str]) -> str:
    """A revision as one line (an event id): `tiers:12.40 heat:88 ...`. Pure."""
    return " ".join(f"{name}:{parts[name]}" for name in PARTS)


def revision_parts(text: str | None) -> dict[str, str]:
    """The parts of a revision's line; what cannot be read is left out (so it counts as changed). Pure."""
    parts: dict[str, str] = {}
    for field in (text or "")[:1000].split(" "):
        name, _, value = field.partition(":")
        if name in PARTS and value and len(value) <= 100:
            parts[name] = value
    return parts


def changed(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """The parts whose revision differs. Pure."""
    return [name for name in PARTS if before.get(name) != after.get(name)]
