"""Where a retrieval's time goes: the seconds spent in each of its stages, when someone asks.

    with timed() as clock:
        retrieve(space, "What is my cat called?")
    clock.seconds  # {"embed": 0.004, "dense": 0.001, "lexical": 0.002, "rows": 0.003, ...}

Code marks its stages with `with stage("dense"): ...`; outside a `timed()` block that costs one context
variable read. The benchmarks print the breakdown (bench_scale); nothing in the product depends on it.
"""

import time
from collections import defaultdict
from contextlib import contextmanager, nullcontext
from contextvars import ContextVar

# The stages of a retrieval, in the order it runs them.
STAGES = ("embed", "versions", "dense", "lexical", "scoring", "reranker", "rows", "hits")

_clock: ContextVar["Clock | None"] = ContextVar("retrieval_clock", default=None)
_untimed = nullcontext()


class Clock:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)

    @contextmanager
    def stage(self, name: str):
        began = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[name] += time.perf_counter() - began


@contextmanager
def timed():
    """Time the stages run in this block (in this thread or task); yields the Clock."""
    clock = Clock()
    token = _clock.set(clock)
    try:
        yield clock
    finally:
        _clock.reset(token)


def stage(name: str):
    """A context manager that adds its block's time to `name` when a `timed()` block is open."""
    clock = _clock.get()
    return _untimed if clock is None else clock.stage(name)
