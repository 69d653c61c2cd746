"""What the owner or an admin changes by hand: profile and knowledge entries added, edited, deleted and
reverted (each change a version in the entry's history), pages and sessions corrected. A delete or an
edit changes the turns the entry was drawn from too (engine/statement_marks.py): `coverage` says what it covered,
and a turn's card its marks. Erasing (engine/erasure.py) removes the words for good."""

import difflib
from datetime import datetime

from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from memory_engine import inputs
from memory_engine.documents import CoverageDoc, ErasedDoc, ReplyCostDoc
from memory_engine.engine import erasure, long_term, mid_term
from memory_engine.engine import statement_marks as marks
from memory_engine.engine.erasure import entry_texts, erasure_plan, turn_sentences, turn_texts
from memory_engine.engine.generator import fallback_reply
from memory_engine.engine.long_term import knowledge_add, knowledge_enforce_capacity, profile_set, record_version
from memory_engine.engine.statement_marks import COVERAGE_PREFETCH, mark_entry
from memory_engine.errors import EntryErased, EntryHeldByAnother, EntryNotActive, InvalidEntry, UnknownEntry
from memory_engine.models import EntryVersion, LongTermEntry, MemorySpace, Page
from memory_engine.services import export
from memory_engine.services.usage import reply_costs, turns_used_read
from memory_engine.store.embeddings import get_embedder, to_bytes
from memory_engine.store.writes import space_write

__all__ = [
    "coverage",
    "entries",
    "entry_card",
    "entry_delete",
    "entry_edit",
    "entry_erase",
    "entry_cards",
    "entry_of",
    "entry_revert",
    "erase_entry",
    "erase_statement",
    "erase_turn",
    "knowledge_entries",
    "knowledge_entry_add",
    "page_edit",
    "page_words",
    "profile_entry_add",
    "session_edit",
    "summary_text",
    "user_profile",
    "version_to_revert_to",
    "version_cards",
    "versions",
]

Kind, Status, Cause = LongTermEntry.Kind, LongTermEntry.Status, EntryVersion.Cause


def profile_entry_add(*, space: MemorySpace, attribute: str, value: str, actor: str, cause: str = Cause.LIBRARY):
    """Record a profile value by hand, as profile_set does for an extraction (no source pages).
    Raises MemoryInputError (a ValueError) for a value or attribute `inputs` refuses, or an empty
    attribute. Repeating it records only a merge note."""
    attribute, value = inputs.entry_key(attribute, "attribute"), inputs.entry_value(value)
    if not attribute:
        raise InvalidEntry("the attribute is empty")
    with space_write(space.pk) as write:
        return profile_set(
            write.space,
            attribute=attribute,
            value=value,
            pages=[],
            cause=cause,
            actor=actor,
            now=timezone.now(),
        )


def knowledge_entry_add(
    *,
    space: MemorySpace,
    kind: str,
    topic: str,
    fact: str,
    actor: str,
    cause: str = Cause.LIBRARY,
    at: datetime | None = None,
) -> LongTermEntry:
    """Add a user or assistant fact by hand: merged into a near-duplicate or new (nothing superseded),
    visible to retrieval at once; the capacity is enforced. Raises MemoryInputError (a ValueError) for
    a fact or topic `inputs` refuses or a kind that is not knowledge. Repeating it records only a merge
    note. `at`: when it was learnt, for its history (an imported fact's own time); now by default."""
    if kind not in (Kind.USER_KNOWLEDGE, Kind.ASSISTANT_KNOWLEDGE):
        raise InvalidEntry(f"{kind!r} is not a kind of knowledge")
    fact, topic = inputs.entry_value(fact, "fact"), inputs.entry_key(topic, "topic")
    vector = get_embedder().encode_one(fact)
    now = at or timezone.now()
    with space_write(space.pk) as write:
        entry = knowledge_add(
            write.space,
            kind=kind,
            topic=topic or fact[:200],
            fact=fact,
            vector=vector,
            pages=[],
            cause=cause,
            actor=actor,
            now=now,
            version=write.version,
            supersede=False,
        )
        knowledge_enforce_capacity(write.space, kind=kind, actor=actor, now=now, version=write.version)
    return entry


def entry_edit(
    *, entry: LongTermEntry, value: str, actor: str, cause: str = Cause.LIBRARY, asked_in: Page | None = None
) -> LongTermEntry:
    """Change an active entry's value, re-embed a knowledge entry, and record the version.

    Retrieval sees the change at once (the entry's vector version moves), and the statements it was drawn
    from stand corrected to the new value in their turns (curation.mark_entry). Editing to the same value
    records nothing. Raises MemoryInputError (a ValueError) for a value `inputs` refuses, and
    EntryNotActive for an entry that is not active, also when it was deleted after the caller read it.
    `asked_in`: as entry_delete's.
    """
    value = inputs.entry_value(value)
    _check_active(entry)
    vector = None if entry.kind == Kind.PROFILE else get_embedder().encode_one(value)
    with space_write(entry.space_id) as write:
        _fresh(entry)
        _check_active(entry)  # as it is now, under the lock: not as the caller read it
        if entry.value == value:
            return entry
        before = entry.value
        entry.value = value
        if vector is not None:
            entry.embedding = to_bytes(vector)
            write.stamp(entry)
        entry.save()
        pages = [asked_in] if asked_in is not None else []
        record_version(entry, before=before, after=value, cause=cause, actor=actor, now=timezone.now(), pages=pages)
        mark_entry(entry, write=write, actor=actor, cause=cause)
    return entry


def _fresh(entry: LongTermEntry) -> None:
    """Read the entry again, under the space's lock: EntryErased when another request erased it meanwhile."""
    try:
        entry.refresh_from_db()
    except LongTermEntry.DoesNotExist:
        raise EntryErased(f"entry {entry.pk} was erased a moment ago") from None


def _check_active(entry: LongTermEntry) -> None:
    if entry.status != Status.ACTIVE:
        raise EntryNotActive(f"entry {entry.pk} is {entry.status}, not active: revert it from its history first")


def entry_revert(*, entry: LongTermEntry, version: EntryVersion, actor: str, cause: str = Cause.ADMIN) -> LongTermEntry:
    """Give the entry the value it had after `version` again, active (an entry that was deleted,
    superseded or evicted comes back), re-embedding a knowledge entry; recorded as a new version, and
    seen by retrieval at once. Reverting to the value it has, while active, records nothing. Raises
    UnknownEntry for a version of another entry, InvalidEntry for one that left no value (a deletion), and
    EntryHeldByAnother for a profile attribute that another active entry now holds."""
    if version.entry_id != entry.pk:
        raise UnknownEntry(f"version {version.pk} is not a version of entry {entry.pk}")
    if version.after is None:
        raise InvalidEntry(f"version {version.pk} left no value to revert to")
    value = version.after
    vector = None if entry.kind == Kind.PROFILE else get_embedder().encode_one(value)
    with space_write(entry.space_id) as write:
        _fresh(entry)
        if entry.value == value and entry.status == Status.ACTIVE:
            return entry
        rival = LongTermEntry.objects.filter(space=write.space, kind=Kind.PROFILE, key=entry.key, status=Status.ACTIVE)
        if entry.kind == Kind.PROFILE and rival.exclude(pk=entry.pk).exists():
            raise EntryHeldByAnother(f"another entry now holds the attribute {entry.key!r}: edit that one instead")
        before = entry.value if entry.status == Status.ACTIVE else None
        entry.value, entry.status, entry.superseded_by = value, Status.ACTIVE, None
        if vector is not None:
            entry.embedding = to_bytes(vector)
        write.stamp(entry)
        entry.save()
        record_version(entry, before=before, after=value, cause=cause, actor=actor, now=timezone.now())
        mark_entry(entry, write=write, actor=actor, cause=cause)
    return entry


def version_to_revert_to(entry: LongTermEntry, version_id: int | None = None) -> EntryVersion | None:
    """The entry's version `version_id` if it left a value, or by default its last that did (what undoes a
    delete); None when there is none."""
    versions = entry.versions.exclude(after=None).order_by("-at", "-pk")
    if version_id is not None:
        if not 0 < version_id < 2**63:
            return None
        versions = versions.filter(pk=version_id)
    return versions.first()


def entry_delete(
    *, entry: LongTermEntry, actor: str, cause: str = Cause.LIBRARY, asked_in: Page | None = None
) -> LongTermEntry:
    """Mark an entry deleted (its history stays) and drop it from retrieval, with the statements it was
    drawn from (curation.mark_entry): no reply or prompt uses them again until it is reverted. `asked_in`:
    the turn that asked for it in the conversation (services/spoken_curation.py), named by the deletion's
    version, so that what it repeated of the entry's statements goes too. Safe to repeat."""
    with space_write(entry.space_id) as write:
        _fresh(entry)
        if entry.status == Status.DELETED:
            return entry
        entry.status = Status.DELETED
        write.stamp(entry)
        entry.save(update_fields=["status", "vector_version", "updated_at"])
        pages = [asked_in] if asked_in is not None else []
        record_version(entry, before=entry.value, after=None, cause=cause, actor=actor, now=timezone.now(), pages=pages)
        mark_entry(entry, write=write, actor=actor, cause=cause)
    return entry


def entry_of(space: MemorySpace, entry_id: int, kinds: tuple[str, ...]) -> LongTermEntry | None:
    """The space's entry with this id, if it is of one of the kinds (whatever its status); else None."""
    if not 0 < entry_id < 2**63:  # beyond any database's ids (and beyond what SQLite can even compare)
        return None
    return LongTermEntry.objects.filter(space=space, pk=entry_id, kind__in=kinds).defer("embedding").first()


def entry_card(entry: LongTermEntry) -> dict:
    """An entry as every door gives it (documents.EntryCard: REST and MCP): its fields and provenance
    as the export writes them, without the history, and what its forget or edit holds out of the turns."""
    covers = CoverageDoc.model_construct(**coverage(entry).as_dict())
    return export.entry_card(entry, covers=covers).payload()


def page_card(page: Page) -> dict:
    """A turn as every door gives it (documents.TurnCard: REST, MCP): as the export writes it (what the memory holds
    of it now, and its words as said and its marks while curation holds some out), what its reply used
    and cost (`reply`: usage.reply_costs, None for a turn given whole), and for a turn whose reply was
    withheld what the person was told instead (`withheld_reply`, generator.fallback_reply: not memory, so
    not in the export), so that the chat page reads it after a reload as it did live."""
    withheld = fallback_reply(page.user_input) if page.reply_withheld else None
    costs = reply_costs(page)
    reply = None if costs is None else ReplyCostDoc.model_construct(**costs)
    return export.turn_card(page, reply=reply, withheld_reply=withheld).payload()


def entry_cards(entries) -> list[dict]:
    """Entries as entry_card gives them."""
    return [entry_card(entry) for entry in entries]


def page_cards(pages) -> list[dict]:
    """Turns as page_card gives them, the turns their replies used read in one query for them all."""
    pages = list(pages)
    turns_used_read(getattr(page, "reply_record", None) for page in pages)
    return [page_card(page) for page in pages]


def word_changes(before: str | None, after: str | None) -> list[list[str]]:
    """An entry's change from one version to the next, word by word: [kind, words] runs, in order: "same",
    "del" (only in `before`) or "ins" (only in `after`). Pure."""
    old, new = (before or "").split(), (after or "").split()
    runs = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_opcodes():
        if op == "equal":
            runs.append(["same", " ".join(old[i1:i2])])
        if op in ("delete", "replace"):
            runs.append(["del", " ".join(old[i1:i2])])
        if op in ("insert", "replace"):
            runs.append(["ins", " ".join(new[j1:j2])])
    return runs


def version_card(version: EntryVersion) -> dict:
    """A version of an entry as every door gives it (documents.VersionCard: REST and MCP): as the export
    writes it, and the change word by word (`changes`: word_changes)."""
    return export.version_card(version, changes=word_changes(version.before, version.after)).payload()


def version_cards(versions) -> list[dict]:
    """Versions as version_card gives them."""
    return [version_card(version) for version in versions]


def entries(space: MemorySpace, *, kinds: tuple[str, ...], status: object = LongTermEntry.Status.ACTIVE) -> QuerySet:
    """The space's entries of `kinds` with `status` ("all" for every status; inputs.entry_status refuses
    another), in the order they were made, with what entry_card reads fetched with them."""
    wanted = inputs.entry_status(status)
    found = (
        LongTermEntry.objects.filter(space=space, kind__in=kinds)
        .defer("embedding")
        .prefetch_related(Prefetch("source_pages", queryset=Page.objects.only("id")), *COVERAGE_PREFETCH)
    )
    return (found if wanted is None else found.filter(status=wanted)).order_by("pk")


def versions(entry: LongTermEntry) -> QuerySet:
    """Every version of the entry, oldest first, with the ids of the turns each was drawn from."""
    only_ids = Page.objects.only("id")
    return entry.versions.prefetch_related(Prefetch("source_pages", queryset=only_ids)).order_by("at", "pk")


# --- Erase: what it would take, then for good -------------------------------------------------------


def erase_preview(*, page: Page | None = None, entry: LongTermEntry | None = None, sentence=None, index=None) -> dict:
    """What erasing would take out of the memory, changing nothing (a dry run the page shows before asking to
    confirm): of a turn, its every word or one whole sentence (as written, or by its index); or of an entry,
    its values and the statements they were drawn from. The turn's sentences are listed, to choose from.
    Raises InvalidParameter for a sentence that is not a whole sentence of the turn."""
    if page is not None:
        space, texts = page.space, turn_texts(page, sentence, index)
        whole = sentence is None and index is None
        plan = erasure_plan(space, texts, pages={page.pk} if whole else frozenset())
        sentences = [{"index": s.index, "field": s.field, "text": s.text} for s in turn_sentences(page)]
    else:
        space, sentences = entry.space, []
        plan = erasure_plan(space, entry_texts(entry), entries={entry.pk})
    seqs = dict(Page.objects.filter(pk__in=plan.pages).values_list("pk", "seq"))
    return {
        "sentences": sentences,
        "erasing": plan.texts,
        "turns": [
            {"id": pk, "seq": seqs[pk], **after} for pk, after in sorted(plan.pages.items(), key=lambda i: seqs[i[0]])
        ],
        "entries_deleted": [_entry_line(e) for e in plan.deleted],
        "entries_changed": [{**_entry_line(e), "after": after} for e, after in plan.changed],
        "forks": MemorySpace.objects.filter(experiment__source=space).count(),
    }


def _entry_line(entry: LongTermEntry) -> dict:
    return {"id": entry.pk, "kind": entry.kind, "key": entry.key, "value": entry.value}


# --- What the doors give of the engine's curation, under the names they call ---------------------------


def user_profile(space: MemorySpace) -> dict[str, str]:
    """The space's profile now, as attribute -> value (its active profile entries)."""
    return long_term.user_profile(space)


def knowledge_entries(space: MemorySpace, kind: str) -> QuerySet:
    """The space's active knowledge entries of `kind` (user_knowledge or assistant_knowledge), oldest first."""
    return long_term.knowledge_entries(space, kind)


def coverage(entry: LongTermEntry) -> marks.Coverage:
    """What the entry's forget or edit holds out of the turns now: its marked statements, the turns they
    are in, and the entries that went with it (engine/statement_marks.py)."""
    return marks.coverage(entry)


def page_words(page: Page, user_input: str, agent_response: str) -> tuple[str, str]:
    """The words `page` may be given instead of its own, checked as a new turn's are; raises InvalidTurn."""
    return mid_term.page_words(page, user_input, agent_response)


def page_edit(*, page: Page, user_input: str, agent_response: str) -> Page:
    """Correct a stored turn's words: re-embedded, its keywords and its session's summary made again under
    one vector version, so that retrieval ranks the new words at once. Raises InvalidTurn as page_words."""
    return mid_term.page_edit(page=page, user_input=user_input, agent_response=agent_response)


def summary_text(summary: str) -> str:
    """A session summary as it may be stored; raises InvalidTurn for an empty or invalid one."""
    return mid_term.summary_text(summary)


def session_edit(*, session, summary: str):
    """Correct a session's summary (until new pages merge into it): re-embedded under a new vector version,
    so that session retrieval uses it at once. Raises InvalidTurn as summary_text."""
    return mid_term.session_edit(session=session, summary=summary)


def erase_entry(entry: LongTermEntry) -> int:
    """Erase the entry, its history and the statements it was drawn from, for good (irreversible). Returns
    how many turns changed."""
    return erasure.erase_entry(entry)


def entry_erase(*, entry: LongTermEntry) -> dict:
    """Erase the entry as erase_entry does, answering what every door answers (documents.ErasedDoc)."""
    entry_id = entry.pk
    return ErasedDoc(id=entry_id, erased=True, turns_changed=erase_entry(entry)).payload()


def erase_turn(page: Page) -> int:
    """Erase every word of a turn, for good (it stays in the conversation as "(erased)"), and what holds
    them. Returns how many turns changed."""
    return erasure.erase_turn(page)


def erase_statement(page: Page, sentence: str | None = None, index: int | None = None) -> int:
    """Erase one whole sentence of a turn (as written, or by its index) wherever it is, for good. Raises
    InvalidParameter for a sentence the turn does not hold. Returns how many turns changed."""
    return erasure.erase_statement(page, sentence, index)
