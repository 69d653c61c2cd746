"""A file brought to import, checked in a process of its own (`python -m memory_engine.file_check ORDER`):
unpacked if it is a zip, measured, scanned, its working copy written. The web process that received the
file waits for it, and kills it when the deadline passes or the client leaves: whatever a file costs is
paid here, at a lower CPU priority than the requests of other people, in memory that goes back to the
system when it ends, and a parser that crashed on it takes only this process down.

ORDER is a JSON file: {"path", "zipped", "unzipped", "copy", "result", "limit", "limits", "cpu_seconds"};
`limits` are the bounds and settings the check applies, given by the web process (formats' MAX_* and
MAX_TURN_CHARS), so that what it checks is what that process was told. The result file gets {"scan": ...}
or {"error": ...}. The check may use `cpu_seconds` of processor time once it is set up (RLIMIT_CPU: the
system stops it with SIGXCPU past them), so what bounds a file's cost is the work it takes, not how busy
the machine is.
"""

import json
import math
import os
import resource
import sys
from dataclasses import asdict
from pathlib import Path

NICE = 10  # below the web process's own requests
ADDRESS_SPACE_BYTES = 4 << 30  # a last bound, far above what a bounded file takes


def limits_now() -> dict:
    """What the check applies, as this process has it (called by the web process)."""
    from memory_engine import formats
    from memory_engine.config import memory_settings

    return {
        "MAX_DEPTH": formats.MAX_DEPTH,
        "MAX_STRING_BYTES": formats.MAX_STRING_BYTES,
        "MAX_TOKEN_BYTES": formats.MAX_TOKEN_BYTES,
        "MAX_VALUE_BYTES": formats.MAX_VALUE_BYTES,
        "MAX_ZIP_ENTRIES": formats.MAX_ZIP_ENTRIES,
        "MAX_CONVERSATIONS": formats.MAX_CONVERSATIONS,
        "MAX_TURN_CHARS": memory_settings().max_turn_chars,
    }


def check(order: dict) -> dict:
    """The check itself: the file's Scan, as JSON, with its working copy written."""
    from django.conf import settings

    from memory_engine import formats
    from memory_engine.formats.common import FormatError

    limits = order["limits"]
    settings.MEMORYOS = {**settings.MEMORYOS, "MAX_TURN_CHARS": limits.pop("MAX_TURN_CHARS")}
    for name, value in limits.items():
        setattr(formats, name, value)
    try:
        measuring = formats.meter()
        source = Path(order["path"])
        if order["zipped"]:
            source = Path(order["unzipped"])
            formats.unzip(order["path"], source, limit=order["limit"], measuring=measuring)
        else:
            with open(source, "rb") as stream:
                for chunk in iter(lambda: stream.read(formats.READ_BUFFER), b""):
                    measuring.feed(chunk)
        with open(order["copy"], "wb") as out:
            found = formats.scan(source, shape=measuring.shape, out=out)
    except FormatError as error:
        return {"error": str(error)}
    finally:
        if order["zipped"]:
            Path(order["unzipped"]).unlink(missing_ok=True)
    listed = [
        {
            **asdict(c),
            "created": c.created.isoformat() if c.created else None,
            "last": c.last.isoformat() if c.last else None,
        }
        for c in found.conversations
    ]
    return {
        "scan": {
            "format": found.format,
            "conversations": listed,
            "facts": found.facts,
            "turns": found.turns,
            "cut": found.cut,
        }
    }


def main() -> None:
    os.nice(NICE)
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
    import django

    django.setup()
    order = json.loads(Path(sys.argv[1]).read_text())
    limit_processor_time(order["cpu_seconds"])
    outcome = check(order)
    outcome["peak_bytes"] = peak_resident_bytes()
    Path(order["result"]).write_text(json.dumps(outcome))


def limit_processor_time(seconds: float) -> None:
    """Let this process use `seconds` more of processor time (user and system) from now: past them the
    system sends SIGXCPU, which ends it (and SIGKILL a second later)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(used.ru_utime + used.ru_stime + seconds)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))


def peak_resident_bytes() -> int:
    """This process's peak resident memory since it started its program (VmHWM; ru_maxrss would count
    the web process it was forked from)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


if __name__ == "__main__":
    main()
