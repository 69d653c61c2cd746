"""What the owner or an admin changes by hand: profile and knowledge entries added, edited, deleted and
reverted (each change a version in the entry's history), pages and sessions corrected. A delete or an
edit changes the turns the entry was drawn from too (engine/curation.py): `coverage` says what it covered,
`page_marks` what a turn holds out. Erasing (engine/erasure.py) removes the words for good."""

from django.db.models import Prefetch, QuerySet

from memory_engine import inputs
from memory_engine.engine.curation import COVERAGE_PREFETCH, coverage, page_marks
from memory_engine.engine.erasure import erase_entry, erase_statement, erase_turn
from memory_engine.engine.long_term import (
    entry_delete,
    entry_edit,
    entry_of,
    entry_revert,
    knowledge_entries,
    knowledge_entry_add,
    profile_entry_add,
    user_profile,
    version_to_revert_to,
)
from memory_engine.engine.mid_term import page_edit, page_words, session_edit, summary_text
from memory_engine.models import LongTermEntry, MemorySpace, Page
from memory_engine.services.export import entry_dict, version_dict

__all__ = [
    "COVERAGE_PREFETCH",
    "coverage",
    "entries",
    "entry_card",
    "entry_delete",
    "entry_dict",
    "entry_edit",
    "entry_of",
    "entry_revert",
    "erase_entry",
    "erase_statement",
    "erase_turn",
    "knowledge_entries",
    "knowledge_entry_add",
    "page_edit",
    "page_marks",
    "page_words",
    "profile_entry_add",
    "session_edit",
    "summary_text",
    "user_profile",
    "version_dict",
    "version_to_revert_to",
    "versions",
]


def entry_card(entry: LongTermEntry) -> dict:
    """An entry as every door gives it (REST, MCP): its fields and provenance as the export writes them
    (entry_dict, without the history), and what its forget or edit holds out of the turns (`covers`)."""
    return {**entry_dict(entry, history=False), "covers": coverage(entry).as_dict()}


def entries(space: MemorySpace, *, kinds: tuple[str, ...], status: object = LongTermEntry.Status.ACTIVE) -> QuerySet:
    """The space's entries of `kinds` with `status` ("all" for every status; inputs.entry_status refuses
    another), in the order they were made, with what entry_card reads fetched with them."""
    wanted = inputs.entry_status(status)
    found = (
        LongTermEntry.objects.filter(space=space, kind__in=kinds)
        .defer("embedding")
        .prefetch_related(Prefetch("source_pages", queryset=Page.objects.only("id")), *COVERAGE_PREFETCH)
    )
    return (found if wanted is None else found.filter(status=wanted)).order_by("pk")


def versions(entry: LongTermEntry) -> QuerySet:
    """Every version of the entry, oldest first, with the ids of the turns each was drawn from."""
    only_ids = Page.objects.only("id")
    return entry.versions.prefetch_related(Prefetch("source_pages", queryset=only_ids)).order_by("at", "pk")
