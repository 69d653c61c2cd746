"""Memory users, assistants and their spaces: made, found, their parameters set, deleted; what they hold;
and the shadow spaces that experiments replay a space into (services/lab.py)."""

import uuid

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count, Model, OuterRef, Prefetch, QuerySet, Subquery
from django.db.models.functions import Coalesce
from django.utils.text import slugify

from memory_engine import inputs
from memory_engine.config import memory_settings
from memory_engine.errors import MemoryInputError, UnknownAssistant, UnknownUser, UserHeldByAccount, UserIdTaken
from memory_engine.models import (
    ACCOUNT_SEPARATOR,
    SPACE_PARAMETERS,
    Assistant,
    HeatEvent,
    ImportJob,
    ImportUpload,
    LongTermEntry,
    MemorySpace,
    MemoryUser,
    MidTermSession,
    OwnerChange,
    Page,
    ParameterChange,
    external_id_validator,
    memory_user_id_validator,
)
from memory_engine.services import export
from memory_engine.store import import_files, index
from memory_engine.store.holders import erase_deleted, holder_key
from memory_engine.store.writes import space_write

__all__ = [
    "assistant_create",
    "heat_events",
    "heat_point_card",
    "heat_point_cards",
    "heat_points_newest",
    "holder_of",
    "owned_spaces",
    "owned_user_create",
    "parameter_changes",
    "sessions",
    "space_delete",
    "space_get",
    "space_parameters_set",
    "user_create",
    "user_memory_delete",
    "user_take_over",
]


def _check_external_id(value: str, what: str, validator=external_id_validator) -> None:
    try:
        validator(value)
    except (ValidationError, TypeError):
        raise MemoryInputError(
            f"{what} id {value!r} is not valid: use 1-100 letters, digits, '_', '.', '@' or '-'"
        ) from None


def user_create(*, user_id: str, display_name: str = "") -> MemoryUser:
    """The operator's memory user `user_id` (commands, the library, MCP over stdio), created if new.
    Safe to repeat. Raises UserHeldByAccount when a playground account holds that id (possible only for
    rows made before account ids were namespaced): it is never adopted silently."""
    _check_external_id(user_id, "user")
    user, _ = MemoryUser.objects.select_related("owner").get_or_create(
        external_id=user_id, defaults={"display_name": display_name}
    )
    if user.owner is not None:
        raise UserHeldByAccount(user_id, user.owner.get_username())
    return user


def user_take_over(*, user_id: str, by: str) -> MemoryUser:
    """Make the memory user `user_id` the operator's, whoever held it, and record who held it
    (models.OwnerChange). The account loses sight of it; the operator's tokens reach it."""
    _check_external_id(user_id, "user")  # operator ids only: an account's `name:id` is never taken over
    with transaction.atomic():
        user = MemoryUser.objects.select_for_update().filter(external_id=user_id).first()
        if user is None:
            raise UnknownUser(user_id)
        if user.owner_id is not None:
            OwnerChange.objects.create(user=user, previous_owner=user.owner.get_username(), owner=None, by=by)
            user.owner = None
            user.save(update_fields=["owner"])
    return user


def account_user_id(owner, name: str) -> str:
    """The id of the memory user an account calls `name`: `<username>:<name>` (models.ACCOUNT_SEPARATOR).
    `name` may already carry the account's own prefix."""
    prefix = f"{owner.get_username()}{ACCOUNT_SEPARATOR}"
    name = name.removeprefix(prefix)
    _check_external_id(name, "user")
    return prefix + name


def owned_user_create(*, owner, user_id: str, display_name: str = "", exist_ok: bool = True) -> MemoryUser:
    """Create the memory user an account calls `user_id`, in the account's namespace (account_user_id),
    or return it if the account already has it (UserIdTaken instead when not `exist_ok`). Raises
    UserIdTaken when the id is held by memory that is not the account's."""
    full_id = account_user_id(owner, user_id)
    user, created = MemoryUser.objects.get_or_create(
        external_id=full_id, defaults={"display_name": display_name, "owner": owner}
    )
    if not created and (user.owner_id != owner.pk or not exist_ok):
        raise UserIdTaken(full_id)
    return user


def assistant_create(*, assistant_id: str, name: str = "", persona: str = "") -> Assistant:
    """Create an assistant, or return the existing one with that id. Safe to repeat."""
    _check_external_id(assistant_id, "assistant")
    assistant, _ = Assistant.objects.get_or_create(
        external_id=assistant_id, defaults={"name": name or assistant_id, "persona": persona}
    )
    return assistant


def space_get(*, user_id: str, assistant_id: str, create: bool = True) -> MemorySpace:
    """The memory space of a known user and a known assistant, created on first use.

    Raises UnknownUser / UnknownAssistant for ids never created, and MemoryInputError for an id that
    cannot be one or when the space does not exist and `create` is false. Creating is safe to repeat
    and to race.
    """
    _check_external_id(user_id, "user", memory_user_id_validator)  # before any query: e.g. no lone surrogate
    _check_external_id(assistant_id, "assistant")
    user = MemoryUser.objects.filter(external_id=user_id).first()
    if user is None:
        raise UnknownUser(user_id)
    assistant = Assistant.objects.filter(external_id=assistant_id).first()
    if assistant is None:
        raise UnknownAssistant(assistant_id)
    space = MemorySpace.objects.filter(user=user, assistant=assistant).first()
    if space is not None:
        space.user, space.assistant = user, assistant  # already read: spares two queries on first use
        return space
    if not create:
        raise MemoryInputError(f"no memory space for user {user_id!r} and assistant {assistant_id!r}")
    try:
        with transaction.atomic():
            return MemorySpace.objects.create(user=user, assistant=assistant, **space_defaults())
    except IntegrityError:  # another process created it first
        return MemorySpace.objects.get(user=user, assistant=assistant)


def space_parameters_set(space: MemorySpace, values: dict, *, actor: str = "") -> MemorySpace:
    """Change some of a space's parameters, checked (inputs.space_parameters; InvalidParameter names
    the first bad one, and then nothing changes). Only those columns are written, under the space's
    lock, so what a chat turn or a worker wrote to the row meanwhile (page numbers, vector version,
    lease) stays; each value that changed is recorded (ParameterChange, with `actor`). Returns the space
    as now stored; the next consolidation applies the new values."""
    checked = inputs.space_parameters(values)
    with space_write(space.pk) as write:
        changes = [
            ParameterChange(
                space=write.space, name=name, before=getattr(write.space, name), after=value, actor=actor[:150]
            )
            for name, value in checked.items()
            if getattr(write.space, name) != value
        ]
        for name, value in checked.items():
            setattr(write.space, name, value)
        if checked:
            write.space.save(update_fields=list(checked))
        ParameterChange.objects.bulk_create(changes)
    return write.space


# The setting each parameter of a new space is copied from (config.MemorySettings; MEMORYOS_<SETTING>).
PARAMETER_SETTINGS = {
    "stm_capacity": "stm_capacity",
    "mtm_capacity": "mtm_capacity",
    "knowledge_capacity": "knowledge_capacity",
    "merge_theta": "merge_theta",
    "heat_threshold": "heat_threshold",
    "heat_alpha": "heat_alpha",
    "heat_beta": "heat_beta",
    "heat_gamma": "heat_gamma",
    "recency_mu_seconds": "recency_mu_seconds",
    "eviction_policy": "eviction_policy",
    "top_pages": "top_pages",
    "top_knowledge": "top_knowledge",
    "context_token_budget": "context_token_budget",
    "lexical_weight": "retrieval_lexical_weight",
    "chain_weight": "retrieval_chain_weight",
    "reranker_weight": "retrieval_reranker_weight",
}


def space_defaults() -> dict:
    """The parameters of a new space, from the engine's settings (PARAMETER_SETTINGS)."""
    now = memory_settings()
    return {name: getattr(now, setting) for name, setting in PARAMETER_SETTINGS.items()}


# The id of a shadow space's memory user starts with this; '~' is in no id an account or the operator
# can give (models.memory_user_id_validator), so no one can take or reach one through the usual doors.
SHADOW_PREFIX = "~experiment-"


def shadow_space_create(*, source: MemorySpace, parameters: dict, name: str = "") -> MemorySpace:
    """A new, empty space with the source's parameters but for `parameters` (checked: InvalidParameter
    names the first bad one), for a memory user of its own that no account owns, with the source user's
    display name (retrieval leaves the speakers' names out of a query) and the source's assistant. The user's
    id says what it is where the admin lists it: "~experiment-hotter-and-more-lexical-of-alice-3f2a9c1b"."""
    checked = inputs.space_parameters(parameters)
    what = "-".join(filter(None, [slugify(name)[:60], "of", source.user.external_id[:120], uuid.uuid4().hex[:8]]))
    user = MemoryUser.objects.create(external_id=f"{SHADOW_PREFIX}{what}", display_name=source.user.display_name)
    values = {name: getattr(source, name) for name in SPACE_PARAMETERS} | checked
    return MemorySpace.objects.create(user=user, assistant=source.assistant, **values)


def space_delete(*, space: MemorySpace) -> None:
    """Delete everything of one memory space: turns, sessions, heat timeline, profile, knowledge and its
    history, consolidation runs (a queued job then finds the space gone and does nothing), its index
    files, the files brought to import into it, and its experiments' shadow spaces; a shadow space goes
    with its memory user. Nothing of any
    other space is touched. Safe to repeat."""
    space_id = space.pk
    for shadow in MemorySpace.objects.filter(experiment__source_id=space_id).select_related("user"):
        space_delete(space=shadow)
    user = MemoryUser.objects.filter(pk=space.user_id).only("external_id").first()
    import_files.remove_on_commit(list(ImportUpload.objects.filter(space_id=space_id).values_list("path", flat=True)))
    MemorySpace.objects.filter(pk=space_id).delete()  # the rows of every tier cascade with it
    index.forget_space(space_id, delete_files=True)
    transaction.on_commit(erase_deleted)
    if user is not None and user.external_id.startswith(SHADOW_PREFIX):
        user.delete()


def user_memory_delete(*, user: MemoryUser) -> int:
    """Delete all the memory of a user (every space, as space_delete, and the user's API tokens), and the
    user. Returns the number of spaces deleted. Nothing of other users is touched. Safe to repeat."""
    spaces = list(MemorySpace.objects.filter(user=user))
    for space in spaces:
        space_delete(space=space)
    MemoryUser.objects.filter(pk=user.pk).delete()
    return len(spaces)


def owned_spaces(account) -> QuerySet:
    """The memory spaces of `account`'s memory users, by user then assistant, each with what its tiers
    hold now, named as space_counts names them: short_term_pages, mid_term_pages, active_sessions and
    active_entries. Each count is a subquery of its own: counted over joins of the pages, sessions and
    entries together, a space of 1,320 pages, 92 sessions and 1,869 entries made 227 million rows, and
    the signed-in home page ran for 52 s and failed with the database's disk full of them."""

    def counted(rows: QuerySet) -> Coalesce:
        per_space = rows.filter(space=OuterRef("pk")).order_by().values("space").annotate(n=Count("pk"))
        return Coalesce(Subquery(per_space.values("n")), 0)

    return (
        MemorySpace.objects.filter(user__owner=account)
        .select_related("user", "assistant")
        .annotate(
            short_term_pages=counted(Page.objects.filter(tier=Page.Tier.SHORT)),
            mid_term_pages=counted(Page.objects.filter(tier=Page.Tier.MID)),
            active_sessions=counted(MidTermSession.objects.filter(status=MidTermSession.Status.ACTIVE)),
            active_entries=counted(LongTermEntry.objects.filter(status=LongTermEntry.Status.ACTIVE)),
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
    found = HeatEvent.objects.filter(space=space).select_related("session").defer("session__embedding")
    found = found if wanted is None else found.filter(cause=wanted)
    return (found if session_id is None else found.filter(session_id=session_id)).order_by("at", "pk")


def heat_point_card(event: HeatEvent) -> dict:
    """A heat event as every door gives it (documents.HeatPointCard)."""
    return export.heat_point_card(event).payload()


def heat_point_cards(events) -> list[dict]:
    """Heat events as every door gives them (documents.HeatPointCard: REST's timeline, the admin's chart)."""
    return [heat_point_card(event) for event in events]


def heat_points_newest(space: MemorySpace, newest: int) -> list[dict]:
    """The space's `newest` heat points, oldest first, as heat_point_cards gives them (the admin's chart)."""
    return heat_point_cards(reversed(heat_events(space).order_by("-at", "-pk")[:newest]))


def parameter_changes(space: MemorySpace, *, name: object = None) -> QuerySet:
    """The changes to the space's parameters (to one, when named), oldest first."""
    wanted = inputs.one_of(name, "name", list(SPACE_PARAMETERS))
    found = ParameterChange.objects.filter(space=space)
    return (found if wanted is None else found.filter(name=wanted)).order_by("at", "pk")


# --- Selectors: what a door reads of users and spaces -------------------------------------------------

# The heavy columns a door never shows, left unread when it fetches a row by id.
_UNREAD = {Page: ("embedding",), MidTermSession: ("embedding",), ImportJob: ("turns",)}


def row_of(space: MemorySpace, model: type[Model], row_id: object) -> Model | None:
    """The space's row of `model` with this id, or None (an id that is not a whole number, or beyond any
    database's ids, included)."""
    if not inputs.is_row_id(row_id):
        return None
    return model.objects.filter(space=space, pk=row_id).defer(*_UNREAD.get(model, ())).first()


def visible_users(*, memory_user_id: int | None = None, account=None) -> QuerySet:
    """The memory users a caller may see: a token's own (`memory_user_id`), or those `account` owns; none
    for anybody else."""
    if memory_user_id is not None:
        return MemoryUser.objects.filter(pk=memory_user_id)
    if account is not None and account.is_authenticated:
        return MemoryUser.objects.filter(owner=account)
    return MemoryUser.objects.none()


def with_spaces(users: QuerySet) -> QuerySet:
    """`users` with their spaces and the spaces' assistants fetched (a user's document lists them)."""
    return users.prefetch_related(Prefetch("spaces", queryset=MemorySpace.objects.select_related("assistant")))


def user_named(user_id: str) -> MemoryUser | None:
    """The memory user with this external id, whoever holds it (the operator's doors: stdio MCP, commands)."""
    return MemoryUser.objects.filter(external_id=user_id).first()


def holder_of(*, account_id: int | None = None, memory_user_id: int | None = None) -> str:
    """Who holds what a caller reaches, as a key (store.holders.holder_key), for counts kept outside the
    database (open memory feeds): a signed-in account (`account_id`) holds itself; a token's memory user
    (`memory_user_id`) is held by the account owning it, or by itself when no account does."""
    if memory_user_id is None:
        return holder_key(owner_id=account_id, memory_user_id=None)
    owner = MemoryUser.objects.filter(pk=memory_user_id).values_list("owner_id", flat=True).first()
    return holder_key(owner_id=owner, memory_user_id=memory_user_id)


def space_named(*, user_id: str, assistant_id: str, owner=None) -> MemorySpace | None:
    """The space of memory user `user_id` with the assistant (its user and assistant fetched), or None;
    with `owner`, only when that account owns the user."""
    found = MemorySpace.objects.select_related("user", "assistant").filter(
        user__external_id=user_id, assistant__external_id=assistant_id
    )
    return (found if owner is None else found.filter(user__owner=owner)).first()


def space_now(space: MemorySpace) -> MemorySpace:
    """The space's row as it is now, with its user and assistant."""
    return MemorySpace.objects.select_related("user", "assistant").get(pk=space.pk)


def all_spaces(*, space_id: int | None = None) -> list[MemorySpace]:
    """Every memory space (or the one with `space_id`), with its user and assistant, as they were made."""
    found = MemorySpace.objects.select_related("user", "assistant").order_by("pk")
    return list(found if space_id is None else found.filter(pk=space_id))
