"""A retrieval's reads and its hit counts, in plain SQL: the statements on the request path.

Why not the ORM here: a retrieval reads four sets of rows (the short-term pages, the sessions and pages its
searches found, the knowledge with the turns each entry came from) and counts its hits in four statements,
and Django building each query and its model instances was most of a retrieval's time once its query was
embedded. Fetching 50 pages by id at 10k pages took 3.1 ms through the ORM against 0.6 ms for the same SQL
on SQLite (PostgreSQL: 4.3 against 1.9); counting a retrieval's hits took 5.0 ms through the ORM against
2.7 ms here on SQLite (PostgreSQL: 10.9 against 6.1; 2026-12-02, docs/benchmarks.md "Where a retrieval's
time goes"). So each read's SQL is made once from the models' own tables and columns, its values are
converted by the database backend's and the fields' own converters (what the ORM does with them: a datetime
stored as text on SQLite, JSON), values written are adapted by the backend's own adapters, and each row is a
small record with the attributes the retriever reads. Everything else goes through the ORM.
"""

from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from django.db import connection
from django.db.models import Model

from memory_engine.models import HeatEvent, LongTermEntry, MidTermSession, Page


@dataclass(frozen=True, slots=True)
class PageRow:
    """A page as a retrieval reads it (PAGE_FIELDS): what `Page` says of its words, without the rest."""

    id: int
    space_id: int
    seq: int
    user_input: str
    agent_response: str
    timestamp: datetime
    tier: str
    session_id: int | None
    thread_summary: str
    reply_withheld: bool
    reply_source: str

    @property
    def pk(self) -> int:
        return self.id

    # Page's own rules for what of a page is memory, read off these fields.
    memory_reply = Page.memory_reply
    text = Page.text


@dataclass(frozen=True, slots=True)
class SessionRow:
    id: int
    summary: str
    keywords: list[str]
    status: str
    heat: float

    @property
    def pk(self) -> int:
        return self.id


@dataclass(frozen=True, slots=True)
class EntryRow:
    id: int
    space_id: int
    kind: str
    key: str
    value: str
    status: str
    updated_at: datetime
    sources: tuple[tuple[int, int], ...] = ()  # (page id, seq) of the turns it came from, in conversation order

    @property
    def pk(self) -> int:
        return self.id


PAGE_FIELDS = tuple(PageRow.__dataclass_fields__)
SESSION_FIELDS = tuple(SessionRow.__dataclass_fields__)
ENTRY_FIELDS = tuple(name for name in EntryRow.__dataclass_fields__ if name != "sources")


@cache
def _select(vendor: str, model: type[Model], fields: tuple[str, ...]) -> tuple[str, list]:
    """The columns of `fields` of `model`, each named with its table, as SQL, and each column's converters
    (the backend's, then the field's), as the ORM's compiler would apply them. Made once per process."""
    meta, table = model._meta, _table(model)
    columns, converters = [], []
    for name in fields:
        field = meta.get_field(name)
        column = field.get_col(meta.db_table)
        columns.append(f"{table}.{connection.ops.quote_name(field.column)}")
        converters.append((column, connection.ops.get_db_converters(column) + field.get_db_converters(connection)))
    return ", ".join(columns), converters


@contextmanager
def _cursor():
    """A cursor; on PostgreSQL, one that reads timestamps with psycopg's own loader (in C). Django's is a
    Python subclass of it that sets the connection's time zone on each value, which that loader gives
    already (UTC): the same values, and 50 pages took 0.8 ms less."""
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.cursor.adapters.register_loader("timestamptz", _c_timestamptz_loader())
        yield cursor


@cache
def _c_timestamptz_loader():
    import psycopg
    from psycopg.pq import Format

    return psycopg.adapters.get_loader(psycopg.postgres.types["timestamptz"].oid, Format.TEXT)


def _rows(
    model: type[Model], fields: tuple[str, ...], where: str, params: list, *, joined: tuple[str, str] = ("", "")
) -> list[tuple]:
    """The rows of `model` that `where` selects, `fields` converted as the ORM would; with `joined` (columns,
    joins), each row followed by those columns of the joined tables, as read."""
    columns, converters = _select(connection.vendor, model, fields)
    more, joins = joined
    select = f"SELECT {columns}{', ' + more if more else ''} FROM {_table(model)} {joins}"
    with _cursor() as cursor:
        cursor.execute(f"{select} WHERE {where}", params)
        rows = cursor.fetchall()
    wanted = [(place, column, steps) for place, (column, steps) in enumerate(converters) if steps]
    if not wanted:
        return rows
    out = []
    for row in rows:
        values = list(row)
        for place, column, steps in wanted:
            for convert in steps:
                values[place] = convert(values[place], column, connection)
        out.append(values)
    return out


def _in(column: str, ids: list[int]) -> tuple[str, list]:
    """`column` is one of `ids`, as SQL and its parameters: on PostgreSQL one array (its planning of a list
    of 50 parameters took longer than the query), elsewhere a list."""
    if connection.vendor == "postgresql":
        return f"{column} = ANY(%s)", [list(ids)]
    return f"{column} IN ({', '.join(['%s'] * len(ids))})", list(ids)


def short_term_rows(space_id: int) -> list[PageRow]:
    """The pages in short-term memory, oldest first (short_term.short_term_pages)."""
    rows = _rows(Page, PAGE_FIELDS, "space_id = %s AND tier = %s ORDER BY seq", [space_id, Page.Tier.SHORT])
    return [PageRow(*row) for row in rows]


def page_rows(space_id: int, ids: list[int]) -> dict[int, PageRow]:
    """id -> the page, for those of `ids` that are the space's pages."""
    if not ids:
        return {}
    among, among_params = _in("id", ids)
    rows = _rows(Page, PAGE_FIELDS, f"space_id = %s AND {among}", [space_id, *among_params])
    return {row[0]: PageRow(*row) for row in rows}


def session_rows(space_id: int, ids: list[int]) -> dict[int, SessionRow]:
    """id -> the session, for those of `ids` that are the space's sessions."""
    if not ids:
        return {}
    among, among_params = _in("id", ids)
    rows = _rows(MidTermSession, SESSION_FIELDS, f"space_id = %s AND {among}", [space_id, *among_params])
    return {row[0]: SessionRow(*row) for row in rows}


def entry_rows(space_id: int, ids: list[int], *, with_profile: bool) -> list[EntryRow]:
    """Those of `ids` that are the space's entries (any status), and with `with_profile` the space's active
    profile entries, each with the turns it came from; in one query."""
    table, wheres, params = _table(LongTermEntry), [], []
    if with_profile:
        wheres.append(f"({table}.space_id = %s AND {table}.kind = %s AND {table}.status = %s)")
        params += [space_id, LongTermEntry.Kind.PROFILE, LongTermEntry.Status.ACTIVE]
    if ids:
        among, among_params = _in(f"{table}.id", ids)
        wheres.append(f"({table}.space_id = %s AND {among})")
        params += [space_id, *among_params]
    if not wheres:
        return []
    links = _table(LongTermEntry.source_pages.through)
    joined = (
        "l.page_id, p.seq",
        f"LEFT JOIN {links} l ON l.longtermentry_id = {table}.id LEFT JOIN {_table(Page)} p ON p.id = l.page_id",
    )
    rows = _rows(LongTermEntry, ENTRY_FIELDS, " OR ".join(wheres) + " ORDER BY p.seq, l.page_id", params, joined=joined)
    entries: dict[int, tuple[list, list]] = {}
    for *fields, page_id, seq in rows:
        entry = entries.setdefault(fields[0], (fields, []))
        if page_id is not None:
            entry[1].append((page_id, seq))
    return [EntryRow(*fields, sources=tuple(sources)) for fields, sources in entries.values()]


# --- Hits ------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Visits:
    """A session's counts as a retrieval hit reads and stores them."""

    id: int
    space_id: int
    n_visit: int
    total_visits: int
    l_interaction: int
    last_visit_at: datetime


VISIT_FIELDS = tuple(Visits.__dataclass_fields__)


def visits_locked(space_id: int, ids: list[int]) -> list[Visits]:
    """The counts of those of `ids` that are the space's sessions, in id order, locked until the transaction
    ends (on SQLite the transaction holds the database's write lock already). Call inside a transaction."""
    if not ids:
        return []
    lock = " FOR UPDATE" if connection.features.has_select_for_update else ""
    among, among_params = _in("id", ids)
    where = f"space_id = %s AND {among} ORDER BY id{lock}"
    return [Visits(*row) for row in _rows(MidTermSession, VISIT_FIELDS, where, [space_id, *among_params])]


def visits_store(visited: list[tuple[Visits, float, float]], cause: str, *, turn: int) -> None:
    """Store each session's counts and heat, and a point of its heat timeline made by `turn` (a page seq) at the
    visit's time: `visited` holds the counts after the visit (every last_visit_at the same), the heat and the
    recency. One UPDATE and one INSERT however many sessions."""
    if not visited:
        return
    adapt = connection.ops.adapt_datetimefield_value
    ids = [counts.id for counts, _, _ in visited]
    cases = " ".join(["WHEN %s THEN %s"] * len(visited))
    among, among_params = _in("id", ids)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_table(MidTermSession)} SET n_visit = CASE id {cases} END, total_visits = CASE id {cases} END, "
            f"heat = CASE id {cases} END, last_visit_at = %s WHERE {among}",
            [
                *(value for counts, _, _ in visited for value in (counts.id, counts.n_visit)),
                *(value for counts, _, _ in visited for value in (counts.id, counts.total_visits)),
                *(value for counts, heat, _ in visited for value in (counts.id, heat)),
                adapt(visited[0][0].last_visit_at),
                *among_params,
            ],
        )
        rows = [
            (counts.space_id, counts.id, adapt(counts.last_visit_at), cause, heat, counts.n_visit,
             counts.l_interaction, recency, turn, adapt(counts.last_visit_at))
            for counts, heat, recency in visited
        ]  # fmt: skip
        cursor.execute(
            f"INSERT INTO {_table(HeatEvent)} "
            "(space_id, session_id, at, cause, heat, n_visit, l_interaction, recency, turn, turn_at) "
            f"VALUES {', '.join(['(%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)'] * len(rows))}",
            [value for row in rows for value in row],
        )


def entries_hit(space_id: int, ids: list[int], now: datetime) -> None:
    """One more hit on each of `ids` that is the space's entry, its last hit `now`."""
    if not ids:
        return
    among, among_params = _in("id", ids)
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_table(LongTermEntry)} SET hits = hits + 1, last_hit_at = %s WHERE space_id = %s AND {among}",
            [connection.ops.adapt_datetimefield_value(now), space_id, *among_params],
        )


def _table(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)
