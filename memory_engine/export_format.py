"""The export document, defined once: what services/export.py writes, what services/restore.py accepts, what
the API's OpenAPI document says its export and restore carry, and the JSON Schema published as
docs/export.schema.json (`manage.py export_schema` writes it; a test keeps it equal to this module).

A space's document holds its parameters, its pages of every tier, its mid-term sessions with their heat
timeline, and its long-term entries with their history and the pages they came from; ids are the
export's own, and link pages to sessions and entries to pages. Vectors are left out: they are derived
from the text, and a restore makes them again. A user's document holds every space of the user.

Reading a document (`parse_space`) checks every value with the one validation layer (memory_engine.inputs),
then the links between ids; the first problem is raised as the error the checks raise, prefixed with
where it is ("pages[3].timestamp: ..."): BadExport, InputTooLarge (413 over HTTP), InvalidParameter.
"""

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PlainValidator,
    TypeAdapter,
    ValidationError,
    WithJsonSchema,
    model_validator,
)

from memory_engine import inputs
from memory_engine.errors import InputTooLarge, InvalidParameter, MemoryInputError
from memory_engine.models import EntryVersion, HeatEvent, LongTermEntry, MidTermSession, Page, StatementMark

EXPORT_FORMAT = "memoryos-export-1"
MAX_SPACES = 1000
MAX_PAGES = 5000
MAX_SESSIONS = 5000
MAX_ENTRIES = 5000
MAX_VERSIONS = 50_000  # in all
MAX_POINTS = 200_000  # heat timeline points in all
MAX_KEYWORDS = 100
KEYWORD_CHARS = 200
ACTOR_CHARS = 200


# The choice sets, as lists, for the OpenAPI document's enum names (settings.SPECTACULAR_SETTINGS).
ENTRY_STATUSES = list(LongTermEntry.Status.values)
SESSION_STATUSES = list(MidTermSession.Status.values)
ENTRY_KINDS = list(LongTermEntry.Kind.values)
VERSION_CAUSES = list(EntryVersion.Cause.values)
HEAT_CAUSES = list(HeatEvent.Cause.values)


class BadExport(MemoryInputError):
    """An export document that cannot be restored; the message says where."""


# --- Values, each checked by memory_engine.inputs ----------------------------------------------------


def _required_time(value: object) -> datetime:
    when = inputs.timestamp(value)
    if when is None:
        raise BadExport("a date and time is required")
    return when


def _iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


_TIME_SCHEMA = {"type": "string", "format": "date-time"}
Time = Annotated[
    datetime, PlainValidator(_required_time), PlainSerializer(_iso, when_used="json"), WithJsonSchema(_TIME_SCHEMA)
]
MaybeTime = Annotated[
    datetime | None,
    PlainValidator(inputs.timestamp),
    PlainSerializer(_iso, when_used="json"),
    WithJsonSchema({"anyOf": [_TIME_SCHEMA, {"type": "null"}]}),
]
Text = Annotated[str, BeforeValidator(lambda value: inputs.text(value, "the text"))]
Actor = Annotated[str, BeforeValidator(lambda value: inputs.text(value, "the actor", limit=ACTOR_CHARS))]
Keyword = Annotated[str, BeforeValidator(lambda value: inputs.text(value, "a keyword", limit=KEYWORD_CHARS))]
EntryKey = Annotated[str, BeforeValidator(inputs.entry_key)]
EntryValue = Annotated[str, BeforeValidator(inputs.entry_value)]
Meta = Annotated[dict[str, Any], PlainValidator(inputs.meta), WithJsonSchema({"type": "object"})]
Parameters = Annotated[
    dict[str, Any],
    PlainValidator(lambda value: inputs.space_parameters(value if isinstance(value, dict) else {None: value})),
    WithJsonSchema({"type": "object", "description": "The space's parameters, as the API's SpaceParameters."}),
]
Whole = Annotated[int, Field(ge=0, le=2**31 - 1)]  # a count
Id = Annotated[int, Field(description="An id of the export, which links its parts; not a database id.")]


def _at_most(limit: int, what: str):
    """A list's bound, checked before its items (a huge list is refused as too large, not item by item)."""

    def check(value: object) -> object:
        if isinstance(value, list) and len(value) > limit:
            raise InputTooLarge(f"at most {limit} {what}, not {len(value)}")
        return value

    return BeforeValidator(check)


Keywords = Annotated[list[Keyword], _at_most(MAX_KEYWORDS, "keywords"), Field(max_length=MAX_KEYWORDS)]
PageIds = Annotated[list[Id], _at_most(MAX_PAGES, "page ids"), Field(max_length=MAX_PAGES)]


class ExportPart(BaseModel):
    # Numbers and flags as JSON has them: "3" is no number and 1 is no flag. Unknown keys are ignored.
    model_config = ConfigDict(strict=True, extra="ignore")


# --- The parts ----------------------------------------------------------------------------------------


class HeatPoint(ExportPart):
    """A session's heat at one moment, and what changed it."""

    at: Time
    cause: Literal[tuple(HEAT_CAUSES)]
    heat: float = Field(allow_inf_nan=False)
    n_visit: Whole
    l_interaction: Whole = 0
    recency: float = Field(allow_inf_nan=False)
    turn: Whole | None = None  # the turn (page seq) that made it; absent from exports made before it was kept
    turn_at: Time | None = None  # that turn's time, the conversation's own


class SessionDoc(ExportPart):
    """A mid-term session: its summary, heat and the visits that made it."""

    id: Id
    status: Literal[tuple(SESSION_STATUSES)]
    summary: Text = ""
    keywords: Keywords = []
    n_visit: Whole
    l_interaction: Whole
    heat: float = Field(allow_inf_nan=False)
    total_visits: Whole
    last_visit_at: Time
    created_at: Time
    promoted_at: MaybeTime = None
    evicted_at: MaybeTime = None
    heat_timeline: Annotated[list[HeatPoint], _at_most(MAX_POINTS, "heat points")] = []


class SaidDoc(ExportPart):
    """A turn's words as they were said, while some are forgotten or corrected (engine/statement_marks.py)."""

    user_input: Text = ""
    agent_response: Text = ""


class MarkDoc(ExportPart):
    """A statement of a turn the memory no longer holds as said: forgotten with an entry, or corrected."""

    kind: Literal[tuple(StatementMark.Kind.values)]
    field: Literal["user_input", "agent_response"]
    sentence: Text
    replacement: Text = ""
    entry_id: Id = Field(description="The entry of the export whose delete or edit held it out.")
    at: Time


class PageDoc(ExportPart):
    """A turn: what the memory holds of it now (user_input, agent_response), its tier, the session it
    belongs to; and, while some of its statements are forgotten or corrected, its words as said (`said`)
    and what holds them out (`marks`)."""

    id: Id
    seq: Annotated[int, Field(ge=1, le=2**31 - 1)]
    tier: Literal[tuple(Page.Tier.values)]
    session_id: Id | None = Field(None, description="None for a short-term page; else a session of the export.")
    user_input: Text = ""
    agent_response: Text = ""
    reply_withheld: bool = False
    reply_source: Literal[tuple(Page.ReplySource.values)] = Page.ReplySource.GIVEN.value
    timestamp: Time
    meta: Meta = {}
    keywords: Keywords = []
    thread_summary: Text = ""
    continues_previous: bool | None = None
    analyzed: bool = False
    said: SaidDoc | None = None
    marks: Annotated[list[MarkDoc], _at_most(MAX_VERSIONS, "marks")] = []

    @model_validator(mode="after")
    def _whole_turn(self):
        inputs.turn_texts(self.user_input, self.agent_response)
        if self.reply_withheld and self.agent_response:
            raise BadExport("a turn whose reply is withheld keeps no agent_response")
        if (self.tier == Page.Tier.SHORT) != (self.session_id is None):
            raise BadExport("session_id: a short-term page has none; any other names a session of the export")
        return self


class VersionDoc(ExportPart):
    """One change to a long-term entry: its value before and after, why, by whom, from which turns."""

    id: Id | None = None
    before: Text | None = None
    after: Text | None = None
    status_after: Literal[tuple(ENTRY_STATUSES)]
    cause: Literal[tuple(VERSION_CAUSES)]
    actor: Actor
    at: Time
    source_page_ids: PageIds = []
    with_entry: Id | None = Field(None, description="The entry of the export whose forget or edit this went with.")


class EntryFields(ExportPart):
    """A long-term entry (a profile value or a fact) and where it came from: what an export (EntryDoc) and
    every door (documents.EntryCard) say of it."""

    id: Id
    kind: Literal[tuple(ENTRY_KINDS)]
    key: EntryKey = ""
    value: EntryValue
    status: Literal[tuple(ENTRY_STATUSES)]
    superseded_by: Id | None = None
    hits: Whole = 0
    last_hit_at: MaybeTime = None
    created_at: Time
    updated_at: Time
    source_page_ids: PageIds = []


class EntryDoc(EntryFields):
    """A long-term entry (a profile value or a fact), where it came from and, in an export, its history."""

    history: Annotated[list[VersionDoc], _at_most(MAX_VERSIONS, "versions")] = []


class AssistantDoc(ExportPart):
    id: str
    name: str = ""
    persona: str = ""


class SpaceExport(ExportPart):
    """One space: a user's memory with one assistant."""

    assistant: AssistantDoc | None = None
    parameters: Parameters = {}
    embedding_model: str = ""
    created_at: MaybeTime = None
    pages: Annotated[list[PageDoc], _at_most(MAX_PAGES, "pages"), Field(max_length=MAX_PAGES)] = []
    sessions: Annotated[list[SessionDoc], _at_most(MAX_SESSIONS, "sessions"), Field(max_length=MAX_SESSIONS)] = []
    entries: Annotated[list[EntryDoc], _at_most(MAX_ENTRIES, "entries"), Field(max_length=MAX_ENTRIES)] = []

    @model_validator(mode="after")
    def _links(self):
        """Ids come once, pages in increasing seq, and every link names a part of the export."""
        sessions = _unique(self.sessions, "sessions")
        pages = _unique(self.pages, "pages")
        entries = _unique(self.entries, "entries")
        if sum(len(s.heat_timeline) for s in self.sessions) > MAX_POINTS:
            raise InputTooLarge(f"sessions: at most {MAX_POINTS} heat timeline points in all")
        if sum(len(e.history) for e in self.entries) > MAX_VERSIONS:
            raise InputTooLarge(f"entries: at most {MAX_VERSIONS} versions in all")
        for i, page in enumerate(self.pages):
            if i and page.seq <= self.pages[i - 1].seq:
                raise BadExport(f"pages[{i}].seq: pages must come in increasing seq")
            _names(page.session_id, sessions, f"pages[{i}].session_id")
            for j, mark in enumerate(page.marks):
                _names(mark.entry_id, entries, f"pages[{i}].marks[{j}].entry_id")
            if page.marks and page.said is None:
                raise BadExport(f"pages[{i}].said: a turn with marks keeps its words as said")
        for i, entry in enumerate(self.entries):
            _names(entry.superseded_by, entries, f"entries[{i}].superseded_by")
            for page_id in entry.source_page_ids:
                _names(page_id, pages, f"entries[{i}].source_page_ids")
            for j, version in enumerate(entry.history):
                for page_id in version.source_page_ids:
                    _names(page_id, pages, f"entries[{i}].history[{j}].source_page_ids")
                _names(version.with_entry, entries, f"entries[{i}].history[{j}].with_entry")
        return self


def _unique(parts: list, where: str) -> set[int]:
    seen: set[int] = set()
    for i, part in enumerate(parts):
        if part.id in seen:
            raise BadExport(f"{where}[{i}].id: id {part.id} comes twice")
        seen.add(part.id)
    return seen


def _names(value: int | None, known: set[int], where: str) -> None:
    if value is not None and value not in known:
        raise BadExport(f"{where}: names {value}, which is not in the export")


class UserDoc(ExportPart):
    id: str
    display_name: str = ""
    created_at: MaybeTime = None


class UserExport(ExportPart):
    """Every space of one memory user."""

    format: Literal[EXPORT_FORMAT]
    user: UserDoc
    spaces: Annotated[list[SpaceExport], _at_most(MAX_SPACES, "spaces")]


# --- Reading and publishing ---------------------------------------------------------------------------


def _where(location: tuple) -> str:
    where = ""
    for part in location:
        where += f"[{part}]" if isinstance(part, int) else (f".{part}" if where else str(part))
    return where


def _refusal(error: ValidationError) -> MemoryInputError:
    """The first problem of a document, as the check that found it raised it, saying where."""
    first = error.errors(include_url=False)[0]
    where = _where(first["loc"])
    cause = (first.get("ctx") or {}).get("error")
    if isinstance(cause, InvalidParameter):
        return cause  # it names its parameter
    if isinstance(cause, MemoryInputError):
        message = str(cause)
        return type(cause)(f"{where}: {message}" if where else message)
    return BadExport(f"{where or 'the export'}: {first['msg']}")


def space_document(document: object, assistant_id: str) -> dict:
    """The space's part of a document: a space's document itself, or a user's document (format
    memoryos-export-1) holding one space, or several among which the one with `assistant_id`."""
    if not isinstance(document, dict):
        raise BadExport("the export: must be an object")
    if "spaces" not in document:
        return document
    if document.get("format") != EXPORT_FORMAT:
        raise BadExport(f"the export: format must be {EXPORT_FORMAT!r}")
    spaces = document["spaces"]
    if not isinstance(spaces, list):
        raise BadExport("spaces: must be a list")
    if len(spaces) > MAX_SPACES:
        raise InputTooLarge(f"spaces: at most {MAX_SPACES}, not {len(spaces)}")
    if len(spaces) != 1:
        spaces = [s for s in spaces if isinstance(s, dict) and (s.get("assistant") or {}).get("id") == assistant_id]
    if len(spaces) != 1 or not isinstance(spaces[0], dict):
        raise BadExport(f"spaces: hold no single space with the assistant {assistant_id!r}")
    return spaces[0]


def parse_space(document: object, assistant_id: str) -> SpaceExport:
    """A document's space (space_document picks it), every value checked and every link resolved.
    Raises BadExport, InputTooLarge or InvalidParameter saying where; stores nothing."""
    try:
        return SpaceExport.model_validate(space_document(document, assistant_id))
    except ValidationError as error:
        raise _refusal(error) from None


def json_schema() -> dict:
    """The JSON Schema of what a restore accepts: a user's export or one space's (docs/export.schema.json)."""
    schema = TypeAdapter(UserExport | SpaceExport).json_schema(mode="serialization")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": f"MemoryOS Playground export ({EXPORT_FORMAT})",
        "description": __doc__.split("\n\n")[1].replace("\n", " "),
        **schema,
    }
