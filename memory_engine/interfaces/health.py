"""`/healthz`: whether this process can do its work. For load balancers and compose health checks: cheap,
no sign-in, and it tells nothing about anyone's memory.

It checks the database (a round trip), the broker (a connection), this process's index folder (a file
written and removed) and its requests (none has worked longer than WEB_STUCK_SECONDS: admission.py), and
answers 200 when all pass, else 503, as JSON naming each check. It is answered
before the other middleware, so the health check of a host behind a TLS proxy (no Host header of the
site, no HTTPS) is neither refused nor redirected.
"""

import tempfile
from pathlib import Path

from django.conf import settings
from django.db import connection
from django.http import JsonResponse
from kombu import Connection

from memory_engine.admission import stuck_for
from memory_engine.config import memory_settings

PATH = "/healthz"


def _database() -> None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()


def _broker() -> None:
    with Connection(settings.CELERY_BROKER_URL, connect_timeout=2) as broker:
        broker.ensure_connection(max_retries=1, timeout=2)


def _index_dir() -> None:
    folder = Path(memory_settings().index_dir)
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=folder, prefix=".healthz-"):
        pass


class StuckRequest(Exception):
    pass


def _requests() -> None:
    if stuck := stuck_for():
        raise StuckRequest(f"a request has worked for {stuck:.0f} s")


CHECKS = {"database": _database, "broker": _broker, "index_dir": _index_dir, "requests": _requests}


def health_report() -> tuple[bool, dict[str, str]]:
    """Each check's outcome ("ok", or the kind of error), and whether all passed."""
    outcome = {}
    for name, check in CHECKS.items():
        try:
            check()
            outcome[name] = "ok"
        except Exception as exc:  # any failure is a failed check; the type says which kind
            outcome[name] = f"failing ({type(exc).__name__})"
    return all(v == "ok" for v in outcome.values()), outcome


class HealthCheckMiddleware:
    def __init__(self, get_response) -> None:
        self.get_response = get_response

    def __call__(self, request):
        if request.path != PATH:
            return self.get_response(request)
        healthy, checks = health_report()
        return JsonResponse(
            {"status": "ok" if healthy else "failing", "checks": checks}, status=200 if healthy else 503
        )
