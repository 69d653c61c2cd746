"""The Python API for library users, in the spirit of the reference's `Memoryos` class.

One `MemoryOS` serves every user: the user and the assistant are arguments of each call.

    from memory_engine.interfaces.memoryos import MemoryOS

    memory = MemoryOS()
    memory.create_user("alice")
    memory.create_assistant("helper", persona="A friendly cooking assistant.")
    memory.add_memory(user_id="alice", assistant_id="helper",
                      user_input="I'm vegetarian.", agent_response="Noted!")
    reply = memory.get_response(user_id="alice", assistant_id="helper", query="Dinner ideas?")
    memory.get_user_profile(user_id="alice", assistant_id="helper")

What the class answers of an entry, a version, a turn and an import is the document every door gives
(memory_engine/documents.py: EntryCard, VersionCard, TurnCard, ImportJobCard, ErasedDoc), the JSON REST
and MCP answer with as a pydantic model: `entry.id`, `entry.value`, `entry.payload()`.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from memory_engine.documents import CoverageDoc, EntryCard, ErasedDoc, ImportJobCard, TurnCard, VersionCard
from memory_engine.errors import UnknownEntry
from memory_engine.models import (
    Assistant,
    ConsolidationRun,
    EntryVersion,
    Experiment,
    ImportJob,
    ImportUpload,
    LongTermEntry,
    MemorySpace,
    MemoryUser,
    Page,
)
from memory_engine.services import curation, spaces
from memory_engine.services.comparison import Probe, compare
from memory_engine.services.consolidation import ConsolidationRequest, run_consolidation
from memory_engine.services.conversation import Inspection, inspect, reply, search, turn_add
from memory_engine.services.dispatch import upload_import_start, upload_start
from memory_engine.services.imports import import_job_card
from memory_engine.services.lab import experiment_create
from memory_engine.services.restore import space_restore
from memory_engine.services.space_llm import deployment_llm
from memory_engine.services.spaces import assistant_create, space_get, user_create

if TYPE_CHECKING:  # what the class's answers are, named for the reader; the services build them
    from memory_engine.engine.generator import Response
    from memory_engine.engine.retriever import Retrieval
    from memory_engine.llm import LLM

ACTOR = "library"  # who the entries' history says changed them through this class


class MemoryOS:
    """The engine's entry points. `llm` overrides, for replies, the LLM each space uses (its own choice,
    else MEMORYOS_LLM_*).

    With `consolidate=True` (the default) each stored turn asks for consolidation: a Celery worker
    does it after the transaction commits, or this process does it at once when MEMORYOS_CONSOLIDATION
    is "inline". With False it is left to `consolidate()` (or the workers' periodic sweep).
    """

    def __init__(self, *, llm: LLM | None = None, consolidate: bool = True) -> None:
        self._llm = llm
        self.consolidate_after_add = consolidate

    @property
    def llm(self) -> LLM:
        return self._llm or deployment_llm()

    # --- Users and assistants -----------------------------------------------------------------------

    def create_user(self, user_id: str, display_name: str = "") -> MemoryUser:
        return user_create(user_id=user_id, display_name=display_name)

    def create_assistant(self, assistant_id: str, name: str = "", persona: str = "") -> Assistant:
        return assistant_create(assistant_id=assistant_id, name=name, persona=persona)

    def space(self, *, user_id: str, assistant_id: str) -> MemorySpace:
        return space_get(user_id=user_id, assistant_id=assistant_id)

    # --- The reference's calls ----------------------------------------------------------------------

    def add_memory(
        self,
        *,
        user_id: str,
        assistant_id: str,
        user_input: str,
        agent_response: str,
        timestamp: datetime | None = None,
        meta: dict | None = None,
    ) -> TurnCard:
        """Store one QA turn in short-term memory (then consolidate, if enabled). Returns the turn as the memory
        holds it on return (read again: an inline consolidation may have moved it, or a forget it asked for
        marked it).

        `meta` is kept with the page as given (a JSON object), e.g. ids from the caller's own system.
        """
        space = self.space(user_id=user_id, assistant_id=assistant_id)
        page = turn_add(
            space=space,
            user_input=user_input,
            agent_response=agent_response,
            timestamp=timestamp,
            meta=meta,
            consolidate=self.consolidate_after_add,
        )
        return _turn(spaces.row_of(space, Page, page.pk))

    def get_turn(self, *, user_id: str, assistant_id: str, page_id: int) -> TurnCard:
        """A stored turn as the memory holds it now: its words, and while curation holds some out, its words
        as said and its marks. Raises UnknownEntry for a turn not in this memory."""
        return _turn(self._page(user_id, assistant_id, page_id))

    def retrieve(self, *, user_id: str, assistant_id: str, query: str, **options) -> Retrieval:
        """What every tier holds for the query, with scores and provenance (see services.conversation.search)."""
        return search(self.space(user_id=user_id, assistant_id=assistant_id), query, **options)

    def inspect(self, *, user_id: str, assistant_id: str, query: str, **options) -> Inspection:
        """What a chat turn would retrieve and send for `query`, storing nothing (see services/conversation.py)."""
        space = self.space(user_id=user_id, assistant_id=assistant_id)
        return inspect(space, query, compact=self._llm.weak if self._llm else None, **options)

    def fork(
        self, *, user_id: str, assistant_id: str, name: str, parameters: dict, export: dict | None = None
    ) -> Experiment:
        """An experiment: the space's turns replayed into a shadow space with other `parameters`, or a
        space's `export` restored there (see services/lab.py); the space itself is only read."""
        source = self.space(user_id=user_id, assistant_id=assistant_id)
        return experiment_create(source=source, name=name, parameters=parameters, export=export)

    def upload_file(self, *, user_id: str, assistant_id: str, path: str | Path) -> ImportUpload:
        """A file from elsewhere (a ChatGPT or Claude export, chat messages, memories, a transcript: see
        memory_engine/formats) kept for import, checked whole (by a worker, waited for here): `.format`,
        `.turns`, `.facts` and `.conversations` (in the file's order, `.order_by("place")`) say what it holds.
        Raises MemoryInputError (a ValueError) saying where a file differs from its format."""
        space = self.space(user_id=user_id, assistant_id=assistant_id)
        with open(path, "rb") as file:
            chunks = iter(lambda: file.read(1 << 16), b"")
            return upload_start(space=space, chunks=chunks, name=Path(path).name, wait=True)

    def import_upload(self, upload: ImportUpload, *, conversations: list[str] | None = None) -> ImportJobCard:
        """Import the conversations chosen from an upload (by key; all when None) and its memories, turn by
        turn with their own times; the job is finished on return when consolidation is inline, else
        `import_status` follows it."""
        return _import(upload_import_start(upload=upload, chosen=conversations))

    def import_status(self, *, user_id: str, assistant_id: str, job_id: int) -> ImportJobCard:
        """An import of this memory as it stands: its progress, what it is doing, what it taught once ended.
        Raises UnknownEntry for an import not of this memory."""
        job = spaces.row_of(self.space(user_id=user_id, assistant_id=assistant_id), ImportJob, job_id)
        if job is None:
            raise UnknownEntry(f"no import {job_id} in this memory")
        return _import(job)

    def restore(self, *, user_id: str, assistant_id: str, export: dict) -> dict[str, int]:
        """Fill the (empty) space with a space's export: turns, tiers, entries and their history,
        re-embedded (see services/restore.py), here in the calling process (the REST door has a worker do it:
        services/background.py)."""
        return space_restore(space=self.space(user_id=user_id, assistant_id=assistant_id), document=export)

    def compare(self, experiment: Experiment, probes: list[Probe], *, k: int = 10) -> dict:
        """The experiment and its source side by side, and what each ranks for the probes (see
        services/comparison.py), here in the calling process."""
        return compare(experiment.source, experiment.space, probes, k=k)

    def get_response(
        self, *, user_id: str, assistant_id: str, query: str, timestamp: datetime | None = None
    ) -> Response:
        """Answer the query from memory and store the exchange as a new turn.

        Raises LLMError when the LLM gives no valid answer; then nothing is stored.
        """
        space = self.space(user_id=user_id, assistant_id=assistant_id)
        return reply(
            space=space,
            query=query,
            llm=self._llm,
            timestamp=timestamp,
            consolidate=self.consolidate_after_add,
        )

    def get_user_profile(self, *, user_id: str, assistant_id: str) -> dict[str, str]:
        return curation.user_profile(self.space(user_id=user_id, assistant_id=assistant_id))

    def get_knowledge(
        self, *, user_id: str, assistant_id: str, kind: str = LongTermEntry.Kind.USER_KNOWLEDGE
    ) -> list[EntryCard]:
        """Active user_knowledge or assistant_knowledge entries, oldest first."""
        space = self.space(user_id=user_id, assistant_id=assistant_id)
        return [_entry_card(entry) for entry in curation.knowledge_entries(space, kind)]

    # --- Curation: what the memory holds, changed by hand ------------------------------------------

    def _entry(self, user_id: str, assistant_id: str, entry_id: int) -> LongTermEntry:
        space = self.space(user_id=user_id, assistant_id=assistant_id)
        entry = curation.entry_of(space, entry_id, tuple(LongTermEntry.Kind.values))
        if entry is None:
            raise UnknownEntry(f"no entry {entry_id} in this memory")
        return entry

    def get_entry(self, *, user_id: str, assistant_id: str, entry_id: int) -> EntryCard:
        """An entry of any kind and status, and what its forget or edit holds out of the turns (`covers`).
        Raises UnknownEntry."""
        return _entry_card(self._entry(user_id, assistant_id, entry_id))

    def entry_history(self, *, user_id: str, assistant_id: str, entry_id: int) -> list[VersionCard]:
        """Every version of the entry, oldest first, each with its change word by word (`changes`)."""
        entry = self._entry(user_id, assistant_id, entry_id)
        return [VersionCard.model_validate(curation.version_card(v)) for v in curation.versions(entry)]

    def edit_entry(self, *, user_id: str, assistant_id: str, entry_id: int, value: str) -> EntryCard:
        """Change an active entry's value: replies and prompts use it from then on, and the statements it was
        drawn from stand corrected (`covers` of entry_coverage). Raises UnknownEntry, EntryNotActive, or
        MemoryInputError for a value refused."""
        entry = self._entry(user_id, assistant_id, entry_id)
        return _entry_card(curation.entry_edit(entry=entry, value=value, actor=ACTOR, cause=EntryVersion.Cause.LIBRARY))

    def delete_entry(self, *, user_id: str, assistant_id: str, entry_id: int) -> EntryCard:
        """Forget an entry, and the statements of the turns it was drawn from (the turns stay, marked): no
        reply or prompt uses them until it is reverted. Its history stays. Safe to repeat. Returns the entry
        as it is now, with what went with it (`covers`)."""
        entry = self._entry(user_id, assistant_id, entry_id)
        return _entry_card(curation.entry_delete(entry=entry, actor=ACTOR, cause=EntryVersion.Cause.LIBRARY))

    def revert_entry(
        self, *, user_id: str, assistant_id: str, entry_id: int, version_id: int | None = None
    ) -> EntryCard:
        """Give the entry the value it had after one of its versions (by default its last that left a value:
        undo a delete), active, and its statements back."""
        entry = self._entry(user_id, assistant_id, entry_id)
        version = curation.version_to_revert_to(entry, version_id)
        if version is None:
            raise UnknownEntry(f"no version {version_id} of entry {entry_id}")
        reverted = curation.entry_revert(entry=entry, version=version, actor=ACTOR, cause=EntryVersion.Cause.LIBRARY)
        return _entry_card(reverted)

    def erase_entry(self, *, user_id: str, assistant_id: str, entry_id: int) -> ErasedDoc:
        """Erase the entry, its history and the statements it was drawn from, wherever they are: turns,
        replies that quoted them, other entries, summaries, index files, imports, forks. Irreversible.
        Returns what it changed (`turns_changed`)."""
        return ErasedDoc.model_validate(curation.entry_erase(entry=self._entry(user_id, assistant_id, entry_id)))

    def erase_turn(
        self, *, user_id: str, assistant_id: str, page_id: int, sentence: str | None = None, index: int | None = None
    ) -> int:
        """Erase a turn's every word (it stays as "(erased)"), or one whole sentence of it (as written, or by
        its index), wherever the words are (engine/erasure.py), here and now. Irreversible. Raises
        UnknownEntry for a turn not in this memory, ValueError for a sentence that is not a whole sentence of
        the turn. `erase_preview` says first what it would take."""
        page = self._page(user_id, assistant_id, page_id)
        if sentence is None and index is None:
            return curation.erase_turn(page)
        return curation.erase_statement(page, sentence, index)

    def erase_preview(
        self, *, user_id: str, assistant_id: str, page_id: int, sentence: str | None = None, index: int | None = None
    ) -> dict:
        """What erase_turn with the same arguments would take out of the memory, changing nothing: the turn's
        sentences, the words erased, the turns and entries it changes."""
        page = self._page(user_id, assistant_id, page_id)
        return curation.erase_preview(page=page, sentence=sentence, index=index)

    def _page(self, user_id: str, assistant_id: str, page_id: int) -> Page:
        page = spaces.row_of(self.space(user_id=user_id, assistant_id=assistant_id), Page, page_id)
        if page is None:
            raise UnknownEntry(f"no turn {page_id} in this memory")
        return page

    def entry_coverage(self, *, user_id: str, assistant_id: str, entry_id: int) -> CoverageDoc:
        """What the entry's delete or edit holds out of the turns: statements, turns and entries."""
        return CoverageDoc.model_validate(curation.coverage(self._entry(user_id, assistant_id, entry_id)).as_dict())

    def consolidate(self, *, user_id: str, assistant_id: str) -> ConsolidationRun | None:
        """Run the tier moves that are due, here and now (retrying a failed promotion at once), and
        return the run on record; None when nothing was due or another worker holds the space.
        Safe to repeat."""
        _, run = run_consolidation(
            ConsolidationRequest(self.space(user_id=user_id, assistant_id=assistant_id).pk, retry_now=True)
        )
        return run

    def force_mid_term_analysis(self, *, user_id: str, assistant_id: str) -> ConsolidationRun | None:
        """Promote every session with unanalysed pages to long-term memory, hot or not, here and now."""
        space = self.space(user_id=user_id, assistant_id=assistant_id)
        _, run = run_consolidation(ConsolidationRequest(space.pk, kind=ConsolidationRun.Kind.ANALYSIS))
        return run


# Each answer is the door's document (documents.py), validated from the payload REST and MCP give.


def _entry_card(entry: LongTermEntry) -> EntryCard:
    return EntryCard.model_validate(curation.entry_card(entry))


def _turn(page: Page) -> TurnCard:
    return TurnCard.model_validate(curation.page_card(page))


def _import(job: ImportJob) -> ImportJobCard:
    return ImportJobCard.model_validate(import_job_card(job))
