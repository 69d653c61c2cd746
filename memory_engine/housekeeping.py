"""What a long-running server process does in the background: removing the index folders of memory
spaces deleted through another process (store/index.py, `prune_deleted_spaces`), at its start and every
MEMORYOS_INDEX_PRUNE_SECONDS. Workers do it in their periodic sweep (jobs/tasks.py). Started by the ASGI
entry point (playground/asgi.py) and the MCP server; not by WSGI's, which the test server imports too.
"""

import logging
import threading

from django.conf import settings
from django.db import close_old_connections, connections

from memory_engine.store import index

logger = logging.getLogger(__name__)


def prune_once() -> int:
    try:
        removed = index.prune_deleted_spaces()
    except Exception:  # a database not there yet (before migrate) or gone for a moment: next time
        logger.warning("index folders of deleted spaces were not pruned", exc_info=True)
        return 0
    finally:
        connections.close_all()  # this thread's; a pool's goes back
    if removed:
        logger.info("removed the index folders of %d deleted space(s)", removed)
    return removed


def start() -> threading.Thread | None:
    """Prune now and every MEMORYOS_INDEX_PRUNE_SECONDS in a daemon thread (0: never)."""
    seconds = settings.MEMORYOS["INDEX_PRUNE_SECONDS"]
    if seconds <= 0:
        return None
    stop = threading.Event()

    def run() -> None:
        close_old_connections()
        while True:
            prune_once()
            if stop.wait(seconds):
                return

    thread = threading.Thread(target=run, name="memoryos-housekeeping", daemon=True)
    thread.start()
    return thread
