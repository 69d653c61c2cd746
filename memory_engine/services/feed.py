"""What tells an open page that a space's memory changed: the announcement's channel, and the revision
that says which parts changed, and hearing the announcements (store/changes.py)."""

from memory_engine.store.changes import (
    CHANNEL_PREFIX,
    Listener,
    Subscription,
    changed,
    channel,
    events_url,
    listener,
    revision,
    revision_parts,
    revision_text,
    subscribe,
)

__all__ = [
    "CHANNEL_PREFIX",
    "Listener",
    "Subscription",
    "changed",
    "channel",
    "events_url",
    "listener",
    "revision",
    "revision_parts",
    "revision_text",
    "subscribe",
]
