"""A chat turn: retrieve from the space's memory, reply (the LLM, or the person's own words with a weak
model), store the exchange, and ask for consolidation. Every door stores a turn through `turn_add` and
answers one through `reply`; `turns` lists what is stored.

The inspector (`inspect`): what the memory would put in front of the model for a message, and why,
storing nothing. It runs the retrieval a chat turn runs, read-only (no hit is counted, so no session or
entry gets hotter), and builds the exact prompt the generator would send from it (generator.build_prompt).
It reports every ranked item with its score components (retriever.Item.scores), the items the token
budget left out, and the prompt's parts (the system message's sections, the recent turns, the message
itself) with an estimate of their tokens, as the budget counts them. For a weak model it also says when
the model would not be asked at all: a question about the person is answered with their words
(recall.answer).
"""

import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from memory_engine import inputs
from memory_engine.documents import AnswerDoc, RetrievalDoc
from memory_engine.engine import generator, recall
from memory_engine.engine.generator import Response, build_prompt
from memory_engine.engine.llm_choice import llm_for, weak_model
from memory_engine.engine.reply_strategy import strategy_for
from memory_engine.engine.retriever import Retrieval, estimate_tokens, record_hits, retrieve
from memory_engine.engine.short_term import page_store
from memory_engine.errors import LLMDegenerateAnswer, ReplyStopped
from memory_engine.llm import LLM
from memory_engine.models import MemorySpace, Page
from memory_engine.services import spoken_curation
from memory_engine.services.dispatch import request_consolidation
from memory_engine.services.usage import reply_record

__all__ = [
    "Inspection",
    "PromptPart",
    "inspect",
    "replier",
    "reply",
    "search",
    "turn_add",
    "turns",
    "turns_with_ids",
]


def turn_add(
    *,
    space: MemorySpace,
    user_input: str,
    agent_response: str,
    timestamp: datetime | None = None,
    meta: dict | None = None,
    consolidate: bool = True,
    reply_withheld: bool = False,
    reply_source: str = Page.ReplySource.GIVEN,
    planned: spoken_curation.Plan | None = None,
) -> Page:
    """Store one QA turn in the space's short-term memory and, with `consolidate`, ask for the tier
    moves it makes due (`reply_withheld`, `reply_source`: see page_store). Raises InvalidTurn for bad text; then nothing
    is stored. Not idempotent.

    A turn whose words ask the memory to forget something (services/spoken_curation.py) has it forgotten once
    the turn is stored, at every door: as `planned` (a reply that said what it would do) or as planned here;
    `spoken_curation.forgotten_by(page)` says what went."""
    if planned is None:
        planned = spoken_curation.plan(space, inputs.turn_texts(user_input, agent_response)[0], now=timestamp)
    page = page_store(
        space=space,
        user_input=user_input,
        agent_response=agent_response,
        timestamp=timestamp,
        meta=meta,
        reply_withheld=reply_withheld,
        reply_source=reply_source,
    )
    if planned is not None and planned.forget:
        spoken_curation.carry_out(space, planned, asked_in=page)
    if consolidate:
        request_consolidation(space)
    return page


def replier(space: MemorySpace, query: str) -> Callable[..., Response]:
    """A reply to `query` made ready, as `reply` makes it when called (with its other arguments): the query
    checked and the space's LLM chosen now, so that a door streaming the reply refuses a bad query or a
    model that cannot be used before its first event."""
    return functools.partial(reply, space=space, query=inputs.query(query), llm=llm_for(space))


def reply(
    *,
    space: MemorySpace,
    query: str,
    llm: LLM | None = None,
    timestamp: datetime | None = None,
    consolidate: bool = True,
    on_text: Callable[[str], bool] | None = None,
    stopped: Callable[[], bool] | None = None,
) -> Response:
    """Answer the query from the space's memory and store the exchange as a new turn (as turn_add), with
    `llm`, or the LLM the space uses (its own choice, else the deployment's: llm_choice.llm_for).

    A reply that degenerates twice (see generator) is not stored: the turn keeps the user's words with
    the reply marked withheld, and the response carries generator.fallback_reply. Raises InvalidTurn for
    a bad query and LLMError when the LLM gives no usable answer; then nothing is stored.

    `on_text` sees the reply as it is written (LLM.chat); when it returns True the reply stops and
    ReplyStopped is raised, as it is when `stopped()` says so once the reply is complete. Nothing is
    stored before then, not even the retrieval's hits: a reply that fails or is stopped leaves the memory
    as it was.
    """
    query = inputs.query(query)
    llm = llm_for(space) if llm is None else llm
    if (planned := spoken_curation.plan(space, query, now=timestamp, replying=True)) is not None:
        return _carried_out(
            space,
            query,
            planned,
            llm=llm,
            timestamp=timestamp,
            consolidate=consolidate,
            on_text=on_text,
            stopped=stopped,
        )
    strategy = strategy_for(llm.weak)  # how this turn is answered, chosen once
    retrieval, deep = strategy.retrievals(space, query)
    try:
        answer = strategy.answer(space, retrieval, deep, llm=llm, on_text=on_text, now=timestamp)
    except LLMDegenerateAnswer as failed:
        answer = generator.Answer(
            generator.fallback_reply(query),
            strategy.model_source,
            failed.prompt_tokens,
            failed.completion_tokens,
            failed.problem,
        )
        withheld = True
    else:
        withheld = False
    if stopped is not None and stopped():
        raise ReplyStopped("the reply was stopped before it was stored")
    # Every session the retrieval found was visited (the paper's N_visit counts retrievals), whichever part of
    # it the reply uses; what the reply used is what it records: a quoted reply, the turns it quotes, not the
    # prompt it never sent; a weak model's small talk, what its short prompt held of the memory (nothing).
    record_hits(space, retrieval)
    used = retrieval
    if answer.source in (Page.ReplySource.QUOTED, Page.ReplySource.PLAIN):
        used = recall.used_by(deep, answer.quoted, token_budget=retrieval.token_budget)
    elif answer.source == Page.ReplySource.WEAK_MODEL:
        used = generator.weak_prompt_memory(retrieval)
    page = turn_add(
        space=space,
        user_input=query,
        agent_response="" if withheld else answer.text,
        timestamp=timestamp,
        consolidate=consolidate,
        reply_withheld=withheld,
        reply_source=answer.source,
        planned=spoken_curation.NOTHING,  # read above: it asks nothing of the memory
    )
    reply_record(
        page=page,
        retrieval=used,
        model=llm.model,
        prompt_tokens=answer.prompt_tokens,
        completion_tokens=answer.completion_tokens,
    )
    return generator.Response(
        text=answer.text,
        page=page,
        retrieval=used,
        prompt_tokens=answer.prompt_tokens,
        completion_tokens=answer.completion_tokens,
        withheld=withheld,
        retried_because=answer.retried_because,
        source=answer.source,
        quoted=answer.quoted,
    )


def _carried_out(
    space: MemorySpace,
    query: str,
    planned: spoken_curation.Plan,
    *,
    llm: LLM,
    timestamp: datetime | None,
    consolidate: bool,
    on_text: Callable[[str], bool] | None,
    stopped: Callable[[], bool] | None,
) -> Response:
    """The reply to a message that asks something of the memory itself: what was done, said by the memory
    (no model writes it, whichever the space has), and done once the turn is stored."""
    if (on_text is not None and on_text(planned.text)) or (stopped is not None and stopped()):
        raise ReplyStopped("the reply was stopped before it was stored")
    page = turn_add(
        space=space,
        user_input=query,
        agent_response=planned.text,
        timestamp=timestamp,
        consolidate=consolidate,
        reply_source=Page.ReplySource.CURATION,
        planned=planned,
    )
    nothing = Retrieval(query=query, token_budget=space.context_token_budget)
    reply_record(page=page, retrieval=nothing, model=llm.model, prompt_tokens=0, completion_tokens=0)
    return generator.Response(
        text=planned.text,
        page=page,
        retrieval=nothing,
        prompt_tokens=0,
        completion_tokens=0,
        source=Page.ReplySource.CURATION,
        forgotten=tuple(spoken_curation.forgotten_by(page)),
    )


@dataclass(frozen=True)
class PromptPart:
    name: str  # a section of the system message, "earlier turn" or "the message"
    role: str  # the chat role of the message it is in
    text: str
    tokens: int


@dataclass
class Inspection:
    retrieval: Retrieval
    messages: list[dict]
    parts: list[PromptPart]
    compact: bool  # the prompt of a weak model (LLM.weak): see generator.build_prompt
    quoted: recall.Recall | None = None  # a weak model's reply made of the person's words, instead of the prompt

    def as_dict(self) -> dict:
        return {
            "retrieval": RetrievalDoc.of(self.retrieval).payload(),
            "messages": self.messages,
            "parts": [part.__dict__ for part in self.parts],
            "prompt_tokens": sum(part.tokens for part in self.parts),
            "compact": self.compact,
            "answer_from_memory": None if self.quoted is None else AnswerDoc.of(self.quoted).payload(),
        }


def inspect(
    space: MemorySpace,
    query: str,
    *,
    compact: bool | None = None,
    top_pages: int | None = None,
    top_knowledge: int | None = None,
    token_budget: int | None = None,
) -> Inspection:
    """What a chat turn with `query` would retrieve and send, changing nothing. `compact`: the model
    answering is weak (its LLM.weak); by default, whether the space's own is (llm_choice.weak_model, read
    without reaching the model). Raises MemoryInputError for a query `inputs.query` refuses."""
    strategy = strategy_for(weak_model(space) if compact is None else compact)  # as the turn would be answered
    retrieval, deep = strategy.retrievals(
        space, query, top_pages=top_pages, top_knowledge=top_knowledge, token_budget=token_budget
    )
    compact = strategy.compact
    prompt = build_prompt(space, retrieval, compact=compact)
    parts = [PromptPart(title, "system", text, estimate_tokens(text)) for title, text in prompt.sections]
    for number, message in enumerate(prompt.messages[1:], start=2):
        name = "the message" if number == len(prompt.messages) else "earlier turn"
        parts.append(PromptPart(name, message["role"], message["content"], estimate_tokens(message["content"])))
    quoted = strategy.recalled(space, query, deep)
    return Inspection(retrieval=retrieval, messages=prompt.messages, parts=parts, compact=compact, quoted=quoted)


def search(
    space: MemorySpace,
    query: str,
    *,
    top_pages: int | None = None,
    top_knowledge: int | None = None,
    token_budget: int | None = None,
    fill_pages: int | None = None,
    count_hits: bool = True,
    top_sessions: int | None = None,
    now: datetime | None = None,
) -> Retrieval:
    """What every tier holds for `query`, with scores and provenance, within the token budget (the space's
    parameters unless given; retriever.retrieve), as the doors' retrieve gives it: a retrieval by a caller
    is a visit unless `count_hits` is False, so the sessions of the pages it ranks and the knowledge it
    finds get hotter, as a chat turn's do. Raises MemoryInputError for a query `inputs.query` refuses."""
    return retrieve(
        space,
        query,
        top_pages=top_pages,
        top_knowledge=top_knowledge,
        token_budget=token_budget,
        fill_pages=fill_pages,
        count_hits=count_hits,
        top_sessions=top_sessions,
        now=now,
    )


def turns(space: MemorySpace, *, tier: object = None, newest_first: bool = False) -> QuerySet:
    """The space's stored turns (in one tier, when given), in the order they were said or newest first,
    with the record of the reply each stored."""
    wanted = inputs.one_of(tier, "tier", Page.Tier.values)
    found = Page.objects.filter(space=space).defer("embedding").select_related("reply_record")
    found = found if wanted is None else found.filter(tier=wanted)
    return found.order_by("-seq" if newest_first else "seq")


def turns_with_ids(space: MemorySpace, page_ids) -> QuerySet:
    """The space's turns with these ids, in the order they were said (ids of other spaces find nothing), with
    the record of the reply each stored."""
    return (
        Page.objects.filter(space=space, pk__in=list(page_ids))
        .defer("embedding")
        .select_related("reply_record")
        .order_by("seq")
    )
