"""Users, assistants and the memory space of each (user, assistant) pair, and the shadow spaces that
experiments replay a space into (services/lab.py)."""

import uuid

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import Q

from memory_engine import inputs
from memory_engine.errors import MemoryInputError, UnknownAssistant, UnknownUser, UserHeldByAccount, UserIdTaken
from memory_engine.models import (
    ACCOUNT_SEPARATOR,
    SPACE_PARAMETERS,
    Assistant,
    ImportUpload,
    MemorySpace,
    MemoryUser,
    OwnerChange,
    ParameterChange,
    external_id_validator,
    memory_user_id_validator,
)
from memory_engine.store import import_files, index
from memory_engine.store.writes import space_write


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


# The setting each parameter of a new space is copied from (MEMORYOS_<setting> in the environment).
PARAMETER_SETTINGS = {
    "stm_capacity": "STM_CAPACITY",
    "mtm_capacity": "MTM_CAPACITY",
    "knowledge_capacity": "KNOWLEDGE_CAPACITY",
    "merge_theta": "MERGE_THETA",
    "heat_threshold": "HEAT_THRESHOLD",
    "heat_alpha": "HEAT_ALPHA",
    "heat_beta": "HEAT_BETA",
    "heat_gamma": "HEAT_GAMMA",
    "recency_mu_seconds": "RECENCY_MU_SECONDS",
    "eviction_policy": "EVICTION_POLICY",
    "top_pages": "TOP_PAGES",
    "top_knowledge": "TOP_KNOWLEDGE",
    "context_token_budget": "CONTEXT_TOKEN_BUDGET",
    "lexical_weight": "RETRIEVAL_LEXICAL_WEIGHT",
    "chain_weight": "RETRIEVAL_CHAIN_WEIGHT",
}


def space_defaults() -> dict:
    """The parameters of a new space, from the MEMORYOS_* settings (PARAMETER_SETTINGS)."""
    return {name: settings.MEMORYOS[setting] for name, setting in PARAMETER_SETTINGS.items()}


# The id of a shadow space's memory user starts with this; '~' is in no id an account or the operator
# can give (models.memory_user_id_validator), so no one can take or reach one through the usual doors.
SHADOW_PREFIX = "~experiment-"


def shadow_space_create(*, source: MemorySpace, parameters: dict) -> MemorySpace:
    """A new, empty space with the source's parameters but for `parameters` (checked: InvalidParameter
    names the first bad one), for a memory user of its own that no account owns, with the source user's
    display name (retrieval leaves the speakers' names out of a query) and the source's assistant."""
    checked = inputs.space_parameters(parameters)
    user = MemoryUser.objects.create(
        external_id=f"{SHADOW_PREFIX}{uuid.uuid4().hex}", display_name=source.user.display_name
    )
    values = {name: getattr(source, name) for name in SPACE_PARAMETERS} | checked
    return MemorySpace.objects.create(user=user, assistant=source.assistant, **values)


def holder_key(*, owner_id: int | None, memory_user_id: int | None) -> str:
    """Who holds a memory user, as a key: the account owning it, or the memory user itself when no account
    does (same_holder's rule, for counts kept outside the database, such as open memory feeds)."""
    return f"account:{owner_id}" if owner_id is not None else f"memory-user:{memory_user_id}"


def same_holder(space: MemorySpace, via: str = "space") -> Q:
    """A filter for rows whose space (the field `via`) is held by whoever holds `space`: the account owning
    its memory user, that account's experiments' shadow spaces included; or, when no account owns it, that
    memory user. What per-account caps count over (imports, replays, restores, comparisons)."""
    user = space.user
    if user.owner_id is not None:
        return Q(**{f"{via}__user__owner_id": user.owner_id}) | Q(
            **{f"{via}__experiment__source__user__owner_id": user.owner_id}
        )
    return Q(**{f"{via}__user_id": user.pk}) | Q(**{f"{via}__experiment__source__user_id": user.pk})


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


def erase_deleted() -> None:
    """After a deletion, on SQLite: copy the write-ahead log into the database file and empty it, so that
    the deleted rows' words are left neither in the log nor (secure_delete, playground/databases.py) in the
    file's free pages. A checkpoint that a reader holds back finishes at a later one. PostgreSQL keeps
    deleted rows until VACUUM (autovacuum, or docs/deploying.md)."""
    if connection.vendor != "sqlite":
        return
    with connection.cursor() as cursor:
        # It waits for writers and readers to finish: two seconds at most, not the connection's 30.
        cursor.execute("PRAGMA busy_timeout")
        (usual,) = cursor.fetchone()
        cursor.execute("PRAGMA busy_timeout = 2000")
        try:
            cursor.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            cursor.execute(f"PRAGMA busy_timeout = {int(usual)}")


def user_memory_delete(*, user: MemoryUser) -> int:
    """Delete all the memory of a user (every space, as space_delete, and the user's API tokens), and the
    user. Returns the number of spaces deleted. Nothing of other users is touched. Safe to repeat."""
    spaces = list(MemorySpace.objects.filter(user=user))
    for space in spaces:
        space_delete(space=space)
    MemoryUser.objects.filter(pk=user.pk).delete()
    return len(spaces)
