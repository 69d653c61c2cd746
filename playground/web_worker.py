"""gunicorn's worker for the web role (`scripts/serve web`): uvicorn's, with its HTTP protocol bounded
(memory_engine/interfaces/connections.py): a connection that sends no request, or its headers slowly, is
closed; idle connections make room for new ones past WEB_MAX_CONNECTIONS; and only requests in progress
count against WEB_MAX_REQUESTS (one more is answered 503 at once, before Django sees it)."""

from uvicorn_worker import UvicornWorker

from memory_engine.interfaces.connections import GuardedProtocol, allow_connections


class CappedUvicornWorker(UvicornWorker):
    CONFIG_KWARGS = {**UvicornWorker.CONFIG_KWARGS, "http": GuardedProtocol, "limit_concurrency": None}

    def run(self) -> None:
        allow_connections()  # the application (and so its settings) is loaded by now
        super().run()
