"""Consolidation: short-term pages moved into mid-term sessions, hot sessions promoted to long-term
memory, in a worker after a turn (or here, inline); its runs, a retry asked for."""

from memory_engine.engine.updater import RunCounts
from memory_engine.jobs.consolidation import ConsolidationRequest, has_pending_work, run_consolidation
from memory_engine.jobs.dispatch import request_retry

__all__ = [
    "ConsolidationRequest",
    "RunCounts",
    "has_pending_work",
    "request_retry",
    "run_consolidation",
]
