"""Consolidation: short-term pages moved into mid-term sessions, hot sessions promoted to long-term
memory, in a worker after a turn (or here, inline); its runs, a retry asked for."""

from django.db.models import QuerySet

from memory_engine import inputs
from memory_engine.engine.updater import RunCounts
from memory_engine.jobs.consolidation import ConsolidationRequest, has_pending_work, run_consolidation
from memory_engine.jobs.dispatch import request_retry
from memory_engine.models import ConsolidationRun, MemorySpace

__all__ = [
    "ConsolidationRequest",
    "RunCounts",
    "has_pending_work",
    "request_retry",
    "runs",
    "run_consolidation",
]


def runs(space: MemorySpace, *, status: object = None) -> QuerySet:
    """The space's consolidation runs (of `status`, when given), newest first."""
    wanted = inputs.one_of(status, "status", ConsolidationRun.Status.values)
    found = ConsolidationRun.objects.filter(space=space)
    return (found if wanted is None else found.filter(status=wanted)).order_by("-started_at", "-pk")
