"""A user's memory as one JSON document: every space with its parameters, pages of every tier, sessions
with their heat timeline, and long-term entries with their full history and provenance.

Vectors are left out: they are derived from the text and the model named in each space, and
`manage.py rebuild_indexes --reembed` makes them again. Reads only; safe to repeat. A space's document
can be restored into an empty space (services/restore.py), which embeds it again. The document's shape is
defined once, in memory_engine/export_format.py.
"""

from django.db.models import Count, Prefetch, Sum
from django.db.models.functions import Length

from memory_engine.documents import CoverageDoc, EntryCard, HeatPointCard, ReplyCostDoc, TurnCard, VersionCard
from memory_engine.export_format import (
    EXPORT_FORMAT,
    AssistantDoc,
    EntryDoc,
    HeatPoint,
    MarkDoc,
    PageDoc,
    SaidDoc,
    SessionDoc,
    SpaceExport,
    UserDoc,
    UserExport,
    VersionDoc,
)
from memory_engine.models import (
    SPACE_PARAMETERS,
    EntryVersion,
    HeatEvent,
    LongTermEntry,
    MemorySpace,
    MemoryUser,
    MidTermSession,
    Page,
    session_topic,
)
from memory_engine.store import index


def _part(model, row, **values):
    """The part `model` of the export document for a database row: each of its fields read from the row's
    attribute of that name, but for those given. Its values come from the database and are not checked
    again (export_format checks what is read in)."""
    return model.model_construct(
        **{name: values[name] if name in values else getattr(row, name) for name in model.model_fields}
    )


def _page_ids(pages) -> list[int]:
    return sorted(p.pk for p in pages.all())


def _version(version: EntryVersion, model=VersionDoc, **values):
    links = {"source_page_ids": _page_ids(version.source_pages), "with_entry": version.with_entry_id}
    return _part(model, version, **links, **values)


def _page(page: Page, model=PageDoc, **values):
    """A turn, with its words as said and its marks while curation holds some of them out."""
    if page.said is None:
        return _part(model, page, said=None, marks=[], **values)
    said = SaidDoc.model_construct(**page.said)
    return _part(model, page, said=said, marks=[_part(MarkDoc, mark) for mark in page.marks.all()], **values)


def _entry(entry: LongTermEntry, model=EntryDoc, **values):
    links = {"superseded_by": entry.superseded_by_id, "source_page_ids": _page_ids(entry.source_pages)}
    if model is EntryDoc:
        values.setdefault("history", [_version(v) for v in entry.versions.all()])
    return _part(model, entry, **links, **values)


# The doors' cards (documents.py): the export's part of the row, and what a door adds to it.


def entry_card(entry: LongTermEntry, *, covers: CoverageDoc) -> EntryCard:
    return _entry(entry, EntryCard, covers=covers)


def version_card(version: EntryVersion, *, changes: list[list[str]]) -> VersionCard:
    return _version(version, VersionCard, changes=changes)


def turn_card(page: Page, *, reply: ReplyCostDoc | None, withheld_reply: str | None) -> TurnCard:
    return _page(page, TurnCard, reply=reply, withheld_reply=withheld_reply)


# What a heat point reads of its row (its session's summary besides).
HEAT_POINT_FIELDS = (
    "id",
    "session_id",
    "at",
    "cause",
    "heat",
    "n_visit",
    "l_interaction",
    "recency",
    "turn",
    "turn_at",
)


def heat_point_card(event: HeatEvent, **values) -> HeatPointCard:
    """A heat event as every door gives it; its session's summary read from `event.session`."""
    return _part(HeatPointCard, event, session=event.session_id, topic=session_topic(event.session.summary), **values)


def _space(space: MemorySpace) -> SpaceExport:
    only_ids = Page.objects.only("id")
    pages = Page.objects.filter(space=space).defer("embedding").prefetch_related("marks").order_by("seq")
    sessions = (
        MidTermSession.objects.filter(space=space)
        .defer("embedding")
        .prefetch_related(Prefetch("heat_events", queryset=HeatEvent.objects.order_by("at", "pk")))
        .order_by("pk")
    )
    entries = (
        LongTermEntry.objects.filter(space=space)
        .defer("embedding")
        .prefetch_related(
            Prefetch("source_pages", queryset=only_ids),
            Prefetch(
                "versions", queryset=EntryVersion.objects.prefetch_related(Prefetch("source_pages", queryset=only_ids))
            ),
        )
        .order_by("pk")
    )
    assistant = space.assistant
    return _part(
        SpaceExport,
        space,
        assistant=_part(AssistantDoc, assistant, id=assistant.external_id),
        parameters={name: getattr(space, name) for name in SPACE_PARAMETERS},
        pages=[_page(p) for p in pages],
        sessions=[
            _part(SessionDoc, s, heat_timeline=[_part(HeatPoint, e) for e in s.heat_events.all()]) for s in sessions
        ],
        entries=[_entry(e) for e in entries],
    )


def space_export(*, space: MemorySpace) -> dict:
    """Everything one space holds (see the module docstring), in the shape of export_format.SpaceExport."""
    return _space(space).model_dump(mode="json")


def user_export(*, user: MemoryUser) -> dict:
    """Every space of the user, in the shape of export_format.UserExport."""
    spaces = MemorySpace.objects.filter(user=user).select_related("assistant", "user").order_by("pk")
    document = UserExport.model_construct(
        format=EXPORT_FORMAT,
        user=_part(UserDoc, user, id=user.external_id),
        spaces=[_space(space) for space in spaces],
    )
    return document.model_dump(mode="json")


def space_counts(*, space: MemorySpace) -> dict[str, int]:
    """How much each tier of the space holds now."""
    pages = dict(
        Page.objects.filter(space=space).order_by().values_list("tier").annotate(n=Count("id")).values_list("tier", "n")
    )
    sessions = dict(
        MidTermSession.objects.filter(space=space)
        .order_by()
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    entries = dict(
        LongTermEntry.objects.filter(space=space, status=LongTermEntry.Status.ACTIVE)
        .order_by()
        .values_list("kind")
        .annotate(n=Count("id"))
        .values_list("kind", "n")
    )
    return {
        "short_term_pages": pages.get(Page.Tier.SHORT, 0),
        "mid_term_pages": pages.get(Page.Tier.MID, 0),
        "archived_pages": pages.get(Page.Tier.ARCHIVED, 0),
        "active_sessions": sessions.get(MidTermSession.Status.ACTIVE, 0),
        "evicted_sessions": sessions.get(MidTermSession.Status.EVICTED, 0),
        "profile_entries": entries.get(LongTermEntry.Kind.PROFILE, 0),
        "user_knowledge": entries.get(LongTermEntry.Kind.USER_KNOWLEDGE, 0),
        "assistant_knowledge": entries.get(LongTermEntry.Kind.ASSISTANT_KNOWLEDGE, 0),
    }


def space_sizes(*, space: MemorySpace) -> dict[str, int]:
    """How big the space is: characters of turn text and of long-term values, stored vectors, and the
    bytes of its index files on this machine."""
    text = Page.objects.filter(space=space).aggregate(
        n=Sum(Length("user_input") + Length("agent_response"), default=0)
    )["n"]
    values = LongTermEntry.objects.filter(space=space).aggregate(n=Sum(Length("value"), default=0))["n"]
    vectors = (
        Page.objects.filter(space=space, embedding__isnull=False).count()
        + MidTermSession.objects.filter(space=space).count()
        + LongTermEntry.objects.filter(space=space, embedding__isnull=False).count()
    )
    folder = index.index_dir(space.pk)
    files = sum(f.stat().st_size for f in folder.glob("*.faiss")) if folder.exists() else 0
    return {"turn_text_chars": text, "long_term_chars": values, "vectors": vectors, "index_file_bytes": files}
