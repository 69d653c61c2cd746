"""A conversation turn: stored in short-term memory, then consolidation asked for; or a reply, answered
from the memory and stored the same way. Every door stores a turn through `turn_add`."""

from collections.abc import Callable
from datetime import datetime

from memory_engine import inputs
from memory_engine.beyond.replies import reply_record
from memory_engine.engine import generator
from memory_engine.engine.retriever import record_hits, retrieve
from memory_engine.engine.short_term import page_store
from memory_engine.jobs.dispatch import request_consolidation
from memory_engine.llm import LLM, LLMDegenerateAnswer, ReplyStopped
from memory_engine.models import MemorySpace, Page


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
) -> Page:
    """Store one QA turn in the space's short-term memory and, with `consolidate`, ask for the tier
    moves it makes due (`reply_withheld`, `reply_source`: see page_store). Raises InvalidTurn for bad text; then nothing
    is stored. Not idempotent."""
    page = page_store(
        space=space,
        user_input=user_input,
        agent_response=agent_response,
        timestamp=timestamp,
        meta=meta,
        reply_withheld=reply_withheld,
        reply_source=reply_source,
    )
    if consolidate:
        request_consolidation(space)
    return page


def reply(
    *,
    space: MemorySpace,
    query: str,
    llm: LLM,
    timestamp: datetime | None = None,
    consolidate: bool = True,
    on_text: Callable[[str], bool] | None = None,
    stopped: Callable[[], bool] | None = None,
) -> generator.Response:
    """Answer the query from the space's memory and store the exchange as a new turn (as turn_add).

    A reply that degenerates twice (see generator) is not stored: the turn keeps the user's words with
    the reply marked withheld, and the response carries generator.fallback_reply. Raises InvalidTurn for
    a bad query and LLMError when the LLM gives no usable answer; then nothing is stored.

    `on_text` sees the reply as it is written (LLM.chat); when it returns True the reply stops and
    ReplyStopped is raised, as it is when `stopped()` says so once the reply is complete. Nothing is
    stored before then, not even the retrieval's hits: a reply that fails or is stopped leaves the memory
    as it was.
    """
    query = inputs.query(query)
    retrieval = retrieve(space, query, count_hits=False)
    try:
        answer = generator.generate(space, retrieval, llm=llm, on_text=on_text, now=timestamp)
    except LLMDegenerateAnswer as failed:
        source = Page.ReplySource.WEAK_MODEL if llm.weak else Page.ReplySource.MODEL
        answer = generator.Answer(
            generator.fallback_reply(query), source, failed.prompt_tokens, failed.completion_tokens, failed.problem
        )
        withheld = True
    else:
        withheld = False
    if stopped is not None and stopped():
        raise ReplyStopped("the reply was stopped before it was stored")
    record_hits(space, retrieval)
    page = turn_add(
        space=space,
        user_input=query,
        agent_response="" if withheld else answer.text,
        timestamp=timestamp,
        consolidate=consolidate,
        reply_withheld=withheld,
        reply_source=answer.source,
    )
    reply_record(
        page=page,
        retrieval=retrieval,
        model=llm.model,
        prompt_tokens=answer.prompt_tokens,
        completion_tokens=answer.completion_tokens,
    )
    return generator.Response(
        text=answer.text,
        page=page,
        retrieval=retrieval,
        prompt_tokens=answer.prompt_tokens,
        completion_tokens=answer.completion_tokens,
        withheld=withheld,
        retried_because=answer.retried_because,
        source=answer.source,
        quoted=answer.quoted,
    )
