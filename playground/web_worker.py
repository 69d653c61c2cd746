"""gunicorn's worker for the web role (`scripts/serve web`): uvicorn's, taking at most WEB_MAX_CONNECTIONS
connections and requests at once (one more is answered 503 at once, before Django sees it), so that no
number of clients can make a web process hold more sockets and tasks than that."""

import os

from uvicorn_worker import UvicornWorker


class CappedUvicornWorker(UvicornWorker):
    CONFIG_KWARGS = {
        **UvicornWorker.CONFIG_KWARGS,
        "limit_concurrency": int(os.environ.get("WEB_MAX_CONNECTIONS") or 1000),
    }
