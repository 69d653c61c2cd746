"""A chat turn: retrieve from the space's memory, reply (the LLM, or the person's own words with a weak
model), store the exchange; and what a turn would retrieve and send, storing nothing (the inspector)."""

from django.db.models import QuerySet

from memory_engine import inputs
from memory_engine.beyond.inspector import Inspection, inspect
from memory_engine.engine.generator import Response
from memory_engine.engine.retriever import Retrieval, retrieve
from memory_engine.jobs.conversation import reply, turn_add
from memory_engine.llm import ReplyStopped
from memory_engine.models import MemorySpace, Page

__all__ = ["Inspection", "ReplyStopped", "Response", "Retrieval", "inspect", "reply", "retrieve", "turn_add", "turns"]


def turns(space: MemorySpace, *, tier: object = None, newest_first: bool = False) -> QuerySet:
    """The space's stored turns (in one tier, when given), in the order they were said or newest first,
    with the record of the reply each stored."""
    wanted = inputs.one_of(tier, "tier", Page.Tier.values)
    found = Page.objects.filter(space=space).defer("embedding").select_related("reply_record")
    found = found if wanted is None else found.filter(tier=wanted)
    return found.order_by("-seq" if newest_first else "seq")
