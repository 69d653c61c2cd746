"""Memory users, assistants and their spaces: made, found, their parameters set, deleted; what they hold."""

from django.db.models import Count, Q, QuerySet

from memory_engine import inputs
from memory_engine.models import (
    SPACE_PARAMETERS,
    HeatEvent,
    LongTermEntry,
    MemorySpace,
    MidTermSession,
    Page,
    ParameterChange,
)
from memory_engine.services.export import space_counts, space_sizes
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
    "heat_events",
    "holder_key",
    "owned_spaces",
    "owned_user_create",
    "parameter_changes",
    "sessions",
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


def sessions(space: MemorySpace, *, status: object = None) -> QuerySet:
    """The space's mid-term sessions (of `status`, when given), hottest first."""
    wanted = inputs.one_of(status, "status", MidTermSession.Status.values)
    found = MidTermSession.objects.filter(space=space).defer("embedding")
    return (found if wanted is None else found.filter(status=wanted)).order_by("-heat", "pk")


def heat_events(space: MemorySpace, *, session: object = None, cause: object = None) -> QuerySet:
    """The space's heat timeline (one session's, of one cause, when given), oldest first."""
    wanted, session_id = inputs.one_of(cause, "cause", HeatEvent.Cause.values), inputs.row_id(session, "session")
    found = HeatEvent.objects.filter(space=space)
    found = found if wanted is None else found.filter(cause=wanted)
    return (found if session_id is None else found.filter(session_id=session_id)).order_by("at", "pk")


def parameter_changes(space: MemorySpace, *, name: object = None) -> QuerySet:
    """The changes to the space's parameters (to one, when named), oldest first."""
    wanted = inputs.one_of(name, "name", list(SPACE_PARAMETERS))
    found = ParameterChange.objects.filter(space=space)
    return (found if wanted is None else found.filter(name=wanted)).order_by("at", "pk")
