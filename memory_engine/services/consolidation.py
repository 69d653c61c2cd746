"""Consolidation: short-term pages moved into mid-term sessions, hot sessions promoted to long-term
memory, in a worker after a turn (or here, inline); its runs, a retry asked for, the heat timeline."""

from memory_engine.engine.heat_timeline import Point, heat_timeline_svg
from memory_engine.engine.updater import RunCounts
from memory_engine.jobs.consolidation import ConsolidationRequest, has_pending_work, run_consolidation
from memory_engine.jobs.dispatch import request_retry

__all__ = [
    "ConsolidationRequest",
    "Point",
    "RunCounts",
    "has_pending_work",
    "heat_timeline_svg",
    "request_retry",
    "run_consolidation",
]
