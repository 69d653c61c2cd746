"""What a query finds, as every door gives it, defined once: one retrieved item (ItemDoc), a retrieval with
its sections, its token budget and what the budget cut (RetrievalDoc), what a stored reply used, read
from the memory as it is now (UsedDoc), and a reply made of the person's own words: a statement it quotes
(QuotedDoc) and the reply with the rule that read the question (AnswerDoc); and an entry, a version of it and a
turn as every door gives them (EntryCard, VersionCard, TurnCard: the export's part and what a door adds), and what
an erasure changed (ErasedDoc), a point of the heat timeline (HeatPointCard), and the work a worker does for a
space: a history import (ImportJobCard) and a restore, comparison, check or erasure (BackgroundJobCard).

Each model builds its payload (`of`, from the engine's Retrieval and Item, without importing them) and
documents it: REST's retrieve, chat, inspect and "what it used" answers, MCP's retrieve_memory and the chat
page read the same payload, and the OpenAPI document's schema is these models' (interfaces/api/openapi.py),
as the export's is export_format.py's.
"""

from datetime import datetime

from pydantic import BaseModel, ConfigDict, Field

from memory_engine.export_format import EntryFields, HeatPoint, PageDoc, VersionDoc

SECTIONS = ("short_term", "sessions", "pages", "profile", "user_knowledge", "assistant_knowledge")


class Document(BaseModel):
    model_config = ConfigDict(extra="forbid")

    def payload(self) -> dict:
        """The JSON payload a door answers with."""
        return self.model_dump(mode="json")


class ItemDoc(Document):
    """One item of a retrieval: a turn, a session, a profile value or a fact, with its score and why."""

    kind: str = Field(description="short_term, session, page, profile, user_knowledge or assistant_knowledge.")
    id: int = Field(description="The row's id: the turn's, the session's or the entry's.")
    text: str
    score: float
    scores: dict[str, float] = Field(description="The signals the score was made of (similarity, heat, ...).")
    provenance: dict = Field(description="Where the item comes from: its session, its turns, its dates.")
    tokens: int = Field(description="What the item costs in a prompt (about four characters a token).")

    @classmethod
    def of(cls, item) -> "ItemDoc":
        return cls.model_construct(
            kind=item.kind,
            id=item.id,
            text=item.text,
            score=round(item.score, 6),
            scores={name: round(value, 6) for name, value in item.scores.items()},
            provenance=item.provenance,
            tokens=item.tokens,
        )


def _items(items) -> list[ItemDoc]:
    return [ItemDoc.of(item) for item in items]


class RetrievalDoc(Document):
    """What memory holds for a query, section by section, within a token budget."""

    query: str
    short_term: list[ItemDoc]
    sessions: list[ItemDoc] = Field(description="The mid-term sessions ranked, whose pages were searched.")
    pages: list[ItemDoc]
    profile: list[ItemDoc]
    user_knowledge: list[ItemDoc]
    assistant_knowledge: list[ItemDoc]
    token_budget: int
    tokens_used: int
    dropped: int = Field(description="How many items the token budget left out (`cut`).")
    cut: list[ItemDoc] = Field(description="The items the token budget left out, in the order it tried them.")

    @classmethod
    def of(cls, retrieval) -> "RetrievalDoc":
        return cls.model_construct(
            query=retrieval.query,
            **{name: _items(getattr(retrieval, name)) for name in SECTIONS},
            token_budget=retrieval.token_budget,
            tokens_used=retrieval.tokens_used,
            dropped=len(retrieval.cut),
            cut=_items(retrieval.cut),
        )


class UsedDoc(RetrievalDoc):
    """What a stored reply used, read from the memory as it is now (no sessions or cut items: not kept)."""

    gone: int = Field(description="Items it used that were deleted or forgotten since: left out.")

    @classmethod
    def of_items(cls, *, query: str, items, token_budget: int, tokens_used: int, gone: int) -> "UsedDoc":
        """The items, each in its retrieval section (a turn of short-term memory, a page, a profile value,
        a fact of either knowledge)."""
        sections = {name: [] for name in SECTIONS}
        for item in items:
            section = {"short_term": "short_term", "page": "pages"}.get(item.kind, item.kind)
            sections[section].append(ItemDoc.of(item))
        return cls.model_construct(
            query=query,
            **sections,
            token_budget=token_budget,
            tokens_used=tokens_used,
            dropped=0,
            cut=[],
            gone=gone,
        )


class QuotedDoc(Document):
    """A statement of the person's that a reply quotes (engine/recall.py's Statement)."""

    page_id: int = Field(description="The turn it was said in.")
    seq: int
    text: str = Field(description="What the reply quotes: the person's words as the memory holds them now.")
    said_at: str = Field(description="When it was said (ISO 8601).", json_schema_extra={"format": "date-time"})
    first_said: str | None = Field(None, description="A corrected statement's words as first said; else absent.")
    corrected_at: str | None = Field(
        None, description="When it was corrected (ISO 8601); else absent.", json_schema_extra={"format": "date-time"}
    )
    reranker: float | None = Field(
        None, description="How likely the reranker read it as the answer (0 to 1); absent when the reranker is off."
    )

    @classmethod
    def of(cls, statement) -> "QuotedDoc":
        corrected = statement.corrected_at is not None
        return cls.model_construct(
            page_id=statement.page_id,
            seq=statement.seq,
            text=statement.quote,
            said_at=statement.said_at.isoformat(),
            first_said=statement.first_said if corrected else None,
            corrected_at=statement.corrected_at.isoformat() if corrected else None,
            reranker=statement.likelihood,
        )

    def payload(self) -> dict:
        """The statement, its correction only when it was corrected."""
        return self.model_dump(mode="json", exclude_none=True)


class AnswerDoc(Document):
    """A weak model's reply made of the person's own words (engine/recall.py's Recall)."""

    text: str = Field(description="The reply, made of the person's own words.")
    quoted: list[QuotedDoc] = Field(description="The statements it quotes; none: it says nothing told answers.")
    read_as: str = Field(description="The rule that read what the message asks (language/intent.py's RULES).")

    @classmethod
    def of(cls, recall) -> "AnswerDoc":
        return cls.model_construct(
            text=recall.text, quoted=[QuotedDoc.of(said) for said in recall.quoted], read_as=recall.read_as
        )

    def payload(self) -> dict:
        return {**self.model_dump(mode="json"), "quoted": [said.payload() for said in self.quoted]}


# --- An entry, a version, a turn, as every door gives them ---------------------------------------------
# Each is the export's part (export_format.py) and what a door adds to it: REST (its answers, and the OpenAPI
# document's schema), MCP's tools, the admin's JSON and the chat page read the same payload.


class CoverageDoc(Document):
    """What an entry's forget or edit holds out of the turns it was drawn from (engine/statement_marks.py)."""

    statements: int = Field(description="Statements of the turns held out (forgotten or corrected).")
    turns: list[int] = Field(description="The turns (seq) they are in.")
    entries: list[int] = Field(description="Entries drawn from them that went too.")


class EntryCard(EntryFields):
    """An entry as every door gives it: its fields and provenance as the export writes them (without its
    history: GET .../history/), and what its forget or edit holds out of the turns. A delete answers it, so
    that whoever forgot it is told what went."""

    covers: CoverageDoc

    def payload(self) -> dict:
        return self.model_dump(mode="json")


class VersionCard(VersionDoc):
    """A version of an entry as every door gives it: as the export writes it, and the change word by word."""

    changes: list[list[str]] = Field(
        description='The change word by word, as [kind, words] runs: "same", "del" or "ins" (the admin\'s diff).'
    )

    def payload(self) -> dict:
        return self.model_dump(mode="json")


class ReplyCostDoc(Document):
    """What a reply this space's chat wrote used and cost (services/usage.py: reply_costs)."""

    model: str = Field(description="The model that wrote the reply.")
    prompt_tokens: int
    completion_tokens: int
    memory_tokens: int = Field(description="Tokens of memory in the prompt.")
    token_budget: int
    used: dict[str, int] = Field(
        description="How many items of each kind the prompt held: short_term, pages, profile, knowledge."
    )
    turns: list[dict[str, int]] = Field(
        description="The turns it used that are still stored (its prompt held them, or a quoted reply quotes them), "
        "in the order said: page_id and seq."
    )


class TurnCard(PageDoc):
    """A turn as every door gives it: as the export writes it (what the memory holds of it now, and its words
    as said and its marks while curation holds some out), what its reply used and cost, and for a turn whose
    reply was withheld what the person was told instead."""

    reply: ReplyCostDoc | None = Field(
        description="What the reply used and cost, for a turn written by this space's chat (GET .../turns/{id}/used/ "
        "gives the items); null for a turn given whole."
    )
    withheld_reply: str | None = Field(
        description="For a turn whose reply was withheld (reply_withheld), what the person was told instead; not "
        "memory. Null otherwise."
    )

    def payload(self) -> dict:
        return self.model_dump(mode="json")


class HeatPointCard(HeatPoint):
    """A point of a session's heat timeline as every door gives it (REST's timeline, the lab's overlay, the
    admin's chart): as the export writes it, with its session and what that session is about."""

    id: int
    session: int = Field(description="The session whose heat changed.")
    topic: str = Field(description="What its session is about: its summary's first words.")

    def payload(self) -> dict:
        return self.model_dump(mode="json")


class ErasedDoc(Document):
    """What an entry's erasure did: the entry erased for good, and the turns whose words changed."""

    id: int = Field(description="The entry erased.")
    erased: bool = Field(description="Always true: the words are gone (an erasure cannot be undone).")
    turns_changed: int = Field(description="Turns whose words changed (the space's and its forks').")


class TaughtDoc(Document):
    """What an ended import has left in the memory, as the memory stands now."""

    sessions: int = Field(description="The mid-term sessions its turns are in.")
    entries: int = Field(description="The active profile and knowledge entries drawn from its turns.")


class ImportJobCard(Document):
    """A history import as every door gives it (REST's imports, the lab's replay, the Python class's
    import_status): its progress, what it is doing, and once it has ended what it taught the memory."""

    id: int
    source: str = Field(description="Where the turns came from, e.g. 'LoCoMo conv-26' or the file's name.")
    total: int = Field(description="Turns and facts to store.")
    done: int = Field(description="Stored so far (a job taken over after a crash goes on from there).")
    skipped: int = Field(description="Turns and facts an earlier import had stored.")
    status: str = Field(description="queued, running, succeeded, failed or cancelled.")
    activity: str = Field(
        description="What it is doing: waiting (behind what), storing turns, or consolidating; empty once ended."
    )
    seconds_left: float | None = Field(
        description="While it runs, the seconds it may still take at the rate it has gone; else null."
    )
    taught: TaughtDoc | None = Field(description="Once it has ended, what it left in the memory; else null.")
    error: str
    created_at: datetime
    started_at: datetime | None = Field(description="When a worker first took it.")
    finished_at: datetime | None


class JobProgressDoc(Document):
    """How far a background job is: texts embedded, or probes compared, of how many."""

    done: int
    of: int


class BackgroundJobCard(Document):
    """A restore, comparison, check or erasure a worker does (services/background.py) as every door gives it:
    poll it until `status` is succeeded or failed; `result` is then what the work returned (the restore's
    counts, or the comparison). Meanwhile `progress` says how far it is."""

    id: int
    kind: str = Field(description="restore, comparison, check or erase.")
    status: str = Field(description="queued, running, succeeded, failed or cancelled.")
    progress: JobProgressDoc | None
    result: dict | None = Field(description="When succeeded: the counts, or the comparison.")
    error: str
    created_at: datetime
    finished_at: datetime | None
