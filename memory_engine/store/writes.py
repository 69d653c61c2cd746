"""The one way a space's memory is written: `space_write`.

Every change to a space's pages, sessions or long-term entries runs inside `with space_write(space_id)
as write:`. That is one transaction holding the space's row lock (so page numbers and vector versions
are handed out in order), and `write.stamp(row)` gives each changed row that an index holds the one new
vector version of this write (claimed on first use), which is how the FAISS and BM25 sidecars learn
what to pick up (store/index.py). A reader that sees version V sees every row written with it.
"""

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection, transaction

from memory_engine.models import MemorySpace
from memory_engine.store.changes import announce
from memory_engine.store.embeddings import check_embedding_model


class SpaceWrite:
    """One change to a space, under its lock. `space` is the locked row, read fresh."""

    def __init__(self, space: MemorySpace) -> None:
        self.space = space
        self._version: int | None = None

    @property
    def version(self) -> int:
        """The vector version of this write: claimed on first use (a write that touches no indexed row
        claims none)."""
        if self._version is None:
            self._version = begin_vector_write(self.space)
        return self._version

    def stamp(self, *rows) -> None:
        """Mark rows (pages, sessions, entries) as changed by this write, for the indexes; the caller
        saves them (with "vector_version" among the fields)."""
        for row in rows:
            row.vector_version = self.version


@contextmanager
def space_write(space_id: int) -> Iterator[SpaceWrite]:
    """A transaction holding the space's row lock; see the module docstring. Raises
    MemorySpace.DoesNotExist when the space is gone."""
    with transaction.atomic():
        yield SpaceWrite(lock_space(space_id))
        announce(space_id)


def lock_space(space_id: int) -> MemorySpace:
    """Lock the space row until the transaction ends. Must be called inside transaction.atomic(); use
    space_write. On SQLite the IMMEDIATE transaction mode already serialises writers, and
    select_for_update is a no-op there.

    The lock is FOR UPDATE, not FOR NO KEY UPDATE, so that it also excludes `hold_space`."""
    return MemorySpace.objects.select_for_update().get(pk=space_id)


def hold_space(space_id: int, *, quick_commit: bool = False) -> None:
    """For a transaction that changes a space's rows outside space_write (retrieval hit counts): wait for
    the space's writer, if any, and keep the next one out until the transaction ends, without excluding
    other holders. Call it first, inside transaction.atomic(). With `quick_commit`, on PostgreSQL the
    transaction commits without waiting for the write-ahead log to reach the disk (a crash may lose it;
    the database stays consistent): said in the same round trip as the lock.

    Why: such a transaction locks sessions and entries, and its heat events' foreign key to the space
    is checked at COMMIT, which takes a KEY SHARE lock on the space row. A writer holds the space first
    and then locks rows. Taken last, the KEY SHARE lock closes a cycle with a writer waiting for one of
    those rows (PostgreSQL aborts one of the two with a deadlock). Taken first, it keeps the writers'
    order: space, then rows. On SQLite writers are serialised anyway, and this is a no-op."""
    announce(space_id)
    if connection.vendor != "postgresql":
        return
    hold = f"SELECT 1 FROM {MemorySpace._meta.db_table} WHERE id = {int(space_id)} FOR KEY SHARE"
    with connection.cursor() as cursor:
        # Two statements in one message: without parameters psycopg sends them as one simple query.
        cursor.execute(f"SET LOCAL synchronous_commit TO OFF; {hold}" if quick_commit else hold)


def begin_vector_write(space: MemorySpace) -> int:
    """Claim the next vector version for a change the indexes must see, and return it (use
    SpaceWrite.version). Refuses to mix vectors of two models, and records the model on a space's first
    vector. Call with the space locked."""
    label = check_embedding_model(space)
    if not space.embedding_model:
        space.embedding_model = label
        MemorySpace.objects.filter(pk=space.pk).update(embedding_model=label)
    return next_vector_version(space)


def next_vector_version(space: MemorySpace) -> int:
    """Bump and return the space's vector version, whatever model made its vectors (a re-embedding).
    Call with the space locked."""
    space.vector_version += 1
    MemorySpace.objects.filter(pk=space.pk).update(vector_version=space.vector_version)
    return space.vector_version


def rows_update(rows: list, fields: list[str]) -> None:
    """Save `fields` of each row (one model's), inside the caller's write: one UPDATE run for every row at
    once (executemany). Django's bulk_update builds a CASE a field with a branch a row; a chunk of a history
    spent more time building those than the database spent on them."""
    if not rows:
        return
    model = type(rows[0])
    columns = [model._meta.get_field(name) for name in fields]
    quote = connection.ops.quote_name
    sets = ", ".join(f"{quote(field.column)} = %s" for field in columns)
    sql = f"UPDATE {quote(model._meta.db_table)} SET {sets} WHERE {quote(model._meta.pk.column)} = %s"
    values = [
        [*(field.get_db_prep_save(getattr(row, field.attname), connection) for field in columns), row.pk]
        for row in rows
    ]
    with connection.cursor() as cursor:
        cursor.executemany(sql, values)
