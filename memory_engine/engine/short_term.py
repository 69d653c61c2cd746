"""Short-term memory: the last N QA pages of a space, always placed in the prompt.

Storing a turn is the request path: one locked counter update and one insert, no model, no LLM.
"""

from datetime import datetime

from django.db.models import QuerySet
from django.utils import timezone

from memory_engine import inputs
from memory_engine.errors import InvalidTurn
from memory_engine.models import MemorySpace, Page
from memory_engine.store.writes import space_write


def page_store(
    *,
    space: MemorySpace,
    user_input: str,
    agent_response: str,
    timestamp: datetime | str | None = None,
    meta: dict | None = None,
    reply_withheld: bool = False,
    reply_source: str = Page.ReplySource.GIVEN,
) -> Page:
    """Append a turn to the space's short-term memory and return its page.

    With `reply_withheld`, the assistant's reply was degenerate: the page keeps the user's words only
    (an `agent_response` is refused) and is marked, so the reply never becomes memory. `reply_source` says
    who wrote the reply (Page.ReplySource); a weak model's reply is kept but is not memory (Page.text).
    Every input is checked by `inputs` (text, timestamp, meta); a bad one raises MemoryInputError and
    nothing is stored. Not idempotent: each call stores a new page; pages are numbered 1, 2, 3... per
    space in the order their transactions commit.
    """
    user_input, agent_response = inputs.turn_texts(user_input, agent_response)
    if reply_withheld and agent_response:
        raise InvalidTurn("a turn whose reply is withheld keeps no agent_response")
    if reply_source not in Page.ReplySource.values:
        raise InvalidTurn(f"reply_source must be one of {', '.join(Page.ReplySource.values)}")
    meta = inputs.meta(meta)
    timestamp = inputs.timestamp(timestamp) or timezone.now()
    with space_write(space.pk) as write:
        locked = write.space
        locked.last_seq += 1
        MemorySpace.objects.filter(pk=space.pk).update(last_seq=locked.last_seq)
        page = Page.objects.create(
            space=space,
            seq=locked.last_seq,
            user_input=user_input,
            agent_response=agent_response,
            timestamp=timestamp,
            meta=meta,
            reply_withheld=reply_withheld,
            reply_source=reply_source,
        )
    space.last_seq = locked.last_seq
    return page


def short_term_pages(space: MemorySpace) -> QuerySet[Page]:
    """The pages in short-term memory, oldest first."""
    return Page.objects.filter(space=space, tier=Page.Tier.SHORT).order_by("seq")


def overflow_pages(space: MemorySpace) -> list[Page]:
    """The oldest short-term pages beyond the space's capacity: those due to move to mid-term."""
    pages = short_term_pages(space)
    excess = pages.count() - space.stm_capacity
    return list(pages[:excess]) if excess > 0 else []
