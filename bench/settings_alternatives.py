"""pydantic-settings beside memory_engine/config.py's own reading of the environment (`pip install
pydantic-settings` first: it is no requirement): every MEMORYOS_* setting declared once more as a pydantic-settings
field (type, default, choices as a Literal), then both read the same environments: none set, each setting given a
good value, and each given a bad one (what is refused, and whether the refusal names the variable), and how long a
read takes. `python -m bench.settings_alternatives`; docs/architecture.md says what was kept.
"""

import os
import time
from collections import Counter
from contextlib import contextmanager
from dataclasses import MISSING
from pathlib import Path
from typing import Literal

from django.core.exceptions import ImproperlyConfigured
from pydantic import ValidationError, create_model
from pydantic_settings import BaseSettings, SettingsConfigDict

from memory_engine.config import PREFIX, SETTINGS, env_name, from_environment

# What pydantic-settings cannot read as ours does: a price table and the local servers' list are our own
# formats ("model=0.15/0.60; ..."), which it would take as JSON; they are left out of the comparison.
OWN_FORMATS = {dict, list}


def _default(spec):
    return spec.default_factory() if spec.default is MISSING else spec.default


def _kind(spec):
    return Literal[spec.metadata["choices"]] if spec.metadata["choices"] else spec.type


COMPARED = [spec for spec in SETTINGS if spec.type not in OWN_FORMATS]
Library = create_model(
    "Library",
    __base__=BaseSettings,
    **{spec.name: (_kind(spec), _default(spec)) for spec in COMPARED},
)
Library.model_config = SettingsConfigDict(env_prefix=PREFIX, case_sensitive=False)


@contextmanager
def environment(values: dict[str, str]):
    saved = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, was in saved.items():
            if was is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = was


def ours() -> dict:
    values = from_environment()
    return {spec.name: values[spec.name.upper()] for spec in COMPARED}


def library() -> dict:
    read = Library()
    return {spec.name: getattr(read, spec.name) for spec in COMPARED}


def _good(spec) -> str:
    default = _default(spec)
    if spec.metadata["choices"]:
        return spec.metadata["choices"][-1]
    if spec.type is bool:
        return "false" if default else "true"
    if spec.type is int:
        return str(default + 1)
    if spec.type is float:
        return str(default * 2 + 1)
    return "/tmp/elsewhere" if spec.type is Path else "other"


_BAD = {int: ["abc", "1.5", " "], float: ["abc", "1,5"], bool: ["maybe", "2", "y"], str: []}


def _refusal(read, spec) -> str:
    """ "read" when `read` reads it; else refused, and whether the refusal names the variable or only the field."""
    try:
        read()
    except (ImproperlyConfigured, ValidationError) as refused:
        if env_name(spec.name) in str(refused):
            return "refused: the variable"
        return "refused: the field" if spec.name in str(refused) else "refused: neither"
    return "read"


def compare() -> dict:
    none_set = ours() == library()
    good = [spec.name for spec in COMPARED if _read_both({env_name(spec.name): _good(spec)}, spec)]
    unlike = [spec.name for spec in COMPARED if spec.name not in good]
    bad = []
    for spec in COMPARED:
        cases = ["nothing like it"] if spec.metadata["choices"] else _BAD.get(spec.type, [])
        for raw in cases + [""]:
            with environment({env_name(spec.name): raw}):
                bad.append((spec.name, raw, _refusal(ours, spec), _refusal(library, spec)))
    return {
        "none set, same values": none_set,
        "good values read alike": (len(good), len(COMPARED)),
        "unlike": unlike,
        "bad": bad,
    }


def _read_both(values: dict, spec) -> bool:
    """Whether both read `values` alike; a value ours refuses beyond its type (a reranker's folder must hold the
    model) is not alike."""
    with environment(values):
        try:
            return ours()[spec.name] == library()[spec.name]
        except ImproperlyConfigured:
            return False


def timing(reads: int = 200) -> tuple[float, float]:
    """Milliseconds a read of every setting takes: ours, the library."""
    results = []
    for read in (ours, library):
        start = time.perf_counter()
        for _ in range(reads):
            read()
        results.append((time.perf_counter() - start) / reads * 1000)
    return results[0], results[1]


def main() -> None:
    import django

    django.setup()
    found = compare()
    print(
        f"settings compared: {len(COMPARED)} of {len(SETTINGS)} (left out, our own formats: "
        f"{', '.join(s.name for s in SETTINGS if s.type in OWN_FORMATS)})"
    )
    print(f"none set, the same values: {found['none set, same values']}")
    print("a good value of each, read alike: {}/{}".format(*found["good values read alike"]), found["unlike"])
    print(f"bad values tried: {len(found['bad'])}, by what each answered (ours / pydantic-settings):")
    answered = Counter(
        (f"{raw!r}" if raw in ("", " ") else "bad", mine, theirs) for _, raw, mine, theirs in found["bad"]
    )
    for (raw, mine, theirs), count in sorted(answered.items()):
        print(f"  {count:4} {raw:6} {mine:24} {theirs}")
    for name, raw, mine, theirs in found["bad"]:
        if (mine == "read") != (theirs == "read") and raw not in ("", " "):
            print(f"  read by one only: {name} = {raw!r}: ours {mine}, pydantic-settings {theirs}")
    own, lib = timing()
    print(f"a read of every setting: ours {own:.3f} ms, pydantic-settings {lib:.3f} ms ({lib / own:.1f}x)")


if __name__ == "__main__":
    main()
