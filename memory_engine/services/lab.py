"""The memory lab: a space forked into a shadow space with other parameters and its turns replayed (or an
export restored there), and the two compared on probe questions (done by a worker)."""

from memory_engine.beyond.comparison import Probe, compare, heat_by_turn, side_summary
from memory_engine.jobs.dispatch import comparison_start
from memory_engine.jobs.experiments import experiment_create, experiment_delete, locomo_probes

__all__ = [
    "Probe",
    "compare",
    "comparison_start",
    "experiment_create",
    "experiment_delete",
    "heat_by_turn",
    "locomo_probes",
    "side_summary",
]
