"""A user's memory as one JSON document: every space with its parameters, pages of every tier, sessions
with their heat timeline, and long-term entries with their full history and provenance.

Vectors are left out: they are derived from the text and the model named in each space, and
`manage.py rebuild_indexes --reembed` makes them again. Reads only; safe to repeat. A space's document
can be restored into an empty space (engine/restore.py), which embeds it again.
"""

from django.db.models import Count, Prefetch, Sum
from django.db.models.functions import Length

from memory_engine.models import (
    SPACE_PARAMETERS,
    EntryVersion,
    HeatEvent,
    LongTermEntry,
    MemorySpace,
    MemoryUser,
    MidTermSession,
    Page,
)
from memory_engine.store import index

EXPORT_FORMAT = "memoryos-export-1"


def _time(value) -> str | None:
    return value.isoformat() if value else None


def _page(page: Page) -> dict:
    return {
        "id": page.pk,
        "seq": page.seq,
        "tier": page.tier,
        "session_id": page.session_id,
        "user_input": page.user_input,
        "agent_response": page.agent_response,
        "reply_withheld": page.reply_withheld,
        "reply_source": page.reply_source,
        "timestamp": _time(page.timestamp),
        "meta": page.meta,
        "keywords": page.keywords,
        "thread_summary": page.thread_summary,
        "continues_previous": page.continues_previous,
        "analyzed": page.analyzed,
    }


def _session(session: MidTermSession) -> dict:
    return {
        "id": session.pk,
        "status": session.status,
        "summary": session.summary,
        "keywords": session.keywords,
        "n_visit": session.n_visit,
        "l_interaction": session.l_interaction,
        "heat": session.heat,
        "total_visits": session.total_visits,
        "last_visit_at": _time(session.last_visit_at),
        "created_at": _time(session.created_at),
        "promoted_at": _time(session.promoted_at),
        "evicted_at": _time(session.evicted_at),
        "heat_timeline": [
            {
                "at": _time(e.at),
                "cause": e.cause,
                "heat": e.heat,
                "n_visit": e.n_visit,
                "l_interaction": e.l_interaction,
                "recency": e.recency,
            }
            for e in session.heat_events.all()
        ],
    }


def version_dict(version: EntryVersion) -> dict:
    return {
        "id": version.pk,
        "before": version.before,
        "after": version.after,
        "status_after": version.status_after,
        "cause": version.cause,
        "actor": version.actor,
        "at": _time(version.at),
        "source_page_ids": sorted(p.pk for p in version.source_pages.all()),
    }


def entry_dict(entry: LongTermEntry, *, history: bool = True) -> dict:
    """An entry with its provenance, and (with `history`) every version of it."""
    out = {
        "id": entry.pk,
        "kind": entry.kind,
        "key": entry.key,
        "value": entry.value,
        "status": entry.status,
        "superseded_by": entry.superseded_by_id,
        "hits": entry.hits,
        "last_hit_at": _time(entry.last_hit_at),
        "created_at": _time(entry.created_at),
        "updated_at": _time(entry.updated_at),
        "source_page_ids": sorted(p.pk for p in entry.source_pages.all()),
    }
    if history:
        out["history"] = [version_dict(v) for v in entry.versions.all()]
    return out


def space_export(*, space: MemorySpace) -> dict:
    """Everything one space holds (see the module docstring)."""
    only_ids = Page.objects.only("id")
    pages = Page.objects.filter(space=space).defer("embedding").order_by("seq")
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
    return {
        "assistant": {
            "id": space.assistant.external_id,
            "name": space.assistant.name,
            "persona": space.assistant.persona,
        },
        "parameters": {name: getattr(space, name) for name in SPACE_PARAMETERS},
        "embedding_model": space.embedding_model,
        "created_at": _time(space.created_at),
        "pages": [_page(p) for p in pages],
        "sessions": [_session(s) for s in sessions],
        "entries": [entry_dict(e) for e in entries],
    }


def user_export(*, user: MemoryUser) -> dict:
    """Every space of the user, as space_export."""
    spaces = MemorySpace.objects.filter(user=user).select_related("assistant", "user").order_by("pk")
    return {
        "format": EXPORT_FORMAT,
        "user": {"id": user.external_id, "display_name": user.display_name, "created_at": _time(user.created_at)},
        "spaces": [space_export(space=space) for space in spaces],
    }


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
