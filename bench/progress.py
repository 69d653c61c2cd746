"""A one-line progress bar for management commands: `conv-26 ingest [#######.......]  90/215`."""

import sys
from typing import TextIO

from django.core.management.base import OutputWrapper

BAR_WIDTH = 30


class ProgressBar:
    """Call with (label, done, total); redraws one line of `stream` in place, ends it when done == total."""

    def __init__(self, stream: TextIO | OutputWrapper | None = None) -> None:
        # A command's self.stderr would end every write with a newline; write to what it wraps.
        self.stream = stream._out if isinstance(stream, OutputWrapper) else (stream or sys.stderr)

    def __call__(self, label: str, done: int, total: int) -> None:
        filled = BAR_WIDTH * done // max(total, 1)
        bar = "#" * filled + "." * (BAR_WIDTH - filled)
        self.stream.write(f"\r{label:<24} [{bar}] {done:>5}/{total}")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()
