"""A memory in and out: conversations imported turn by turn (a transcript, a LoCoMo sample), a user's or a
space's export, and an export restored (checked at once, done by a worker)."""

from memory_engine.beyond.export import space_export, user_export
from memory_engine.beyond.restore import space_restore
from memory_engine.jobs.dispatch import import_start, restore_start
from memory_engine.jobs.imports import import_activity, locomo_sample_ids, locomo_turns, transcript_turns

__all__ = [
    "import_activity",
    "import_start",
    "locomo_sample_ids",
    "locomo_turns",
    "restore_start",
    "space_export",
    "space_restore",
    "transcript_turns",
    "user_export",
]
