"""What a long-running server process does in the background: removing the index folders of memory
spaces deleted through another process (store/index.py, `prune_deleted_spaces`), at its start and every
MEMORYOS_INDEX_PRUNE_SECONDS (workers do it in their periodic sweep, jobs/tasks.py); and, in a web process
under gunicorn, asking to be replaced when a request has worked past WEB_STUCK_SECONDS (admission.py): its
thread cannot be stopped, and it holds a place of the process for ever (gunicorn's own timeout watches the
event loop, which stays free). Started by the ASGI entry point (playground/asgi.py) and the MCP server; not
by WSGI's, which the test server imports too.
"""

import logging
import os
import signal
import threading

from django.db import close_old_connections, connections

from memory_engine.admission import stuck_for
from memory_engine.config import memory_settings
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


def under_gunicorn() -> bool:
    return "gunicorn" in os.environ.get("SERVER_SOFTWARE", "")


def replace_if_stuck() -> bool:
    """Under gunicorn, have this process replaced when a request has worked past WEB_STUCK_SECONDS: SIGHUP to
    the master, which starts new worker processes first and then stops the old ones gracefully (their other
    requests finish). A SIGTERM to this process alone left the port with nothing accepting until it ended,
    with one web process for the whole graceful timeout. Returns whether it asked."""
    stuck = stuck_for()
    if not stuck or not under_gunicorn():
        return False
    logger.error("a request has worked for %.0f s: asking gunicorn to replace this process", stuck)
    os.kill(os.getppid(), signal.SIGHUP)
    return True


def start() -> threading.Thread | None:
    """Prune now and every MEMORYOS_INDEX_PRUNE_SECONDS in a daemon thread (0: never), looking for a stuck
    request at each."""
    seconds = memory_settings().index_prune_seconds
    if seconds <= 0:
        return None
    stop = threading.Event()

    def run() -> None:
        close_old_connections()
        while True:
            prune_once()
            if replace_if_stuck():
                return
            if stop.wait(seconds):
                return

    thread = threading.Thread(target=run, name="memoryos-housekeeping", daemon=True)
    thread.start()
    return thread
