"""Memory users, assistants and their spaces: made, found, their parameters set, deleted; what they hold."""

from django.db.models import Count, Q, QuerySet

from memory_engine.beyond.export import space_counts, space_sizes
from memory_engine.models import LongTermEntry, MemorySpace, MidTermSession, Page
from memory_engine.store.spaces import (
    assistant_create,
    holder_key,
    owned_user_create,
    space_delete,
    space_get,
    space_parameters_set,
    user_create,
    user_memory_delete,
    user_take_over,
)

__all__ = [
    "assistant_create",
    "holder_key",
    "owned_spaces",
    "owned_user_create",
    "space_counts",
    "space_delete",
    "space_get",
    "space_parameters_set",
    "space_sizes",
    "user_create",
    "user_memory_delete",
    "user_take_over",
]


def owned_spaces(account) -> QuerySet:
    """The memory spaces of `account`'s memory users, by user then assistant, each with what its tiers
    hold now, named as space_counts names them: short_term_pages, mid_term_pages, active_sessions and
    active_entries."""
    return (
        MemorySpace.objects.filter(user__owner=account)
        .select_related("user", "assistant")
        .annotate(
            short_term_pages=Count("pages", filter=Q(pages__tier=Page.Tier.SHORT), distinct=True),
            mid_term_pages=Count("pages", filter=Q(pages__tier=Page.Tier.MID), distinct=True),
            active_sessions=Count("sessions", filter=Q(sessions__status=MidTermSession.Status.ACTIVE), distinct=True),
            active_entries=Count("entries", filter=Q(entries__status=LongTermEntry.Status.ACTIVE), distinct=True),
        )
        .order_by("user__external_id", "assistant__external_id")
    )
