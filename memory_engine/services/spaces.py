"""Memory users, assistants and their spaces: made, found, their parameters set, deleted; what they hold."""

from memory_engine.beyond.export import space_counts, space_sizes
from memory_engine.store.spaces import (
    assistant_create,
    holder_key,
    owned_user_create,
    space_delete,
    space_get,
    space_parameters_set,
    user_create,
    user_memory_delete,
    user_take_over,
)

__all__ = [
    "assistant_create",
    "holder_key",
    "owned_user_create",
    "space_counts",
    "space_delete",
    "space_get",
    "space_parameters_set",
    "space_sizes",
    "user_create",
    "user_memory_delete",
    "user_take_over",
]
