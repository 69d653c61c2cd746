"""A file's shape, measured before it is parsed: one linear pass over its bytes, a chunk at a time (numpy),
that finds how deeply it nests, its longest string, its longest number or other bare token, and the size
of the largest value at each of its first three levels. Each is held to a bound as the bytes arrive, so
that no file the parser is given can cost it more than linear time, or more memory than the bounds allow:

- yajl (ijson's C parser) reads a token that spans its read buffers again from its start at every buffer,
  so a long string costs time quadratic in its length (12 MB took 1.7 s and 50 MB 28.8 s),
  and it holds the whole string;
- an integer of more than 4,300 digits crashes ijson (a segmentation fault: the web process gone);
- ijson names each value by its path from the top, so a file of nested brackets fills memory with names;
- a value the reader builds whole (a conversation of a ChatGPT export) takes several times its bytes.

It also notes whether a string holds a lone UTF-16 surrogate, escaped ("\\ud800": not valid unicode), which
yajl would not keep as JSON says (formats.EXACT_PARSER). A UTF-8 byte-order mark that opens the file is not
part of its JSON, and is not measured.

The measure is exact for valid JSON. A file that is not (a backslash outside a string, a bracket closed
twice) may be measured wrongly past that point, but the parser stops there with an error.
"""

import re
from dataclasses import dataclass, field

import numpy as np

from memory_engine.formats.common import FormatError

LEVELS = 3  # the root (0), its items (1) and theirs (2): where a format's conversations and messages are

OTHER, QUOTE, BACKSLASH, OPEN, CLOSE, SEPARATOR = range(6)
KIND = np.zeros(256, dtype=np.uint8)
KIND[ord('"')] = QUOTE
KIND[ord("\\")] = BACKSLASH
KIND[[ord("["), ord("{")]] = OPEN
KIND[[ord("]"), ord("}")]] = CLOSE
KIND[[ord(","), ord(":"), ord(" "), ord("\t"), ord("\n"), ord("\r")]] = SEPARATOR

BOM = b"\xef\xbb\xbf"  # UTF-8's byte-order mark, which some editors write first ("utf-8-sig")
# A \u escape of a UTF-16 surrogate is unicode only in a pair: a high one (D800-DBFF), then a low one.
SURROGATE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
SURROGATE_PAIR = re.compile(rb"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}")
# What may follow a high surrogate at the end of a chunk and still begin its low one.
LOW_BEGUN = re.compile(rb"\\?|\\u|\\u[dD]|\\u[dD][c-fC-F][0-9a-fA-F]?")
PENDING_BYTES = 11  # a surrogate's escape and the start of a low one's: the most a chunk leaves undecided


@dataclass(frozen=True)
class Bounds:
    depth: int
    string: int  # bytes between a string's quotes
    token: int  # bytes of a number or a literal
    # The largest container allowed at each level, in bytes (None: any size, as it is streamed).
    values: tuple[int | None, ...] = (None,) * LEVELS


@dataclass
class Shape:
    """What the pass found: the deepest nesting, the longest string and token, and the largest container
    at each level, in bytes."""

    depth: int = 0
    string: int = 0
    token: int = 0
    largest: list[int] = field(default_factory=lambda: [0] * LEVELS)
    lone_surrogate: bool = False


class ShapeMeter:
    """Measures a file fed to it a chunk at a time, and raises FormatError as soon as it passes a bound: a
    400 MB string is refused at its first megabytes, not after."""

    def __init__(self, bounds: Bounds) -> None:
        self.bounds = bounds
        self.shape = Shape()
        self.offset = 0  # bytes before the current chunk
        self.in_string = False
        self.string_start = 0  # where the open string's quote is, when in_string
        self.backslashes = 0  # the run of backslashes that ended the last chunk
        self.token_start: int | None = None  # where a bare token still open at the last chunk's end began
        self.depth = 0
        self.open_at: list[int | None] = [None] * LEVELS  # where the open container of each level began
        self.broken = False  # a bracket closed that was never opened: not JSON, and the parser will say so
        self.head: bytes | None = b""  # the first bytes, until there are enough to tell a byte-order mark
        self.escapes = b""  # the last chunk's end, escaped backslashes and surrogate pairs blanked

    def feed(self, chunk: bytes) -> None:
        if self.head is not None:
            self.head += chunk
            if len(self.head) < len(BOM) and BOM.startswith(self.head):
                return
            chunk, self.head = self.head, None
            if chunk.startswith(BOM):
                chunk, self.offset = chunk[len(BOM) :], len(BOM)
        if not self.shape.lone_surrogate:
            self._surrogates(chunk)
        if chunk and not self.broken:
            kinds = KIND[np.frombuffer(chunk, dtype=np.uint8)]
            quotes = self._unescaped_quotes(kinds)
            # Whether each byte is inside a string once it is read (a quote that opens one is inside).
            toggles = np.zeros(len(kinds), dtype=np.uint8)
            toggles[quotes] = 1
            toggles[0] ^= self.in_string
            inside = np.bitwise_xor.accumulate(toggles).view(bool)
            was_in_string = self.in_string
            self._strings(quotes, len(kinds))
            self._tokens(kinds, inside, was_in_string)
            self._containers(kinds, inside)
        self.offset += len(chunk)

    def _unescaped_quotes(self, kinds: np.ndarray) -> np.ndarray:
        """Positions (in the chunk) of the quotes that open or close a string: those after an even run of
        backslashes, counting the run carried over from the last chunk."""
        size = len(kinds)
        backslash = kinds == BACKSLASH
        quotes = np.flatnonzero(kinds == QUOTE)
        if not self.backslashes and not backslash.any():
            return quotes
        last_other = np.maximum.accumulate(np.where(backslash, -1, np.arange(size)))  # -1: all backslashes so far
        before = np.maximum(quotes - 1, 0)
        from_start = (quotes == 0) | (last_other[before] == -1)
        run = np.where(quotes > 0, quotes - 1 - last_other[before], 0) + np.where(from_start, self.backslashes, 0)
        if backslash[-1]:
            trailing = size - 1 - int(last_other[-1])
            self.backslashes = trailing + (self.backslashes if last_other[-1] == -1 else 0)
        else:
            self.backslashes = 0
        return quotes[run % 2 == 0]

    def _surrogates(self, chunk: bytes) -> None:
        """Whether a string holds a surrogate escaped outside a pair. Escaped backslashes and pairs are
        blanked first, so a backslash left starts an escape; a surrogate at the chunk's end that a low one may
        yet follow waits for the next chunk."""
        text = SURROGATE_PAIR.sub(b"_", (self.escapes + chunk).replace(b"\\\\", b"_"))
        found = SURROGATE.search(text)
        if found and not LOW_BEGUN.fullmatch(text, found.end()):
            self.shape.lone_surrogate = True
        self.escapes = text[-PENDING_BYTES:]

    def _strings(self, quotes: np.ndarray, size: int) -> None:
        opening = (np.arange(len(quotes)) % 2 == 0) != self.in_string
        opens, closes = quotes[opening] + self.offset, quotes[~opening] + self.offset
        if self.in_string:
            opens = np.concatenate(([self.string_start], opens))
        paired = min(len(opens), len(closes))
        if paired:
            self._string_seen(int((closes[:paired] - opens[:paired]).max()) - 1)
        self.in_string = len(opens) > len(closes)
        if self.in_string:
            self.string_start = int(opens[-1])
            self._string_seen(self.offset + size - self.string_start - 1)

    def _string_seen(self, length: int) -> None:
        self.shape.string = max(self.shape.string, length)
        if length > self.bounds.string:
            raise FormatError(f"a string is longer than {self.bounds.string:,} bytes", f"byte {self.offset:,}")

    def _tokens(self, kinds: np.ndarray, inside: np.ndarray, was_in_string: bool) -> None:
        """The longest run of bytes outside strings between two separators: a number or a literal."""
        separators = np.flatnonzero((kinds != OTHER) & (kinds != BACKSLASH))
        starts = np.concatenate(([-1], separators))  # -1: the chunk's start, going on with the last run
        ends = np.concatenate((separators, [len(kinds)]))
        # A run is outside strings when the separator before it leaves the parser outside one.
        outside = np.concatenate(([not was_in_string], ~inside[separators]))
        runs = ends - starts - 1
        if self.token_start is not None:
            runs[0] += self.offset - self.token_start
        if outside.any():
            longest = int(runs[outside].max())
            self.shape.token = max(self.shape.token, longest)
            if longest > self.bounds.token:
                raise FormatError(
                    f"a number or literal is longer than {self.bounds.token} characters", f"byte {self.offset:,}"
                )
        if outside[-1] and runs[-1] > 0:
            start = self.offset + int(starts[-1]) + 1
            self.token_start = self.token_start if len(separators) == 0 and self.token_start is not None else start
        else:
            self.token_start = None

    def _containers(self, kinds: np.ndarray, inside: np.ndarray) -> None:
        brackets = np.flatnonzero(((kinds == OPEN) | (kinds == CLOSE)) & ~inside)
        if not len(brackets):
            self._open_values_seen(len(kinds))
            return
        steps = np.where(kinds[brackets] == OPEN, 1, -1)
        after = self.depth + np.cumsum(steps)
        if after.min() < 0:
            self.broken = True
            return
        deepest = int(after.max())
        self.shape.depth = max(self.shape.depth, deepest)
        if deepest > self.bounds.depth:
            raise FormatError(f"the JSON is nested more than {self.bounds.depth} deep")
        # An opening bracket leaves the depth one above its container's level; a closing one, at it.
        level = np.where(steps > 0, after - 1, after)
        for at in range(LEVELS):
            opens = brackets[(level == at) & (steps > 0)] + self.offset
            closes = brackets[(level == at) & (steps < 0)] + self.offset
            if self.open_at[at] is not None:
                opens = np.concatenate(([self.open_at[at]], opens))
            paired = min(len(opens), len(closes))
            if paired:
                self._value_seen(at, int((closes[:paired] - opens[:paired]).max()) + 1)
            self.open_at[at] = int(opens[-1]) if len(opens) > len(closes) else None
        self.depth = int(after[-1])
        self._open_values_seen(len(kinds))

    def _open_values_seen(self, size: int) -> None:
        """Containers still open at the chunk's end are as large as they are so far."""
        for at, start in enumerate(self.open_at):
            if start is not None:
                self._value_seen(at, self.offset + size - start)

    def _value_seen(self, level: int, size: int) -> None:
        self.shape.largest[level] = max(self.shape.largest[level], size)
        limit = self.bounds.values[level]
        if limit is not None and size > limit:
            raise FormatError(f"one of its values is larger than {limit:,} bytes; split the file")
