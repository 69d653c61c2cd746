"""What tells an open page that a space's memory changed: the announcement's channel, and the revision
that says which parts changed (store/changes.py)."""

from memory_engine.store.changes import (
    CHANNEL_PREFIX,
    changed,
    channel,
    events_url,
    revision,
    revision_parts,
    revision_text,
)

__all__ = ["CHANNEL_PREFIX", "changed", "channel", "events_url", "revision", "revision_parts", "revision_text"]
