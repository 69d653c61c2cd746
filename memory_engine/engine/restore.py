"""Restoring a space's export (engine/export.py) into an empty space: the same turns in the same tiers and
sessions, the sessions' heat and heat timelines, and the long-term entries with every version of their
history and the turns each came from. The vectors, which an export leaves out, are made again with the
configured model, so retrieval works at once. The export round-trip: export, restore, export again gives
the same document but for the ids (tests/test_restore.py).

Everything is checked before anything is stored (MemoryInputError says what and where), and the whole
restore is one transaction under the space's lock.
"""

import math
from datetime import datetime

from memory_engine import inputs
from memory_engine.engine.export import EXPORT_FORMAT
from memory_engine.errors import InputTooLarge, MemoryInputError
from memory_engine.models import (
    EntryVersion,
    HeatEvent,
    LongTermEntry,
    MemorySpace,
    MidTermSession,
    Page,
    page_text,
)
from memory_engine.store.embeddings import get_embedder, to_bytes
from memory_engine.store.index import rebuild_space_indexes
from memory_engine.store.writes import space_write

MAX_PAGES = 5000
MAX_SESSIONS = 5000
MAX_ENTRIES = 5000
MAX_VERSIONS = 50_000
MAX_POINTS = 200_000  # heat timeline points in all
MAX_KEYWORDS = 100
ACTOR_CHARS = 200


class BadExport(MemoryInputError):
    """An export document that cannot be restored; the message says where."""


def _at(where: str, message: str) -> BadExport:
    return BadExport(f"{where}: {message}")


def _object(value: object, where: str) -> dict:
    if not isinstance(value, dict):
        raise _at(where, "must be an object")
    return value


def _list(value: object, where: str, limit: int) -> list:
    if not isinstance(value, list):
        raise _at(where, "must be a list")
    if len(value) > limit:
        raise InputTooLarge(f"{where}: at most {limit} items, not {len(value)}")
    return value


def _whole(value: object, where: str, *, low: int = 0) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value < 2**31:
        raise _at(where, f"must be a whole number from {low}")
    return value


def _number(value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise _at(where, "must be a finite number")
    return float(value)


def _flag(value: object, where: str, *, nullable: bool = False) -> bool | None:
    if value is None and nullable:
        return None
    if not isinstance(value, bool):
        raise _at(where, "must be true or false")
    return value


def _choice(value: object, where: str, choices: list[str]) -> str:
    if value not in choices:
        raise _at(where, f"must be one of {', '.join(choices)}")
    return value


def _time(value: object, where: str, *, required: bool = True) -> datetime | None:
    try:
        when = inputs.timestamp(value)
    except MemoryInputError as exc:
        raise _at(where, str(exc)) from None
    if when is None and required:
        raise _at(where, "a date and time is required")
    return when


def _text(value: object, where: str, *, nullable: bool = False, limit: int | None = None) -> str | None:
    if value is None and nullable:
        return None
    try:
        return inputs.text(value, where, limit=limit)
    except MemoryInputError as exc:
        raise _at(where, str(exc)) from None


def _words(value: object, where: str) -> list[str]:
    return [_text(word, f"{where}[{i}]", limit=200) for i, word in enumerate(_list(value, where, MAX_KEYWORDS))]


def _id(value: object, where: str, known: dict, *, new: bool) -> int:
    """An id of the export: a whole number, not yet seen (`new`) or naming a row of `known`."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise _at(where, "must be a whole number (an id of the export)")
    if new and value in known:
        raise _at(where, f"id {value} comes twice")
    if not new and value not in known:
        raise _at(where, f"names {value}, which is not in the export")
    return value


def _ids(value: object, where: str, known: dict) -> list[int]:
    return [_id(page_id, where, known, new=False) for page_id in _list(value, where, MAX_PAGES)]


def space_document(document: object, assistant_id: str) -> dict:
    """The space's part of an export: a space's document itself, or a user's export (format
    memoryos-export-1) holding one space, or several among which the one with `assistant_id`."""
    document = _object(document, "the export")
    if "spaces" in document:
        if document.get("format") != EXPORT_FORMAT:
            raise _at("the export", f"format must be {EXPORT_FORMAT!r}")
        spaces = _list(document["spaces"], "spaces", 1000)
        if len(spaces) != 1:
            spaces = [s for s in spaces if isinstance(s, dict) and (s.get("assistant") or {}).get("id") == assistant_id]
        if len(spaces) != 1:
            raise _at("spaces", f"hold no single space with the assistant {assistant_id!r}")
        document = _object(spaces[0], "spaces[0]")
    return document


def _checked(document: dict) -> dict:
    """Every value of a space's document checked and converted, ids resolved; raises BadExport."""
    parameters = inputs.space_parameters(_object(document.get("parameters", {}), "parameters"))
    sessions = _checked_sessions(document.get("sessions", []))
    pages = _checked_pages(document.get("pages", []), sessions)
    entries = _checked_entries(document.get("entries", []), pages)
    return {"parameters": parameters, "sessions": sessions, "pages": pages, "entries": entries}


def _checked_sessions(rows: object) -> dict[int, dict]:
    sessions: dict[int, dict] = {}
    for i, row in enumerate(_list(rows, "sessions", MAX_SESSIONS)):
        where = f"sessions[{i}]"
        row = _object(row, where)
        session_id = _id(row.get("id"), f"{where}.id", sessions, new=True)
        session = {
            "status": _choice(row.get("status"), f"{where}.status", MidTermSession.Status.values),
            "summary": _text(row.get("summary"), f"{where}.summary"),
            "keywords": _words(row.get("keywords", []), f"{where}.keywords"),
            "n_visit": _whole(row.get("n_visit"), f"{where}.n_visit"),
            "l_interaction": _whole(row.get("l_interaction"), f"{where}.l_interaction"),
            "heat": _number(row.get("heat"), f"{where}.heat"),
            "total_visits": _whole(row.get("total_visits"), f"{where}.total_visits"),
            "last_visit_at": _time(row.get("last_visit_at"), f"{where}.last_visit_at"),
            "created_at": _time(row.get("created_at"), f"{where}.created_at"),
            "promoted_at": _time(row.get("promoted_at"), f"{where}.promoted_at", required=False),
            "evicted_at": _time(row.get("evicted_at"), f"{where}.evicted_at", required=False),
            "timeline": [],
        }
        for j, point in enumerate(_list(row.get("heat_timeline", []), f"{where}.heat_timeline", MAX_POINTS)):
            at = f"{where}.heat_timeline[{j}]"
            point = _object(point, at)
            session["timeline"].append(
                {
                    "at": _time(point.get("at"), f"{at}.at"),
                    "cause": _choice(point.get("cause"), f"{at}.cause", HeatEvent.Cause.values),
                    "heat": _number(point.get("heat"), f"{at}.heat"),
                    "n_visit": _whole(point.get("n_visit"), f"{at}.n_visit"),
                    "l_interaction": _whole(point.get("l_interaction", 0), f"{at}.l_interaction"),
                    "recency": _number(point.get("recency"), f"{at}.recency"),
                }
            )
        sessions[session_id] = session
    if sum(len(s["timeline"]) for s in sessions.values()) > MAX_POINTS:
        raise InputTooLarge(f"sessions: at most {MAX_POINTS} heat timeline points in all")
    return sessions


def _checked_pages(rows: object, sessions: dict) -> dict[int, dict]:
    pages: dict[int, dict] = {}
    last_seq = 0
    for i, row in enumerate(_list(rows, "pages", MAX_PAGES)):
        where = f"pages[{i}]"
        row = _object(row, where)
        seq = _whole(row.get("seq"), f"{where}.seq", low=1)
        if seq <= last_seq:
            raise _at(f"{where}.seq", "pages must come in increasing seq")
        last_seq = seq
        page_id = _id(row.get("id"), f"{where}.id", pages, new=True)
        tier = _choice(row.get("tier"), f"{where}.tier", Page.Tier.values)
        session_id = row.get("session_id")
        if (tier == Page.Tier.SHORT) != (session_id is None):
            raise _at(f"{where}.session_id", "a short-term page has none; any other names a session of the export")
        if session_id is not None:
            _id(session_id, f"{where}.session_id", sessions, new=False)
        try:
            user_input, agent_response = inputs.turn_texts(row.get("user_input", ""), row.get("agent_response", ""))
            meta = inputs.meta(row.get("meta"))
        except MemoryInputError as exc:
            raise _at(where, str(exc)) from None
        withheld = _flag(row.get("reply_withheld", False), f"{where}.reply_withheld")
        if withheld and agent_response:
            raise _at(where, "a turn whose reply is withheld keeps no agent_response")
        source = row.get("reply_source", Page.ReplySource.GIVEN)
        reply_source = _choice(source, f"{where}.reply_source", Page.ReplySource.values)
        pages[page_id] = {
            "seq": seq,
            "tier": tier,
            "session": session_id,
            "user_input": user_input,
            "agent_response": agent_response,
            "reply_withheld": withheld,
            "reply_source": reply_source,
            "timestamp": _time(row.get("timestamp"), f"{where}.timestamp"),
            "meta": meta,
            "keywords": _words(row.get("keywords", []), f"{where}.keywords"),
            "thread_summary": _text(row.get("thread_summary", ""), f"{where}.thread_summary"),
            "continues_previous": _flag(row.get("continues_previous"), f"{where}.continues_previous", nullable=True),
            "analyzed": _flag(row.get("analyzed", False), f"{where}.analyzed"),
        }
    return pages


def _checked_entries(rows: object, pages: dict) -> dict[int, dict]:
    entries: dict[int, dict] = {}
    versions = 0
    for i, row in enumerate(_list(rows, "entries", MAX_ENTRIES)):
        where = f"entries[{i}]"
        row = _object(row, where)
        entry_id = _id(row.get("id"), f"{where}.id", entries, new=True)
        try:
            key, value = inputs.entry_key(row.get("key", "")), inputs.entry_value(row.get("value"))
        except MemoryInputError as exc:
            raise _at(where, str(exc)) from None
        history = []
        for j, version in enumerate(_list(row.get("history", []), f"{where}.history", MAX_VERSIONS)):
            at = f"{where}.history[{j}]"
            version = _object(version, at)
            history.append(
                {
                    "before": _text(version.get("before"), f"{at}.before", nullable=True),
                    "after": _text(version.get("after"), f"{at}.after", nullable=True),
                    "status_after": _choice(
                        version.get("status_after"), f"{at}.status_after", LongTermEntry.Status.values
                    ),
                    "cause": _choice(version.get("cause"), f"{at}.cause", EntryVersion.Cause.values),
                    "actor": _text(version.get("actor"), f"{at}.actor", limit=ACTOR_CHARS),
                    "at": _time(version.get("at"), f"{at}.at"),
                    "sources": _ids(version.get("source_page_ids", []), f"{at}.source_page_ids", pages),
                }
            )
        versions += len(history)
        entries[entry_id] = {
            "kind": _choice(row.get("kind"), f"{where}.kind", LongTermEntry.Kind.values),
            "key": key,
            "value": value,
            "status": _choice(row.get("status"), f"{where}.status", LongTermEntry.Status.values),
            "superseded_by": row.get("superseded_by"),
            "hits": _whole(row.get("hits", 0), f"{where}.hits"),
            "last_hit_at": _time(row.get("last_hit_at"), f"{where}.last_hit_at", required=False),
            "created_at": _time(row.get("created_at"), f"{where}.created_at"),
            "updated_at": _time(row.get("updated_at"), f"{where}.updated_at"),
            "sources": _ids(row.get("source_page_ids", []), f"{where}.source_page_ids", pages),
            "history": history,
        }
    if versions > MAX_VERSIONS:
        raise InputTooLarge(f"entries: at most {MAX_VERSIONS} versions in all")
    for entry_id, entry in entries.items():
        if entry["superseded_by"] is not None:
            _id(entry["superseded_by"], f"entry {entry_id}.superseded_by", entries, new=False)
    return entries


def _holds_memory(space: MemorySpace) -> bool:
    return Page.objects.filter(space=space).exists() or LongTermEntry.objects.filter(space=space).exists()


NOT_EMPTY = "a space's export is restored into an empty space; this one holds memory"


def restore_check(*, space: MemorySpace, document: object, parameters: dict | None = None) -> dict:
    """The export's space (space_document picks it) checked whole and converted, its parameters but for
    `parameters`: what space_restore stores. Raises BadExport (or InputTooLarge) for a document that cannot be
    restored and MemoryInputError for a space that is not empty. Stores nothing: a door checks before it
    has a worker restore."""
    checked = _checked(space_document(document, space.assistant.external_id))
    checked["parameters"] |= inputs.space_parameters(parameters or {})
    if _holds_memory(space):
        raise MemoryInputError(NOT_EMPTY)
    return checked


def space_restore(*, space: MemorySpace, document: object, parameters: dict | None = None) -> dict[str, int]:
    """Fill the empty `space` with the space of an export (space_document picks it; its parameters come
    with it, but for `parameters`) and embed it again. Returns how many pages, sessions, heat points,
    entries and versions it stored. Raises as restore_check does; then nothing is stored."""
    checked = restore_check(space=space, document=document, parameters=parameters)
    pages, sessions, entries = checked["pages"], checked["sessions"], checked["entries"]
    page_vectors = _vectors(
        {
            pid: page_text(p["user_input"], p["agent_response"])
            for pid, p in pages.items()
            if p["tier"] != Page.Tier.SHORT
        }
    )
    session_vectors = _vectors({sid: s["summary"] for sid, s in sessions.items()})
    entry_vectors = _vectors({eid: e["value"] for eid, e in entries.items() if e["kind"] != LongTermEntry.Kind.PROFILE})

    with space_write(space.pk) as write:
        locked = write.space
        if _holds_memory(locked):  # filled since the check, by another restore or a turn
            raise MemoryInputError(NOT_EMPTY)
        for name, value in checked["parameters"].items():
            setattr(locked, name, value)
        version = write.version
        session_of = {}
        for old_id, s in sessions.items():
            row = MidTermSession.objects.create(
                space=locked,
                summary=s["summary"],
                keywords=s["keywords"],
                embedding=to_bytes(session_vectors[old_id]),
                status=s["status"],
                n_visit=s["n_visit"],
                l_interaction=s["l_interaction"],
                last_visit_at=s["last_visit_at"],
                heat=s["heat"],
                total_visits=s["total_visits"],
                promoted_at=s["promoted_at"],
                evicted_at=s["evicted_at"],
                vector_version=version,
            )
            MidTermSession.objects.filter(pk=row.pk).update(created_at=s["created_at"])
            session_of[old_id] = row
        HeatEvent.objects.bulk_create(
            [
                HeatEvent(space=locked, session=session_of[old_id], **point)
                for old_id, s in sessions.items()
                for point in s["timeline"]
            ],
            batch_size=1000,
        )
        page_rows = Page.objects.bulk_create(
            [
                Page(
                    space=locked,
                    seq=p["seq"],
                    user_input=p["user_input"],
                    agent_response=p["agent_response"],
                    reply_withheld=p["reply_withheld"],
                    reply_source=p["reply_source"],
                    timestamp=p["timestamp"],
                    meta=p["meta"],
                    tier=p["tier"],
                    session=session_of.get(p["session"]),
                    continues_previous=p["continues_previous"],
                    thread_summary=p["thread_summary"],
                    keywords=p["keywords"],
                    embedding=to_bytes(page_vectors[pid]) if pid in page_vectors else None,
                    analyzed=p["analyzed"],
                    vector_version=version,
                )
                for pid, p in pages.items()
            ],
            batch_size=500,
        )
        page_of = dict(zip(pages, (row.pk for row in page_rows), strict=True))  # both databases return ids
        locked.last_seq = max((p["seq"] for p in pages.values()), default=0)
        locked.save(update_fields=["last_seq", *checked["parameters"]])

        entry_of = {}
        for old_id, e in entries.items():
            row = LongTermEntry.objects.create(
                space=locked,
                kind=e["kind"],
                key=e["key"],
                value=e["value"],
                status=e["status"],
                embedding=to_bytes(entry_vectors[old_id]) if old_id in entry_vectors else None,
                hits=e["hits"],
                last_hit_at=e["last_hit_at"],
                vector_version=version,
            )
            row.source_pages.set([page_of[pid] for pid in e["sources"]])
            entry_of[old_id] = row
            for v in e["history"]:
                sources = v.pop("sources")
                made = EntryVersion.objects.create(entry=row, **v)
                made.source_pages.set([page_of[pid] for pid in sources])
        for old_id, e in entries.items():
            LongTermEntry.objects.filter(pk=entry_of[old_id].pk).update(
                created_at=e["created_at"],
                updated_at=e["updated_at"],
                superseded_by=entry_of[e["superseded_by"]] if e["superseded_by"] is not None else None,
            )
    space.refresh_from_db()
    rebuild_space_indexes(space)
    return {
        "pages": len(pages),
        "sessions": len(sessions),
        "heat_points": sum(len(s["timeline"]) for s in sessions.values()),
        "entries": len(entries),
        "versions": sum(len(e["history"]) for e in entries.values()),
    }


def _vectors(texts: dict) -> dict:
    """key -> the configured model's vector of its text."""
    if not texts:
        return {}
    return dict(zip(texts, get_embedder().encode(list(texts.values())), strict=True))
