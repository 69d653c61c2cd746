"""The generation module: a prompt built from every tier, one LLM call, the new turn written back.

The prompt has the paper's sections: who the assistant is and what it knows (assistant knowledge),
the user's profile and known facts (user knowledge), relevant past conversation (mid-term pages with
their thread summaries), the recent conversation (short-term), and the query.
"""

from dataclasses import dataclass

from memory_engine.llm import LLM, Completion
from memory_engine.models import MemorySpace, Page
from memory_engine.retriever import Item, Retrieval

SYSTEM = (
    "You are {name}, a helpful assistant with a long-term memory of this user. {persona}\n"
    "Use the memory below when it is relevant; do not invent memories. If the memory does not say, "
    "say you do not know. Answer briefly and naturally."
)


def _section(title: str, lines: list[str]) -> str:
    body = "\n".join(lines) if lines else "(nothing yet)"
    return f"## {title}\n{body}"


def _page_line(item: Item) -> str:
    when = item.provenance.get("timestamp", "")[:16].replace("T", " ")
    return f"[{when}] {item.text}"


def response_messages(space: MemorySpace, retrieval: Retrieval) -> list[dict]:
    """The chat messages for answering `retrieval.query` with what the retrieval found."""
    assistant = space.assistant
    past = []
    for item in retrieval.pages:
        thread = item.provenance.get("thread_summary")
        past.append(_page_line(item) + (f"\n  (thread: {thread})" if thread else ""))
    memory = "\n\n".join(
        [
            _section(
                "What you know and said before (assistant knowledge)",
                [i.text for i in retrieval.assistant_knowledge],
            ),
            _section("The user's profile", [i.text for i in retrieval.profile]),
            _section("Facts about the user (user knowledge)", [i.text for i in retrieval.user_knowledge]),
            _section("Relevant past conversation", past),
        ]
    )
    messages = [
        {
            "role": "system",
            "content": SYSTEM.format(name=assistant.name or assistant.external_id, persona=assistant.persona).strip()
            + "\n\n"
            + memory,
        }
    ]
    recent = Page.objects.in_bulk([item.id for item in retrieval.short_term])
    for item in retrieval.short_term:
        page = recent[item.id]
        if page.user_input:
            messages.append({"role": "user", "content": page.user_input})
        if page.agent_response:
            messages.append({"role": "assistant", "content": page.agent_response})
    messages.append({"role": "user", "content": retrieval.query})
    return messages


@dataclass
class Response:
    text: str
    page: Page
    retrieval: Retrieval
    completion: Completion


def generate(space: MemorySpace, retrieval: Retrieval, *, llm: LLM) -> Completion:
    """Ask the LLM for the reply. Raises LLMError when there is no valid reply; stores nothing."""
    return llm.chat(response_messages(space, retrieval))
