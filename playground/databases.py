"""A database URL (`DATABASE_URL`, the benchmarks' own databases) as a Django DATABASES entry."""

from pathlib import Path
from urllib.parse import unquote, urlparse

from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def database_from_url(url: str, *, sqlite_synchronous: str = "normal", pool_size: int = 10) -> dict:
    """Turn `sqlite:///path` or `postgres://user:pass@host:port/name` into a DATABASES entry; a PostgreSQL
    one keeps a pool of at most `pool_size` connections in each process."""
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        name = unquote(parsed.path[1:]) if parsed.path.startswith("/") else parsed.path
        return {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": BASE_DIR / name if not Path(name).is_absolute() else name,
            "OPTIONS": {
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
            },
            "TEST": {"NAME": BASE_DIR / "var" / "test.sqlite3"},
        }
    if parsed.scheme in ("postgres", "postgresql"):
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": unquote(parsed.path.lstrip("/")),
            "USER": unquote(parsed.username or ""),
            "PASSWORD": unquote(parsed.password or ""),
            "HOST": parsed.hostname or "",
            "PORT": str(parsed.port or ""),
            # A pool per process, not persistent connections: under ASGI each request runs in a thread of
            # its own, and a connection kept per thread is never reused (the web server ran PostgreSQL
            # out of connections under load). Django returns the connection to the pool after each request.
            "CONN_MAX_AGE": 0,
            "OPTIONS": {"pool": {"min_size": 1, "max_size": pool_size, "timeout": 30}},
        }
    raise ImproperlyConfigured(f"DATABASE_URL scheme {parsed.scheme!r} is not supported")
