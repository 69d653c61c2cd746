"""Short-term memory: the last N QA pages of a space, always placed in the prompt.

Storing a turn is the request path: one locked counter update and one insert, no model, no LLM.
"""

from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from memory_engine.errors import InvalidTurn, TurnTooLong
from memory_engine.models import MemorySpace, Page
from memory_engine.spaces import lock_space


def clean_turn_text(text: object, field: str) -> str:
    """The text as stored, or InvalidTurn saying what is wrong with it.

    HTML is ordinary text here: it is stored as typed and escaped wherever it is shown.
    """
    if text is None:
        return ""
    if not isinstance(text, str):
        raise InvalidTurn(f"{field} must be text, not {type(text).__name__}")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidTurn(f"{field} is not valid unicode (it holds a lone surrogate)") from None
    if "\x00" in text:
        raise InvalidTurn(f"{field} contains a NUL character")
    limit = settings.MEMORYOS["MAX_TURN_CHARS"]
    if len(text) > limit:
        raise TurnTooLong(f"{field} is {len(text)} characters long; the limit is {limit}")
    return text


def page_store(
    *,
    space: MemorySpace,
    user_input: str,
    agent_response: str,
    timestamp: datetime | None = None,
    meta: dict | None = None,
    reply_withheld: bool = False,
) -> Page:
    """Append a turn to the space's short-term memory and return its page.

    With `reply_withheld`, the assistant's reply was degenerate: the page keeps the user's words only
    (an `agent_response` is refused) and is marked, so the reply never becomes memory.
    Raises InvalidTurn (nothing stored) for an empty turn, text over MEMORYOS_MAX_TURN_CHARS, broken
    unicode or a NUL. Not idempotent: each call stores a new page; pages are numbered 1, 2, 3... per
    space in the order their transactions commit.
    """
    user_input = clean_turn_text(user_input, "user_input")
    agent_response = clean_turn_text(agent_response, "agent_response")
    if not user_input.strip() and not agent_response.strip():
        raise InvalidTurn("the turn is empty: give a user_input, an agent_response or both")
    if reply_withheld and agent_response:
        raise InvalidTurn("a turn whose reply is withheld keeps no agent_response")
    if meta is not None and not isinstance(meta, dict):
        raise InvalidTurn("meta must be a JSON object")
    if meta and _holds_nul(meta):
        # PostgreSQL's jsonb cannot store U+0000; refused here for every database alike.
        raise InvalidTurn("meta contains a NUL character")
    if timestamp is None:
        timestamp = timezone.now()
    elif timezone.is_naive(timestamp):
        raise InvalidTurn("timestamp must carry a timezone")
    with transaction.atomic():
        locked = lock_space(space.pk)
        locked.last_seq += 1
        MemorySpace.objects.filter(pk=space.pk).update(last_seq=locked.last_seq)
        page = Page.objects.create(
            space=space,
            seq=locked.last_seq,
            user_input=user_input,
            agent_response=agent_response,
            timestamp=timestamp,
            meta=meta or {},
            reply_withheld=reply_withheld,
        )
    space.last_seq = locked.last_seq
    return page


def _holds_nul(value: object) -> bool:
    """Whether a NUL character is anywhere in a JSON value's keys or strings (walked without recursion,
    so a deeply nested value cannot exhaust the stack)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def short_term_pages(space: MemorySpace) -> QuerySet[Page]:
    """The pages in short-term memory, oldest first."""
    return Page.objects.filter(space=space, tier=Page.Tier.SHORT).order_by("seq")


def overflow_pages(space: MemorySpace) -> list[Page]:
    """The oldest short-term pages beyond the space's capacity: those due to move to mid-term."""
    pages = short_term_pages(space)
    excess = pages.count() - space.stm_capacity
    return list(pages[:excess]) if excess > 0 else []
