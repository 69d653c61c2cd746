"""Errors the engine raises for bad input. Each leaves the database unchanged."""


class MemoryInputError(ValueError):
    """The request cannot be carried out as given; nothing was changed."""


class UnknownUser(MemoryInputError):
    def __init__(self, user_id: str) -> None:
        super().__init__(f"unknown user {user_id!r}: create it first")
        self.user_id = user_id


class UnknownAssistant(MemoryInputError):
    def __init__(self, assistant_id: str) -> None:
        super().__init__(f"unknown assistant {assistant_id!r}: create it first")
        self.assistant_id = assistant_id


class InvalidTurn(MemoryInputError):
    """A turn that is empty, too long, or not valid text."""


class InputTooLarge(MemoryInputError):
    """Input over one of the size limits (413 over HTTP)."""


class TurnTooLong(InvalidTurn, InputTooLarge):
    """A turn or query longer than MEMORYOS_MAX_TURN_CHARS."""


class InvalidEntry(MemoryInputError):
    """A long-term entry's value or key that cannot be stored."""


class EntryNotActive(InvalidEntry):
    """An edit of an entry that is no longer active (deleted, superseded or evicted, perhaps a moment
    ago by someone else): a conflict with its state, 409 over HTTP. Revert it from its history first."""


class InvalidParameter(MemoryInputError):
    """A space parameter out of its range; `field` names it, `reason` says why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field} {reason}")
        self.field = field
        self.reason = reason
