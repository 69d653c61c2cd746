"""The errors every door maps, defined once below every layer: bad input (MemoryInputError and its kinds,
each leaving the database unchanged), the LLM boundary's (LLMError and its kinds, ReplyStopped), and the
store's that a door reports (SecretsUnavailable, EmbeddingModelMismatch). A door imports them from here,
never through a service."""


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


class UserHeldByAccount(MemoryInputError):
    """An operator door (a command, the library, MCP over stdio) asked for a memory user that a
    playground account holds. It is never adopted silently: an operator who means to take it over runs
    `manage.py api_token create ID --take-over`, which is recorded (models.OwnerChange)."""

    def __init__(self, user_id: str, account: str) -> None:
        super().__init__(
            f"user id {user_id!r} belongs to the playground account {account!r}; an operator who means to "
            f"take it over runs `manage.py api_token create {user_id} --take-over`"
        )
        self.user_id = user_id
        self.account = account


class UserIdTaken(MemoryInputError):
    """An account asked to create a memory user it already has (or that an account it replaced has)."""

    def __init__(self, user_id: str) -> None:
        super().__init__(f"user id {user_id!r} is taken")
        self.user_id = user_id


class InvalidTurn(MemoryInputError):
    """A turn that is empty, too long, or not valid text."""


class InputTooLarge(MemoryInputError):
    """Input over one of the size limits (413 over HTTP)."""


class TurnTooLong(InvalidTurn, InputTooLarge):
    """A turn or query longer than MEMORYOS_MAX_TURN_CHARS."""


class InvalidEntry(MemoryInputError):
    """A long-term entry's value or key that cannot be stored."""


class UnknownEntry(InvalidEntry, LookupError):
    """No entry (or version) of that id in this memory."""


class EntryNotActive(InvalidEntry):
    """An edit of an entry that is no longer active (deleted, superseded or evicted, perhaps a moment
    ago by someone else): a conflict with its state, 409 over HTTP. Revert it from its history first."""


class EntryErased(EntryNotActive):
    """A change to an entry erased a moment ago, by another request (409 over HTTP, as for an entry no
    longer active)."""


class EntryHeldByAnother(InvalidEntry):
    """A revert of a profile entry whose attribute another active entry now holds: a conflict with the
    memory's state, 409 over HTTP. Edit that entry instead."""


class InvalidParameter(MemoryInputError):
    """A parameter out of its range or not one the request may give (a space's parameter, a status to list
    by, a sentence the turn does not hold); `field` names it, `reason` says why."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field} {reason}")
        self.field = field
        self.reason = reason


class TooMuchBulkWork(MemoryInputError):
    """An import or a replay more than an account may have unfinished (MEMORYOS_MAX_UNFINISHED_IMPORTS;
    429 over HTTP)."""


class MachineTooBusy(MemoryInputError):
    """Work the machine could not give its time to within its deadline (a file's check, past
    MEMORYOS_UPLOAD_WAIT_SECONDS): the same request later may pass (503 over HTTP)."""


class JobEnded(MemoryInputError):
    """An action on a job that has ended (a cancel of a finished import): 409 over HTTP."""


class ExperimentConflict(MemoryInputError):
    """A fork the space's state refuses: the name is taken, or the space has as many experiments as it
    may (409 over HTTP)."""


# --- The LLM boundary (memory_engine/llm) ---------------------------------------------------------


class LLMError(Exception):
    """The model gave no usable answer. Base class; also raised as-is for a request the provider
    refused (bad request, authentication, unknown model): asking again will not help."""

    transient = False


class LLMUnavailable(LLMError):
    """Transport failure, timeout, rate limit or server error, still failing after bounded retries.
    Worth retrying later (e.g. a Celery retry with backoff)."""

    transient = True


class LLMInvalidAnswer(LLMError):
    """The model answered, but the answer was not usable (not JSON, not matching the schema, empty,
    an error string, a malformed response) after bounded retries."""

    transient = False


class ReplyStopped(Exception):
    """The caller stopped a streamed chat answer before it was complete (`LLM.chat`'s `on_text` asked it
    to): there is no answer, and nothing may be made of the part written."""


class LLMDegenerateAnswer(LLMInvalidAnswer):
    """The model's chat answer degenerated (a loop, the prompt echoed, the user's role taken) twice:
    once with the caller's settings and once more with stronger ones. `problem` says how."""

    def __init__(self, message: str, *, problem: str, prompt_tokens: int = 0, completion_tokens: int = 0) -> None:
        super().__init__(message)
        self.problem = problem
        # What the two rejected answers cost, as the provider reported it.
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens


# --- The store's, that a door reports ---------------------------------------------------------------


class SecretsUnavailable(MemoryInputError):
    """No key to encrypt with (MEMORYOS_SECRETS_KEY unset in production), or a stored secret that the
    configured keys do not open (the key was changed without keeping the old one)."""


class EmbeddingModelMismatch(RuntimeError):
    """The space's vectors were made by another model than the one configured now."""
