"""A memory in and out: conversations imported turn by turn (a transcript, a LoCoMo sample, or those chosen
from a file brought from another assistant or memory system), a user's or a space's export, and an
export restored (checked at once, done by a worker)."""

from memory_engine.beyond.export import space_export, user_export
from memory_engine.beyond.restore import space_restore
from memory_engine.formats import LABELS as FORMAT_LABELS
from memory_engine.jobs.dispatch import import_start, restore_start, upload_import_start
from memory_engine.jobs.imports import import_activity, locomo_sample_ids, locomo_turns, transcript_turns
from memory_engine.jobs.uploads import upload_delete, upload_room_check, upload_save

__all__ = [
    "FORMAT_LABELS",
    "import_activity",
    "import_start",
    "locomo_sample_ids",
    "locomo_turns",
    "restore_start",
    "space_export",
    "space_restore",
    "transcript_turns",
    "upload_delete",
    "upload_import_start",
    "upload_room_check",
    "upload_save",
    "user_export",
]
