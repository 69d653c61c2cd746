"""Short-term memory: the last N QA pages of a space, always placed in the prompt.

Storing a turn is the request path: one locked counter update and one insert, no model, no LLM. A history
(an import, a replay) stores its turns a chunk at a time: one lock, one update, one insert for the chunk.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet
from django.utils import timezone

from memory_engine import inputs
from memory_engine.errors import InvalidTurn, MemoryInputError
from memory_engine.models import MemorySpace, Page
from memory_engine.store.writes import space_write


@dataclass(frozen=True)
class TurnIn:
    """One turn to store: the user's words, the reply, when it was said, meta data kept with it, whether
    the reply was withheld (its words are not kept) and who wrote it (Page.ReplySource)."""

    user_input: str
    agent_response: str
    timestamp: datetime | str | None = None
    meta: dict | None = None
    reply_withheld: bool = False
    reply_source: str = Page.ReplySource.GIVEN


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
    """Append a turn to the space's short-term memory and return its page (pages_store, for one turn).

    With `reply_withheld`, the assistant's reply was degenerate: the page keeps the user's words only
    (an `agent_response` is refused) and is marked, so the reply never becomes memory. `reply_source` says
    who wrote the reply (Page.ReplySource); a weak model's reply is kept but is not memory (Page.text).
    """
    turn = TurnIn(user_input, agent_response, timestamp, meta, reply_withheld, reply_source)
    return pages_store(space=space, turns=[turn])[0]


def _page_of(space: MemorySpace, turn: TurnIn, number: int | None) -> Page:
    """The unsaved page of a turn, every input checked by `inputs` (text, timestamp, meta)."""
    try:
        user_input, agent_response = inputs.turn_texts(turn.user_input, turn.agent_response)
        if turn.reply_withheld and agent_response:
            raise InvalidTurn("a turn whose reply is withheld keeps no agent_response")
        if turn.reply_source not in Page.ReplySource.values:
            raise InvalidTurn(f"reply_source must be one of {', '.join(Page.ReplySource.values)}")
        meta = inputs.meta(turn.meta)
        timestamp = inputs.timestamp(turn.timestamp) or timezone.now()
    except MemoryInputError as exc:
        if number is None:
            raise
        raise type(exc)(f"turn {number}: {exc}") from None
    return Page(
        space=space,
        user_input=user_input,
        agent_response=agent_response,
        timestamp=timestamp,
        meta=meta,
        reply_withheld=turn.reply_withheld,
        reply_source=turn.reply_source,
    )


def pages_store(*, space: MemorySpace, turns: list[TurnIn]) -> list[Page]:
    """Append the turns, in order, to the space's short-term memory in one transaction; return their pages.

    Every input is checked first (a bad one raises MemoryInputError naming the turn, when there are
    several) and then nothing is stored. Not idempotent: each call stores new pages; pages are numbered
    1, 2, 3... per space in the order their transactions commit.
    """
    pages = [_page_of(space, turn, number if len(turns) > 1 else None) for number, turn in enumerate(turns, 1)]
    if not pages:
        return []
    with space_write(space.pk) as write:
        first = write.space.last_seq + 1
        for seq, page in enumerate(pages, start=first):
            page.seq = seq
        MemorySpace.objects.filter(pk=space.pk).update(last_seq=pages[-1].seq)
        if len(pages) == 1:
            pages[0].save(force_insert=True)
        else:
            Page.objects.bulk_create(pages)
    space.last_seq = pages[-1].seq
    return pages


def short_term_pages(space: MemorySpace) -> QuerySet[Page]:
    """The pages in short-term memory, oldest first."""
    return Page.objects.filter(space=space, tier=Page.Tier.SHORT).order_by("seq")


def overflow_pages(space: MemorySpace, *, keep: int | None = None) -> list[Page]:
    """The oldest short-term pages beyond the space's capacity (or beyond `keep`): those due to move to
    mid-term."""
    pages = short_term_pages(space)
    excess = pages.count() - (space.stm_capacity if keep is None else keep)
    return list(pages[:excess]) if excess > 0 else []
