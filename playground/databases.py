"""A database URL (`DATABASE_URL`, the benchmarks' own databases) as a Django DATABASES entry: dj-database-url
reads the URL (its query string becomes the connection's OPTIONS, e.g. `?sslmode=require`), and this adds what
the project runs each database with."""

from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
SQLITE = "django.db.backends.sqlite3"
POSTGRESQL = "django.db.backends.postgresql"


def database_from_url(url: str, *, sqlite_synchronous: str = "normal", pool_size: int = 10) -> dict:
    """Turn `sqlite:///path` (relative to the project) or `postgres://user:pass@host:port/name` into a
    DATABASES entry; a PostgreSQL one keeps a pool of at most `pool_size` connections in each process."""
    unsupported = ImproperlyConfigured(
        f"DATABASE_URL scheme {url.partition(':')[0]!r} is not supported: sqlite or postgres"
    )
    try:
        database = dict(dj_database_url.parse(url))
    except dj_database_url.UnknownSchemeError:  # or no URL at all
        raise unsupported from None
    except ValueError as error:  # a URL it cannot read (a port that is no number, ...)
        raise ImproperlyConfigured(f"DATABASE_URL cannot be read: {error}") from None
    if database["ENGINE"] == SQLITE:
        name = Path(database["NAME"])
        database["NAME"] = name if name.is_absolute() else BASE_DIR / name
        database["OPTIONS"] = {
            # IMMEDIATE makes a writing transaction take the lock at BEGIN, so concurrent
            # writers queue for `timeout` seconds instead of failing with "database is locked".
            "transaction_mode": "IMMEDIATE",
            "timeout": 30,
            # Write-ahead log: a commit appends to the log instead of going through a rollback
            # journal (3-4 fsyncs, ~15 ms a commit on these disks), and readers never block the
            # writer. With synchronous=normal the log is fsynced at checkpoints, not at each commit:
            # a power cut may lose the last commits (never corrupt the file); a crashed process
            # loses nothing. SQLITE_SYNCHRONOUS=full fsyncs every commit.
            # secure_delete: what a deletion frees is overwritten with zeros, so deleted memory leaves no
            # words in the file's free pages (store/spaces.erase_deleted empties the log after one).
            "init_command": (
                f"PRAGMA journal_mode=WAL; PRAGMA synchronous={sqlite_synchronous.upper()}; PRAGMA secure_delete=ON"
            ),
            **database.get("OPTIONS", {}),
        }
        database["TEST"] = {"NAME": BASE_DIR / "var" / "test.sqlite3"}
        return database
    if database["ENGINE"] == POSTGRESQL:
        # A pool per process, not persistent connections: under ASGI each request runs in a thread of
        # its own, and a connection kept per thread is never reused (the web server ran PostgreSQL
        # out of connections under load). Django returns the connection to the pool after each request.
        database["CONN_MAX_AGE"] = 0
        database["PORT"] = str(database.get("PORT") or "")
        database["OPTIONS"] = {
            "pool": {"min_size": 1, "max_size": pool_size, "timeout": 30},
            **database.get("OPTIONS", {}),
        }
        return database
    raise unsupported
