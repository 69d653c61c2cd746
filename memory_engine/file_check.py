"""A file brought to import, checked in a process of its own (`python -m memory_engine.file_check ORDER`):
unpacked if it is a zip, measured, scanned, its working copy written. Whatever a file costs is paid here, in
the background (services/uploads.py starts it and records what it says; no web request waits for it), at
the system's idle priority (SCHED_IDLE: it runs only on processor time nothing else wants, so people's
requests and the workers' consolidation go first), in memory that goes back to the system when it ends, and
a parser that crashed on it takes only this process down.

ORDER is a JSON file: {"path", "zipped", "unzipped", "copy", "result", "alive", "limit", "limits",
"cpu_seconds", "wall_seconds", "deadline"}; `limits` are the bounds and settings the check applies, given by
the process that started it (formats' MAX_* and MAX_TURN_CHARS), so that what it checks is what that process
was told. The result file gets {"scan": ...} or {"error": ..., "refusal": "format" | "too_large" | "busy"},
written whole at once (renamed into place). The check bounds itself: it may use `cpu_seconds` of processor
time once it is set up (RLIMIT_CPU: SIGXCPU past them, so what bounds a file's cost is the work it takes, not
how busy the machine is), and `wall_seconds` in all, until `deadline` (a Unix time: SIGALRM; a machine too
busy to give it its time refuses the file for now); each writes its refusal before the process ends. While it
runs it touches `alive` every HEARTBEAT_SECONDS, so that a check that died without a word (a crash) is known
for one, and it ends once its ORDER file is gone (the upload was deleted).
"""

import json
import math
import os
import resource
import signal
import sys
import threading
import time
from dataclasses import asdict
from pathlib import Path

NICE = 19  # where the system has no idle scheduling class
ADDRESS_SPACE_BYTES = 4 << 30  # a last bound, far above what a bounded file takes
HEARTBEAT_SECONDS = 2.0


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
        return {"error": str(error), "refusal": "format"}
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
    lowest_priority()
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE_BYTES, ADDRESS_SPACE_BYTES))
    order = json.loads(Path(sys.argv[1]).read_text())
    result = Path(order["result"])
    signal.signal(signal.SIGALRM, lambda *_: refuse(result, order, "busy"))
    signal.signal(signal.SIGXCPU, lambda *_: refuse(result, order, "too_large"))
    left = order["deadline"] - time.time()  # the wall clock runs from when the check was started
    if left <= 0:
        refuse(result, order, "busy")
    signal.alarm(math.ceil(left))
    threading.Thread(target=beat, args=(Path(sys.argv[1]), order), daemon=True).start()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "playground.settings")
    import django

    django.setup()
    limit_processor_time(order["cpu_seconds"])
    outcome = check(order)
    outcome["peak_bytes"] = peak_resident_bytes()
    write_whole(result, outcome)


REFUSALS = {
    "too_large": "checking the file took more than {cpu:.0f} s of processor time: send a smaller file",
    "busy": "the machine was too busy to check the file within {wall:.0f} s: try again later",
}


def refuse(result: Path, order: dict, refusal: str) -> None:
    """Write why the file is refused (a bound of REFUSALS reached) and end the process at once."""
    error = REFUSALS[refusal].format(cpu=order["cpu_seconds"], wall=order["wall_seconds"])
    write_whole(result, {"error": error, "refusal": refusal})
    os._exit(3)


def write_whole(path: Path, outcome: dict) -> None:
    """Write the outcome so that a reader sees all of it or nothing."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(outcome))
    partial.replace(path)


def beat(order_path: Path, order: dict) -> None:
    """Touch `alive` every HEARTBEAT_SECONDS while the process lives; once its order is gone (the upload was
    deleted: services/uploads.upload_delete removes its check's files, wherever that was done), remove what
    it wrote and end the process."""
    alive = Path(order["alive"])
    while order_path.exists():
        alive.touch()
        threading.Event().wait(HEARTBEAT_SECONDS)
    for written in (alive, order["copy"], order["unzipped"], order["result"]):
        Path(written).unlink(missing_ok=True)
    os._exit(4)


def lowest_priority() -> None:
    """Run only on processor time nothing else wants (SCHED_IDLE), or else at the lowest niceness."""
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
    except (AttributeError, OSError):
        os.nice(NICE)


def limit_processor_time(seconds: float) -> None:
    """Let this process use `seconds` more of processor time (user and system) from now: past them the
    system sends SIGXCPU, whose handler writes the refusal (and SIGKILL follows GRACE_CPU_SECONDS later)."""
    used = resource.getrusage(resource.RUSAGE_SELF)
    soft = math.ceil(used.ru_utime + used.ru_stime + seconds)
    resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + GRACE_CPU_SECONDS))


GRACE_CPU_SECONDS = 5


def peak_resident_bytes() -> int:
    """This process's peak resident memory since it started its program (VmHWM; ru_maxrss would count
    the web process it was forked from)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


if __name__ == "__main__":
    main()
