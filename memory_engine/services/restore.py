"""Restoring a space's export (services/export.py) into an empty space: the same turns in the same tiers and
sessions, the sessions' heat and heat timelines, and the long-term entries with every version of their
history and the turns each came from. The vectors, which an export leaves out, are made again with the
configured model, so retrieval works at once. The export round-trip: export, restore, export again gives
the same document but for the ids (tests/integration/test_restore.py).

Everything is checked before anything is stored (export_format.parse_space: the error says what and
where), and the rows are stored in one transaction under the space's lock. Embedding is most of the work
(a minute for 4,400 pages on one core): a worker does it a part at a time (`restore_texts` are what need
vectors, in order; services/background.py keeps the vectors made so far), then stores the rows with them.
"""

import numpy as np

from memory_engine import inputs
from memory_engine.errors import MemoryInputError
from memory_engine.export_format import SpaceExport, parse_space
from memory_engine.models import (
    EntryVersion,
    HeatEvent,
    LongTermEntry,
    MemorySpace,
    MidTermSession,
    Page,
    StatementMark,
    page_text,
)
from memory_engine.store.embeddings import get_embedder, to_bytes
from memory_engine.store.index import rebuild_space_indexes
from memory_engine.store.writes import space_write


def _holds_memory(space: MemorySpace) -> bool:
    return Page.objects.filter(space=space).exists() or LongTermEntry.objects.filter(space=space).exists()


NOT_EMPTY = "a space's export is restored into an empty space; this one holds memory"


def restore_check(*, space: MemorySpace, document: object, parameters: dict | None = None) -> SpaceExport:
    """The export's space (export_format.parse_space picks and checks it), its parameters but for
    `parameters`: what space_restore stores. Raises BadExport (or InputTooLarge, InvalidParameter) for a
    document that cannot be restored and MemoryInputError for a space that is not empty. Stores nothing: a
    door checks before it has a worker restore."""
    checked = parse_space(document, space.assistant.external_id)
    checked.parameters |= inputs.space_parameters(parameters or {})
    if _holds_memory(space):
        raise MemoryInputError(NOT_EMPTY)
    return checked


def restore_texts(checked: SpaceExport) -> list[str]:
    """The texts a restore embeds, in this order: the pages not in short-term, the sessions' summaries,
    and the knowledge entries."""
    return [
        *(page_text(p.user_input, p.agent_response) for p in checked.pages if p.tier != Page.Tier.SHORT),
        *(s.summary for s in checked.sessions),
        *(e.value for e in checked.entries if e.kind != LongTermEntry.Kind.PROFILE),
    ]


def space_restore(
    *, space: MemorySpace, document: object, parameters: dict | None = None, vectors: np.ndarray | None = None
) -> dict[str, int]:
    """Fill the empty `space` with the space of an export (space_document picks it; its parameters come
    with it, but for `parameters`) and embed it again (`vectors`: those of restore_texts, made already).
    Returns how many pages, sessions, heat points, entries and versions it stored. Raises as
    restore_check does; then nothing is stored."""
    checked = restore_check(space=space, document=document, parameters=parameters)
    pages = {p.id: p for p in checked.pages}
    sessions = {s.id: s for s in checked.sessions}
    entries = {e.id: e for e in checked.entries}
    if vectors is None:
        texts = restore_texts(checked)
        vectors = get_embedder().encode(texts) if texts else np.zeros((0, 0), dtype=np.float32)
    embedded = iter(vectors)
    page_vectors = {pid: next(embedded) for pid, p in pages.items() if p.tier != Page.Tier.SHORT}
    session_vectors = {sid: next(embedded) for sid in sessions}
    entry_vectors = {eid: next(embedded) for eid, e in entries.items() if e.kind != LongTermEntry.Kind.PROFILE}

    with space_write(space.pk) as write:
        locked = write.space
        if _holds_memory(locked):  # filled since the check, by another restore or a turn
            raise MemoryInputError(NOT_EMPTY)
        for name, value in checked.parameters.items():
            setattr(locked, name, value)
        version = write.version
        session_of = {}
        for old_id, s in sessions.items():
            row = MidTermSession.objects.create(
                space=locked,
                **s.model_dump(include=_SESSION_FIELDS),
                embedding=to_bytes(session_vectors[old_id]),
                vector_version=version,
            )
            MidTermSession.objects.filter(pk=row.pk).update(created_at=s.created_at)
            session_of[old_id] = row
        HeatEvent.objects.bulk_create(
            [
                HeatEvent(space=locked, session=session_of[old_id], **point.model_dump())
                for old_id, s in sessions.items()
                for point in s.heat_timeline
            ],
            batch_size=1000,
        )
        page_rows = Page.objects.bulk_create(
            [
                Page(
                    space=locked,
                    **p.model_dump(exclude={"id", "session_id", "marks"}),
                    session=session_of.get(p.session_id),
                    embedding=to_bytes(page_vectors[pid]) if pid in page_vectors else None,
                    vector_version=version,
                )
                for pid, p in pages.items()
            ],
            batch_size=500,
        )
        page_of = dict(zip(pages, (row.pk for row in page_rows), strict=True))  # both databases return ids
        locked.last_seq = max((p.seq for p in pages.values()), default=0)
        locked.save(update_fields=["last_seq", *checked.parameters])

        entry_of = {}
        went_with: list[tuple[int, int]] = []  # (version, the export's entry it went with)
        for old_id, e in entries.items():
            row = LongTermEntry.objects.create(
                space=locked,
                **e.model_dump(include=_ENTRY_FIELDS),
                embedding=to_bytes(entry_vectors[old_id]) if old_id in entry_vectors else None,
                vector_version=version,
            )
            row.source_pages.set([page_of[pid] for pid in e.source_page_ids])
            entry_of[old_id] = row
            for v in e.history:
                made = EntryVersion.objects.create(
                    entry=row, **v.model_dump(exclude={"id", "source_page_ids", "with_entry"})
                )
                made.source_pages.set([page_of[pid] for pid in v.source_page_ids])
                if v.with_entry is not None:
                    went_with.append((made.pk, v.with_entry))
        for version_id, old_id in went_with:
            EntryVersion.objects.filter(pk=version_id).update(with_entry=entry_of[old_id])
        StatementMark.objects.bulk_create(
            [
                StatementMark(
                    space=locked,
                    page_id=page_of[pid],
                    entry=entry_of[mark.entry_id],
                    **mark.model_dump(exclude={"entry_id"}),
                )
                for pid, p in pages.items()
                for mark in p.marks
            ],
            batch_size=500,
        )
        for old_id, e in entries.items():
            LongTermEntry.objects.filter(pk=entry_of[old_id].pk).update(
                created_at=e.created_at,
                updated_at=e.updated_at,
                superseded_by=entry_of[e.superseded_by] if e.superseded_by is not None else None,
            )
    space.refresh_from_db()
    rebuild_space_indexes(space)
    return {
        "pages": len(pages),
        "sessions": len(sessions),
        "heat_points": sum(len(s.heat_timeline) for s in sessions.values()),
        "entries": len(entries),
        "versions": sum(len(e.history) for e in entries.values()),
    }


# What a restore stores as given; created_at and updated_at are set after (the database sets them on create).
_SESSION_FIELDS = {
    "summary", "keywords", "status", "n_visit", "l_interaction", "last_visit_at", "heat", "total_visits",
    "promoted_at", "evicted_at",
}  # fmt: skip
_ENTRY_FIELDS = {"kind", "key", "value", "status", "hits", "last_hit_at"}
