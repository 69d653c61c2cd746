"""What a query finds, as every door gives it, defined once: one retrieved item (ItemDoc), a retrieval with
its sections, its token budget and what the budget cut (RetrievalDoc), what a stored reply used, read
from the memory as it is now (UsedDoc), and a reply made of the person's own words: a statement it quotes
(QuotedDoc) and the reply with the rule that read the question (AnswerDoc).

Each model builds its payload (`of`, from the engine's Retrieval and Item, without importing them) and
documents it: REST's retrieve, chat, inspect and "what it used" answers, MCP's retrieve_memory and the chat
page read the same payload, and the OpenAPI document's schema is these models' (interfaces/api/openapi.py),
as the export's is export_format.py's.
"""

from pydantic import BaseModel, ConfigDict, Field

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
    read_as: str = Field(description="The rule that read what the message asks (engine/intent.py's RULES).")

    @classmethod
    def of(cls, recall) -> "AnswerDoc":
        return cls.model_construct(
            text=recall.text, quoted=[QuotedDoc.of(said) for said in recall.quoted], read_as=recall.read_as
        )

    def payload(self) -> dict:
        return {**self.model_dump(mode="json"), "quoted": [said.payload() for said in self.quoted]}
