"""How a chat turn is answered, chosen once a turn from the model that answers: the paper's generation module
(engine/generator.py: a prompt from every tier, one guarded call) for a model that can be trusted with the
person's memory, and what the playground does for one that cannot.

- CAPABLE, a capable model (an OpenAI-compatible endpoint): one retrieval within the budget, the full
  prompt, and the model's reply, which may become memory (Page.ReplySource.MODEL).
- BUNDLED, the bundled small model given free text (MEMORYOS_OFFLINE_VOICE=model): a question about the
  person is answered with their own words (engine/recall.py: QUOTED), anything else by the model under the
  compact prompt, which holds no memory to recite; its replies are never memory (WEAK_MODEL).
- NO_MODEL, the bundled model given no free text (MEMORYOS_OFFLINE_VOICE=plain, the default): a question
  is answered with their words, anything else by the memory's plain voice (engine/plain_voice.py: PLAIN); no
  model writes a word.

`strategy_for(weak)` picks one from whether the model answering is weak (LLM.weak; llm_choice.weak_model
reads it for a space without reaching the model). Each says how a turn retrieves (`retrievals`: the prompt's
view, and for recall a deeper one of the same search), whether the prompt is the compact one (`compact`), what
a model's reply is recorded as (`model_source`), what the memory answers alone (`from_memory`), and answers
(`answer`). Nothing is stored here.
"""

from collections.abc import Callable
from datetime import datetime

from django.utils import timezone

from memory_engine.config import memory_settings
from memory_engine.engine import generator, plain_voice, recall
from memory_engine.engine.generator import Answer
from memory_engine.engine.retriever import Retrieval, retrieve
from memory_engine.llm import LLM, ReplyStopped
from memory_engine.models import MemorySpace, Page
from memory_engine.store.embeddings import get_embedder


class CapableModel:
    """A capable model answers every turn from the full prompt."""

    compact = False  # the full prompt: every tier's memory (generator.build_prompt)
    model_source = Page.ReplySource.MODEL

    def retrievals(
        self,
        space: MemorySpace,
        query: str,
        *,
        top_pages: int | None = None,
        top_knowledge: int | None = None,
        token_budget: int | None = None,
    ) -> tuple[Retrieval, Retrieval | None]:
        """The prompt's retrieval (the space's depths and budget, or those given), read-only, and recall's
        deeper view of it when this strategy quotes (else None)."""
        found = retrieve(
            space, query, top_pages=top_pages, top_knowledge=top_knowledge, token_budget=token_budget, count_hits=False
        )
        return found, None

    def recalled(self, space: MemorySpace, query: str, deep: Retrieval | None, now: datetime | None = None):
        """The person's own words answering `query` (recall.Recall), or None when the model answers."""
        return None

    def from_memory(
        self, space: MemorySpace, retrieval: Retrieval, deep: Retrieval | None, now: datetime | None
    ) -> Answer | None:
        """The reply the memory gives without a model, or None when the model is asked."""
        return None

    def answer(
        self,
        space: MemorySpace,
        retrieval: Retrieval,
        deep: Retrieval | None,
        *,
        llm: LLM,
        on_text: Callable[[str], bool] | None = None,
        now: datetime | None = None,
    ) -> Answer:
        """The reply to `retrieval.query`: the memory's own (`from_memory`), else the model's under the prompt
        (generator.model_reply). `on_text` sees it as it is written (LLM.chat); ReplyStopped when it asks to
        stop. Raises LLMDegenerateAnswer and LLMError as generator.model_reply; stores nothing."""
        made = self.from_memory(space, retrieval, deep, now)
        if made is None:
            return generator.model_reply(
                space, retrieval, llm=llm, compact=self.compact, source=self.model_source, on_text=on_text
            )
        if on_text is not None and on_text(made.text):
            raise ReplyStopped("the caller stopped the answer")
        return made


class BundledModel(CapableModel):
    """The bundled small model is never asked about the person: their words answer; it has small talk."""

    compact = True  # no memory in its prompt: what it is given, it recites back
    model_source = Page.ReplySource.WEAK_MODEL

    def retrievals(self, space, query, *, top_pages=None, top_knowledge=None, token_budget=None):
        """One search, two views: the prompt's and recall's deeper one (recall.retrievals)."""
        return recall.retrievals(
            space, query, top_pages=top_pages, top_knowledge=top_knowledge, token_budget=token_budget
        )

    def recalled(self, space, query, deep, now=None):
        return recall.answer(space, query, now=now, deep=deep)

    def from_memory(self, space, retrieval, deep, now):
        found = self.recalled(space, retrieval.query, deep, now)
        return None if found is None else Answer(found.text, Page.ReplySource.QUOTED, quoted=found.quoted)


class NoModel(BundledModel):
    """No model writes a word: what recall cannot answer, the memory's plain voice does."""

    def from_memory(self, space, retrieval, deep, now):
        quoted = super().from_memory(space, retrieval, deep, now)
        if quoted is not None:
            return quoted
        query = retrieval.query

        def related() -> tuple[recall.Statement, ...]:  # read only when the reply needs it
            return recall.related(query, recall.statements_of(deep, query), get_embedder())

        text, held = plain_voice.reply(query, related, now or timezone.now())
        return Answer(text, Page.ReplySource.PLAIN, quoted=held)


CAPABLE, BUNDLED, NO_MODEL = CapableModel(), BundledModel(), NoModel()


def strategy_for(weak: bool) -> CapableModel:
    """How a turn is answered when the model answering is `weak` (LLM.weak), or a capable one."""
    if not weak:
        return CAPABLE
    return NO_MODEL if memory_settings().offline_voice == plain_voice.PLAIN else BUNDLED
