"""The indexes this process holds in memory: a least-recently-used cache bounded in bytes, and one lock per
space.

A web or worker process may serve thousands of spaces; it keeps the indexes of those used most recently,
up to `MEMORYOS_INDEX_CACHE_MB` (0: no bound), and drops the least recently used beyond that. A dropped
space is read again from its sidecar files (or rebuilt from the database) on its next use: the cache holds
nothing that is not stored elsewhere.

Each space has its own lock. Loading, catching up and searching one space's indexes hold that space's
lock only, so a slow cold load of one space never waits on, or holds up, another; two requests for the
same cold space take turns, and the second finds the first's load done. The cache's own bookkeeping takes
a short lock of its own, never held while an index loads.
"""

import threading
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass

from memory_engine.config import memory_settings

MIB = 1024 * 1024
LOADS_KEPT = 1000  # durations of the latest loads kept for the statistics


class SpaceLock:
    """A re-entrant lock for one space (a class of its own, so the registry can hold it weakly)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()

    def __enter__(self) -> "SpaceLock":
        self._lock.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self._lock.release()


@dataclass
class CacheStats:
    spaces: int
    bytes: int
    limit_bytes: int  # 0: no bound
    hits: int  # an index was in memory and current or nearly so
    misses: int  # an index was read from its file or rebuilt from the database
    evictions: int  # spaces dropped to stay under the bound
    load_seconds: list[float]  # how long the latest misses took (file read or rebuild, and catch-up)

    @property
    def hit_rate(self) -> float | None:
        total = self.hits + self.misses
        return self.hits / total if total else None


class IndexCache:
    """Space id -> what the process holds for it (any object with an `nbytes()` method), least recently
    used first."""

    def __init__(self, limit_bytes: Callable[[], int]) -> None:
        self._limit_bytes = limit_bytes
        self._held: OrderedDict[int, object] = OrderedDict()
        self._sizes: dict[int, int] = {}
        self._total = 0  # the sum of _sizes
        self._guard = threading.Lock()
        self._locks: weakref.WeakValueDictionary[int, SpaceLock] = weakref.WeakValueDictionary()
        self.hits = self.misses = self.evictions = 0
        self._loads: deque[float] = deque(maxlen=LOADS_KEPT)

    def lock(self, space_id: int) -> SpaceLock:
        """The lock of the space: the same object for every thread while anyone holds or waits on it."""
        with self._guard:
            lock = self._locks.get(space_id)
            if lock is None:
                lock = self._locks[space_id] = SpaceLock()
            return lock

    def get(self, space_id: int):
        with self._guard:
            held = self._held.get(space_id)
            if held is not None:
                self._held.move_to_end(space_id)
            return held

    def put(self, space_id: int, held) -> None:
        with self._guard:
            self._held[space_id] = held
            self._held.move_to_end(space_id)
            self._total -= self._sizes.pop(space_id, 0)
            self._sizes[space_id] = 0

    def record(self, *, hit: bool, seconds: float) -> None:
        """One index access: a hit, or a miss that took `seconds` to load."""
        with self._guard:
            if hit:
                self.hits += 1
            else:
                self.misses += 1
                self._loads.append(seconds)

    def resize(self, space_id: int) -> None:
        """Record the space's size now (call after a load or catch-up, with its lock held) and drop the
        least recently used other spaces while the total is over the bound. Spaces in use (their lock held
        or waited on) stay, this one included, even when they alone are over the bound."""
        with self._guard:
            held = self._held.get(space_id)
            if held is None:
                return
            size = held.nbytes()
            self._total += size - self._sizes.get(space_id, 0)
            self._sizes[space_id] = size
            limit = self._limit_bytes()
            if limit <= 0 or self._total <= limit:
                return
            for victim in list(self._held):
                if self._total <= limit:
                    break
                if victim == space_id or victim in self._locks:
                    continue
                self._total -= self._sizes.pop(victim, 0)
                del self._held[victim]
                self.evictions += 1

    def forget(self, space_id: int) -> None:
        with self._guard:
            self._held.pop(space_id, None)
            self._total -= self._sizes.pop(space_id, 0)

    def clear(self) -> None:
        with self._guard:
            self._held.clear()
            self._sizes.clear()
            self._total = 0
            self.hits = self.misses = self.evictions = 0
            self._loads.clear()

    def stats(self) -> CacheStats:
        with self._guard:
            return CacheStats(
                spaces=len(self._held),
                bytes=self._total,
                limit_bytes=max(self._limit_bytes(), 0),
                hits=self.hits,
                misses=self.misses,
                evictions=self.evictions,
                load_seconds=list(self._loads),
            )


def configured_limit_bytes() -> int:
    return int(memory_settings().index_cache_mb * MIB)
