"""Facts from another memory system, as mem0 lists them: `{"results": [{"id", "memory", "created_at",
"updated_at", "metadata", ...}]}`, or the list itself (`"text"` is taken for `"memory"` too). Each becomes a
knowledge entry of the person whose provenance names where it came from; none is a turn.
"""

from memory_engine.formats.common import Fact, FormatError, source_id, when

KEYS = frozenset({"memory"})
LIST_FIELDS = ("results", "memories")  # an object holding the list under one of these


def is_fact(value: object) -> bool:
    return isinstance(value, dict) and isinstance(value.get("memory", value.get("text")), str) and "role" not in value


def fact(raw: object, number: int) -> Fact:
    where = f"memory {number}"
    if not is_fact(raw):
        raise FormatError('a memory is an object with its text in "memory"', where)
    metadata = raw.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        raise FormatError("a memory's metadata is an object", where)
    text = raw.get("memory", raw.get("text")).strip()
    if not text:
        raise FormatError("a memory's text is empty", where)
    time = when(raw.get("updated_at") or raw.get("created_at"), where)
    extra = {name: raw[name] for name in ("categories", "user_id", "agent_id") if raw.get(name) is not None}
    return Fact(
        key=source_id(raw.get("id") or raw.get("hash") or number, where),
        text=text,
        time=time,
        metadata={**(metadata or {}), **extra},
    )
