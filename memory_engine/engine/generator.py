"""The generation module: a prompt built from every tier, one guarded LLM call.

The prompt keeps the roles clear, because a small model otherwise speaks as the user: the system message
says who the assistant is and how to answer, then gives the memory as labelled content ("What you know
about Sam": the profile, the facts, what Sam said in earlier conversations; "What you know about
yourself"); the recent conversation follows as real user and assistant turns, and the user's new message
comes last, as the user's. Memory written in the user's own first person is quoted and attributed
("Sam said: "I work in Lyon.""), so the model reads it as the user's words, not its own.

The reply streams past a `ReplyGuard` that knows this prompt: a loop, the prompt's labels or
instructions echoed, a chat-role marker, a claim to be the user or a description of them, or the same
words as an earlier reply to another message is degenerate. The LLM boundary then retries once with
stronger settings; if that degenerates too, the user gets an honest short answer (`fallback_reply`) and the
failed reply is never stored.

Which turns a model answers, and with which prompt, is chosen once a turn by engine/reply_strategy.py: a
weak model (`LLM.weak`, the bundled one) is not asked about the person at all, and for small talk gets the
compact prompt, with no memory in it, because the notes it is given are what it recites back ("Maria
Lindqvist is a wonderful person ..."). Its replies are shown but never become memory
(Page.ReplySource.WEAK_MODEL).
"""

from collections.abc import Callable
from dataclasses import dataclass

from memory_engine.engine import recall
from memory_engine.engine.long_term import entry_text, replaced_on
from memory_engine.engine.retriever import Item, Retrieval
from memory_engine.language import intent
from memory_engine.language.names import SELF_NAMING
from memory_engine.language.reading import speaks_of_self
from memory_engine.language.text import straight
from memory_engine.language.word_lists import LANGUAGES, MONTHS, NOT_A_NAME, TIME_WORDS
from memory_engine.llm import LLM, ReplyGuard, chat_sampling
from memory_engine.models import MemorySpace, Page
from memory_engine.store.embeddings import get_embedder

FALLBACK_REPLY = "Sorry, I couldn't put together a proper answer to that. Could you ask again, perhaps in other words?"
# The same, after a statement: nothing was asked, and the person's words are kept all the same.
FALLBACK_NOTED = "Thanks for telling me."

SYSTEM = (
    "You are {name}, an assistant talking with {user}. {persona}\n"
    "Reply to {user}'s last message in one to three short sentences. When what you know about {user} answers "
    "it, say it back plainly. If you do not know, say so. Never make up facts about {user}, and never speak "
    "as {user}."
)
# For a weak model, small talk only (questions about the person are answered by engine/recall.py): a
# friendly line and no memory to recite.
COMPACT_SYSTEM = "You are {name}, a friendly assistant. Reply to the user in one or two short, kind sentences."
# Notes from memory given to a weak model with its small talk. None: given any, SmolLM2-135M recites them
# back as descriptions of the user ("Maria Lindqvist - a friendly nurse").
COMPACT_LINES = 0
# Capitalised words a weak model's small talk may say though no one did: they name no one.
PLAIN_WORDS = (
    *NOT_A_NAME,
    *LANGUAGES,
    *MONTHS,
    *TIME_WORDS,
    "hello",
    "hi",
    "hey",
    "happy",
    "new",
    "year",
    "good",
    "ai",
    "earth",
)
USER_SECTION = "What you know about {user}"
ASSISTANT_SECTION = "What you know about yourself"
NOTHING_YET = "(nothing yet)"


@dataclass(frozen=True)
class Answer:
    """A reply, who made it (Page.ReplySource: the model, a weak model, or the person's words quoted),
    what it cost, and the statements it quotes."""

    text: str
    source: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retried_because: str | None = None
    quoted: tuple[recall.Statement, ...] = ()


@dataclass
class Response:
    """A reply and what it used. `withheld`: the model's reply degenerated and `text` is the fallback
    reply; the stored page keeps the user's words only. `source` and `quoted`: see Answer."""

    text: str
    page: Page
    retrieval: Retrieval
    prompt_tokens: int
    completion_tokens: int
    withheld: bool = False
    retried_because: str | None = None
    source: str = Page.ReplySource.MODEL
    quoted: tuple[recall.Statement, ...] = ()
    forgotten: tuple = ()  # what a request to forget changed (services/spoken_curation.py: Forgotten); Undo reverts it


@dataclass(frozen=True)
class Prompt:
    """The messages for one reply, and the guard that judges the reply to them. `sections`: the system
    message's parts as (title, text), in order; the system message is their texts joined by blank lines."""

    messages: list[dict]
    guard: ReplyGuard
    sections: list[tuple[str, str]]


def _quote(text: str) -> str:
    return '"' + " ".join(text.split()) + '"'


def _bullets(lines: list[str]) -> str:
    return "\n".join(f"- {line}" for line in lines) if lines else NOTHING_YET


def _when(item: Item) -> str:
    return item.provenance.get("timestamp", "")[:10]


def _user_names(space: MemorySpace, profile: dict[str, str], statements: list[str]) -> list[str]:
    names = {space.user.display_name.strip(), profile.get("name", "").strip()}
    names.update(name.split()[0] for name in list(names) if name)  # "Maria Lindqvist" is "Maria" too
    for text in statements:
        for found in SELF_NAMING.findall(straight(text)):
            names.update(name for name in found if name)
    return sorted(name for name in names if name)


def build_prompt(space: MemorySpace, retrieval: Retrieval, *, compact: bool = False) -> Prompt:
    """The chat messages for answering `retrieval.query` from what the retrieval found, and the guard
    for the reply. Reads the pages of short-term memory and of the retrieved past conversation.

    `compact` (for a weak model, `LLM.weak`): the recent conversation is given as what the user said,
    in the memory, not as chat turns, and the assistant's own earlier replies are left out: a small model
    copies its last reply's words and drifts further with each turn (measured: docs/benchmarks.md)."""
    assistant = space.assistant
    profile = {item.provenance.get("key", ""): item.text.split(": ", 1)[-1] for item in retrieval.profile}
    user = space.user.display_name.strip() or profile.get("name", "").strip() or "the user"
    if compact:
        # Named in its prompt ("talking with Sam", "Sam said: ..."), a weak model takes the name as its
        # own and answers as Sam; as "the user" it answers the user (measured: docs/benchmarks.md).
        user = "the user"
    pages = Page.objects.in_bulk([item.id for item in (*retrieval.short_term, *retrieval.pages)])

    known: list[str] = [item.text for item in retrieval.profile]
    seen: set[str] = set()
    for item in retrieval.user_knowledge:
        # A fact in the user's own first person (a weak model copies it verbatim) is quoted as theirs.
        said = f"{user[:1].upper()}{user[1:]} said: {_quote(item.text)}"
        known.append(said if speaks_of_self(item.text) else item.text)
        seen.add(" ".join(item.text.lower().split()))
    # A past turn whose words the memory holds replaced (a correction superseded what was drawn from it) says so,
    # so that a model reads the old value as the old one ("Sakuraya", then "Hanabusa, not Sakuraya").
    replaced = {} if compact else replaced_on({item.id for item in retrieval.pages})
    for item in retrieval.pages:
        # What the page shows within the budget: an excerpt of a long one (engine/excerpt.py).
        said_shown, replied_shown = _shown(item, pages.get(item.id))
        said = " ".join(said_shown.split())
        if said and said.lower() not in seen:
            seen.add(said.lower())
            line = f"On {_when(item)} {user} said: {_quote(said)}"
            if replied_shown and not compact:
                line += f" and you replied: {_quote(replied_shown)}"
            if (newer := replaced.get(item.id)) is not None:
                line += f" (since replaced: {_quote(entry_text(newer.kind, newer.key, newer.value))})"
            known.append(line)
    about_user = USER_SECTION.format(user=user)
    name = assistant.name or assistant.external_id
    if compact:
        recent = [pages[item.id].user_input for item in retrieval.short_term if pages[item.id].user_input]
        known += [f"{user} said: {_quote(text)}" for text in recent]
        known = _most_like(retrieval.query, known, COMPACT_LINES)
        instructions = COMPACT_SYSTEM.format(name=name)
        sections = [("instructions", instructions)]
        if known:
            sections.append((about_user, f"{about_user}:\n{_bullets(known)}"))
    else:
        instructions = SYSTEM.format(name=name, user=user, persona=assistant.persona).strip()
        about_assistant = _bullets([item.text for item in retrieval.assistant_knowledge])
        sections = [
            ("instructions", instructions),
            (about_user, f"{about_user}:\n{_bullets(known)}"),
            (ASSISTANT_SECTION, f"{ASSISTANT_SECTION}:\n{about_assistant}"),
        ]
    system = "\n\n".join(text for _, text in sections)
    messages = [{"role": "system", "content": system}]
    earlier_replies: list[str] = []
    statements: list[str] = [item.text for item in retrieval.user_knowledge]
    asked = " ".join(retrieval.query.lower().split())
    for item in retrieval.short_term:
        page = pages[item.id]
        said_shown, replied_shown = _shown(item, page)
        if page.user_input:
            statements.append(page.user_input)
            if not compact:
                _append(messages, "user", said_shown)
        if page.agent_response and not page.reply_withheld:
            if not compact:
                # A weak model's reply is no memory but was said: the conversation shows it, cut as the page is.
                excerpted = "excerpt_of_tokens" in item.provenance
                _append(messages, "assistant", replied_shown if excerpted and replied_shown else page.agent_response)
            if " ".join(page.user_input.lower().split()) != asked:
                earlier_replies.append(page.agent_response)
    _append(messages, "user", retrieval.query)
    statements += [pages[item.id].user_input for item in retrieval.pages if item.id in pages]
    statements.append(retrieval.query)  # "Hi, I'm Maria": the name may be given in the message itself
    user_names = _user_names(space, profile, statements)
    guard = ReplyGuard(
        # The section titles, and the opening words of each instruction line the prompt gave ("You are
        # Helper, an assistant", "Reply to Sam's last message"), which a small model recites back.
        scaffolding=[
            about_user,
            ASSISTANT_SECTION,
            f"You are {name}",  # its own introduction, read back to the user
            *(line[:30] for line in instructions.split("\n")),
        ],
        instructions=instructions,
        earlier_replies=earlier_replies,
        user_names=user_names,
        strict_names=compact,
        # A weak model's small talk was given no memory: what it may speak of is what the person said.
        heard=statements if compact else None,
        plain_words=(*PLAIN_WORDS, name, *user_names),
    )
    return Prompt(messages=messages, guard=guard, sections=sections)


def weak_prompt_memory(retrieval: Retrieval) -> Retrieval:
    """What a weak model's short prompt (build_prompt, `compact`) holds of `retrieval`: nothing, for it is
    given no memory (COMPACT_LINES is 0; were it more, this would have to name the lines kept). What its reply
    is recorded as having used. Pure."""
    return Retrieval(query=retrieval.query, token_budget=retrieval.token_budget)


def _most_like(query: str, lines: list[str], keep: int) -> list[str]:
    """The `keep` lines closest to the query by the MiniLM cosine, in their original order."""
    if keep <= 0:
        return []
    if len(lines) <= keep:
        return lines
    vectors = get_embedder().encode([query, *lines])
    closeness = vectors[1:] @ vectors[0]
    chosen = sorted(sorted(range(len(lines)), key=lambda i: -closeness[i])[:keep])
    return [lines[i] for i in chosen]


def _shown(item: Item, page: Page | None) -> tuple[str, str]:
    """What a page item shows of the person's words and of the reply as memory: its parts (an excerpt of a
    long page), else the page's own."""
    if item.parts is not None:
        return item.parts
    return (page.user_input, page.memory_reply) if page is not None else ("", "")


def _append(messages: list[dict], role: str, content: str) -> None:
    # A turn whose reply was withheld leaves two user messages in a row: they become one, as chat
    # templates expect the roles to alternate.
    if messages[-1]["role"] == role and role == "user":
        messages[-1] = {"role": role, "content": messages[-1]["content"] + "\n" + content}
    else:
        messages.append({"role": role, "content": content})


def fallback_reply(query: str) -> str:
    """What the person is told when the model's reply degenerated twice: an apology for a question, a
    thank-you for a statement (nothing was asked, and their words are kept)."""
    asked = query.strip().endswith("?") or intent.asks_about_memory(query)
    return FALLBACK_REPLY if asked else FALLBACK_NOTED


def model_reply(
    space: MemorySpace,
    retrieval: Retrieval,
    *,
    llm: LLM,
    compact: bool,
    source: str,
    on_text: Callable[[str], bool] | None = None,
) -> Answer:
    """The model's reply to `retrieval.query` under the prompt built from it (the compact one with `compact`),
    asked under the chat sampling and the prompt's guard (`on_text`: see LLM.chat), recorded as `source`.
    Which turns a model answers at all is engine/reply_strategy.py's choice. Raises LLMDegenerateAnswer when
    the reply degenerated twice, LLMError when there is no usable reply, ReplyStopped when `on_text` stopped
    it; stores nothing."""
    prompt = build_prompt(space, retrieval, compact=compact)
    completion = llm.chat(prompt.messages, sampling=chat_sampling(), guard=prompt.guard, on_text=on_text)
    return Answer(
        completion.text, source, completion.prompt_tokens, completion.completion_tokens, completion.retried_because
    )
