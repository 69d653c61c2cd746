"""The inspector: what the memory would put in front of the model for a message, and why, storing nothing.

For a query it runs the retrieval a chat turn runs, read-only (no hit is counted, so no session or entry
gets hotter), and builds the exact prompt the generator would send from it (generator.build_prompt).
It reports every ranked item with its score components (retriever.Item.scores), the items the token
budget left out, and the prompt's parts (the system message's sections, the recent turns, the message
itself) with an estimate of their tokens, as the budget counts them. For a weak model it also says when the
model would not be asked at all: a question about the person is answered with their words (recall.answer).
"""

from dataclasses import dataclass

from memory_engine.engine import recall
from memory_engine.engine.generator import build_prompt
from memory_engine.engine.retriever import Retrieval, estimate_tokens, retrieve
from memory_engine.models import MemorySpace

__all__ = ["Inspection", "PromptPart", "inspect"]


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
            "retrieval": self.retrieval.as_dict(),
            "messages": self.messages,
            "parts": [part.__dict__ for part in self.parts],
            "prompt_tokens": sum(part.tokens for part in self.parts),
            "compact": self.compact,
            "answer_from_memory": None
            if self.quoted is None
            else {
                "text": self.quoted.text,
                "quoted": [said.as_dict() for said in self.quoted.quoted],
            },
        }


def inspect(
    space: MemorySpace,
    query: str,
    *,
    compact: bool,
    top_pages: int | None = None,
    top_knowledge: int | None = None,
    token_budget: int | None = None,
) -> Inspection:
    """What a chat turn with `query` would retrieve and send, changing nothing. `compact`: the model
    answering is weak (its LLM.weak). Raises MemoryInputError for a query `inputs.query` refuses."""
    retrieval = retrieve(
        space, query, top_pages=top_pages, top_knowledge=top_knowledge, token_budget=token_budget, count_hits=False
    )
    prompt = build_prompt(space, retrieval, compact=compact)
    parts = [PromptPart(title, "system", text, estimate_tokens(text)) for title, text in prompt.sections]
    for number, message in enumerate(prompt.messages[1:], start=2):
        name = "the message" if number == len(prompt.messages) else "earlier turn"
        parts.append(PromptPart(name, message["role"], message["content"], estimate_tokens(message["content"])))
    quoted = recall.answer(space, query) if compact else None
    return Inspection(retrieval=retrieval, messages=prompt.messages, parts=parts, compact=compact, quoted=quoted)
