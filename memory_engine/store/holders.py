"""What the store keeps of memory spaces beside their rows: who holds a space (a filter, and a key, for
the per-account caps), and a deletion's words erased from SQLite's files (the space actions themselves
are services/spaces.py's)."""

from django.db import connection
from django.db.models import Q

from memory_engine.models import MemorySpace


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
