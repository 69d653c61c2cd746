"""Erase: words removed for good, for privacy. Forgetting (curation.py) holds statements out of what the
memory uses and keeps them to give back; erasing leaves them nowhere.

`erase_entry` erases an entry and every statement it was drawn from (each value it ever had, found in the
turns as a forget finds them), `erase_turn` a turn's every word, `erase_statement` one sentence of a turn:
a whole sentence as the turn holds it (`turn_sentences`: given as written, or by its index), never a
fragment ("e" once took the first "e" out of every turn of a space). Words are found wherever they stand
whole (curation.span: never inside a word). `erasure_plan` says what an erasure would take, changing
nothing (the page shows it before asking to confirm). Each comes down to `erase_words(space, texts)`, which
takes the words out of:

- every turn of the space that holds them, as said (`Page.said`) and as the memory holds them now (a reply
  that quoted them too); a turn left with no words says "(erased)". Its vector, keywords, thread summary
  and session summary are made again from what is left;
- every entry: one drawn from them (its value states them) is deleted with its whole history; one that
  only holds them among other words keeps the rest, in its value and in every version;
- the marks of forgets and edits that name them, the turns waiting in the space's imports and replays,
  the finished restores and comparisons that carried them, the files kept for import that hold them;
- the lab's forks of the space (their own copies of the turns);
- the index files: the space gets a new index key, so every process rebuilds its indexes from the
  database and removes the old files (store/index.prune_stale_folders), and this process at once.

After the transaction, SQLite's log is emptied into its file, whose freed pages secure_delete zeroes, and
PostgreSQL vacuums the tables written (a dump holds none of the words; its write-ahead log and free space
keep the bytes until they are overwritten: docs/deploying.md). Nothing of it can be reverted.
"""

import json
import uuid
from dataclasses import dataclass, field

from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.db import connection, transaction
from django.db.models import CharField
from django.db.models.functions import Cast

from memory_engine.engine.grounding import states
from memory_engine.engine.statement_marks import FIELDS, curate, span, statements_drawn_from, without
from memory_engine.errors import InvalidParameter
from memory_engine.language.reading import split_sentences
from memory_engine.models import (
    BackgroundJob,
    EntryVersion,
    ImportJob,
    ImportUpload,
    LongTermEntry,
    MemorySpace,
    MidTermSession,
    Page,
    StatementMark,
)
from memory_engine.store import import_files, index
from memory_engine.store.holders import erase_deleted
from memory_engine.store.writes import space_write

ERASED = "(erased)"
# The tables an erasure rewrites, vacuumed after it on PostgreSQL.
TABLES = [
    model._meta.db_table
    for model in (Page, LongTermEntry, EntryVersion, StatementMark, ImportJob, BackgroundJob, MidTermSession, LogEntry)
]


def entry_texts(entry: LongTermEntry) -> list[str]:
    """What erasing the entry erases: each value it ever had and the statements they were drawn from."""
    values = {v for v in entry.versions.values_list("before", flat=True) if v}
    values |= {v for v in entry.versions.values_list("after", flat=True) if v} | {entry.value}
    texts = {sentence for value in values for _, _, sentence in statements_drawn_from(entry, value)} | values
    return sorted(texts, key=len, reverse=True)


def erase_entry(entry: LongTermEntry) -> int:
    """Erase the entry, its history and the statements it was drawn from. Returns how many turns changed."""
    return erase_words(entry.space, entry_texts(entry), entries={entry.pk})


@dataclass(frozen=True)
class Sentence:
    index: int  # its place among the turn's sentences, the person's first
    field: str
    text: str


def turn_sentences(page: Page) -> list[Sentence]:
    """The turn's sentences as it was said (the person's, then the reply's), each with its index."""
    said = page.said or {name: getattr(page, name) for name in FIELDS}
    found = [(name, sentence) for name in FIELDS for sentence in split_sentences(said[name])]
    return [Sentence(index, name, text) for index, (name, text) in enumerate(found)]


def turn_texts(page: Page, sentence: str | None = None, index: int | None = None) -> list[str]:
    """What erasing the turn erases: its every sentence, or one of them, given as written or by its index.
    Raises InvalidParameter for a sentence that is not a whole sentence of the turn, or an index it has not."""
    sentences = turn_sentences(page)
    if index is not None:
        if not 0 <= index < len(sentences):
            raise InvalidParameter("sentence_index", f"the turn has {len(sentences)} sentences, numbered from 0")
        return [sentences[index].text]
    if sentence is None:
        return [s.text for s in sentences]
    sentence = " ".join(str(sentence).split())
    if sentence not in {s.text for s in sentences}:
        raise InvalidParameter(
            "sentence", "is not a whole sentence of the turn: give one of its sentences as written, or its index"
        )
    return [sentence]


def erase_turn(page: Page) -> int:
    """Erase every word of a turn (it stays in the conversation as "(erased)"), and what holds them."""
    return erase_words(page.space, turn_texts(page), pages={page.pk})


def erase_statement(page: Page, sentence: str | None = None, index: int | None = None) -> int:
    """Erase one whole sentence of a turn (as written, or by its index) wherever it is. Raises
    InvalidParameter as turn_texts does."""
    return erase_words(page.space, turn_texts(page, sentence, index))


@dataclass
class Plan:
    """What an erasure of `texts` takes out of one space: its turns' words after (`emptied`: the turns erased
    whole), the entries it deletes and those it changes (their value after)."""

    texts: list[str]
    pages: dict[int, dict[str, str]] = field(default_factory=dict)
    emptied: set[int] = field(default_factory=set)
    deleted: list[LongTermEntry] = field(default_factory=list)
    changed: list[tuple[LongTermEntry, str]] = field(default_factory=list)


def erasure_plan(space: MemorySpace, texts: list[str], *, entries=frozenset(), pages=frozenset()) -> Plan:
    """What erasing `texts` would take out of `space` (`entries` deleted whatever their words, `pages`
    emptied), changing nothing."""
    plan = Plan(_distinct(texts))
    removed = [(text, "") for text in plan.texts]
    for page in _pages_holding(space, plan.texts, set(pages)):
        before = page.said or {name: getattr(page, name) for name in FIELDS}
        after = {name: without(before[name], removed) for name in FIELDS}
        if page.pk in pages:
            after = {"user_input": ERASED, "agent_response": ""}
            plan.emptied.add(page.pk)
        if before["user_input"] and not after["user_input"] or not any(after.values()):
            after["user_input"] = ERASED  # the turn says its words were erased
        plan.pages[page.pk] = after
    for entry in LongTermEntry.objects.filter(space=space).defer("embedding").prefetch_related("versions"):
        if entry.pk in entries or any(states(entry.value, t) for t in plan.texts):
            plan.deleted.append(entry)
        elif any(span(t, v) for t in plan.texts for v in _entry_words(entry)):
            plan.changed.append((entry, without(entry.value, removed) or ERASED))
    return plan


def _entry_words(entry: LongTermEntry) -> list[str]:
    versions = entry.versions.all()
    return [v for v in (entry.value, *(x.before for x in versions), *(x.after for x in versions)) if v]


def _distinct(texts: list[str]) -> list[str]:
    return [text for text in dict.fromkeys(" ".join(t.split()) for t in texts) if text]


def erase_words(space: MemorySpace, texts: list[str], *, entries=frozenset(), pages=frozenset()) -> int:
    """Take `texts` out of everything the space (and its forks) holds; see the module docstring. `entries`
    are deleted whatever their words, `pages` emptied. Returns how many turns changed."""
    texts = _distinct(texts)
    with space_write(space.pk) as write:
        changed = _erase_in(write, erasure_plan(write.space, texts, entries=entries, pages=pages))
        for shadow in MemorySpace.objects.filter(experiment__source_id=space.pk):
            with space_write(shadow.pk) as shadow_write:
                changed += _erase_in(shadow_write, erasure_plan(shadow_write.space, texts))
    return changed


def _erase_in(write, plan: Plan) -> int:
    space, texts = write.space, plan.texts
    removed = [(text, "") for text in texts]

    def holds(text: str | None) -> bool:
        return bool(text) and any(span(t, text) for t in texts)

    # The marks that name the words go first: what a turn holds now is made again without them.
    for mark in StatementMark.objects.filter(space=space):
        if holds(mark.sentence) or holds(mark.replacement) or any(span(mark.sentence, t) for t in texts):
            mark.delete()
    Page.objects.filter(pk__in=plan.emptied).update(meta={})
    curate(set(plan.pages), write=write, said=plan.pages)
    for page in Page.objects.filter(space=space).exclude(thread_summary="").only("thread_summary"):
        if holds(page.thread_summary):
            Page.objects.filter(pk=page.pk).update(thread_summary=without(page.thread_summary, removed))
    for session in MidTermSession.objects.filter(space=space).only("summary", "keywords"):
        if holds(session.summary):
            MidTermSession.objects.filter(pk=session.pk).update(summary=without(session.summary, removed))
    _erase_entries(plan, write=write)
    _erase_waiting(space, texts)
    erase_from_admin_log(space, texts, deleted=[entry.pk for entry in plan.deleted])
    thread = without(space.thread_summary, removed)
    MemorySpace.objects.filter(pk=space.pk).update(thread_summary=thread, index_key=uuid.uuid4())
    write.version  # noqa: B018 (claimed: every index catches up, and rebuilds under the new key)
    transaction.on_commit(lambda: _after(space.pk))
    return len(plan.pages)


def _pages_holding(space: MemorySpace, texts: list[str], pages: set[int]) -> list[Page]:
    """The space's turns that hold any of the words, as said or now, and the turns to empty."""
    query = Page.objects.filter(space=space).defer("embedding")
    found = query.filter(pk__in=pages) | query.filter(said__isnull=False)
    for text in texts:
        longest = max(text.split(), key=len)
        found = found | query.filter(user_input__icontains=longest) | query.filter(agent_response__icontains=longest)
    out = []
    for page in found.distinct().order_by("seq"):
        words = page.said or {name: getattr(page, name) for name in FIELDS}
        if page.pk in pages or any(span(t, words[name]) for t in texts for name in FIELDS):
            out.append(page)
    return out


def _erase_entries(plan: Plan, *, write) -> None:
    """Delete the entries the plan deletes; take the words out of the others' values and histories."""
    removed = [(text, "") for text in plan.texts]
    LongTermEntry.objects.filter(pk__in=[entry.pk for entry in plan.deleted]).delete()  # versions, marks with them
    for entry, value in plan.changed:
        for version in entry.versions.all():
            version.before = without(version.before, removed) if version.before else version.before
            version.after = without(version.after, removed) if version.after else version.after
            version.save(update_fields=["before", "after"])
        entry.value = value
        write.stamp(entry)
        entry.save(update_fields=["value", "vector_version", "updated_at"])


def erase_from_admin_log(space: MemorySpace, texts: list[str], *, deleted: list[int]) -> None:
    """The admin's log of changes to the space's entries, turns and sessions: an entry deleted for good
    leaves no line; a line that names the words (the row as it was shown, or the change's message) keeps the
    rest of its words."""
    removed = [(text, "") for text in texts]
    entries = ContentType.objects.get_for_model(LongTermEntry)
    LogEntry.objects.filter(content_type=entries, object_id__in=[str(pk) for pk in deleted]).delete()
    for model in (LongTermEntry, Page, MidTermSession):
        rows = model.objects.filter(space=space).annotate(text_pk=Cast("pk", CharField())).values("text_pk")
        lines = LogEntry.objects.filter(content_type=ContentType.objects.get_for_model(model), object_id__in=rows)
        for line in lines:
            if any(span(t, line.object_repr) or span(t, line.change_message) for t in texts):
                line.object_repr = without(line.object_repr, removed)[:200] or ERASED
                line.change_message = without(line.change_message, removed)
                line.save(update_fields=["object_repr", "change_message"])


def _erase_waiting(space: MemorySpace, texts: list[str]) -> None:
    """The words in what waits or was carried: imports' and replays' turns, finished restores and
    comparisons, files kept for import."""
    removed = [(text, "") for text in texts]
    needles = [text.lower() for text in texts]
    for job in ImportJob.objects.filter(space=space).only("turns"):
        if any(n in json.dumps(job.turns, ensure_ascii=False).lower() for n in needles):
            job.turns = [_turn_without(turn, removed) for turn in job.turns]
            job.save(update_fields=["turns"])
    finished = BackgroundJob.objects.filter(space=space).exclude(status__in=["queued", "running"])
    for job in finished.only("request", "result"):
        if any(n in json.dumps([job.request, job.result], ensure_ascii=False).lower() for n in needles):
            job.delete()
    for upload in ImportUpload.objects.filter(space=space):
        if import_files.holds(upload.path, texts):
            import_files.remove_on_commit([upload.path])
            upload.delete()


def _turn_without(turn: dict, removed: list[tuple[str, str]]) -> dict:
    words = {name: without(str(turn.get(name) or ""), removed) for name in FIELDS}
    if not any(words.values()):
        words["user_input"] = ERASED
    return {**turn, **words}


def _after(space_id: int) -> None:
    """Once committed: this process's indexes and files of the space go, SQLite's log is emptied into its
    file, PostgreSQL vacuums what was rewritten."""
    index.forget_space(space_id, delete_files=True)
    erase_deleted()
    if connection.vendor == "postgresql" and connection.get_autocommit():
        with connection.cursor() as cursor:
            for table in TABLES:
                cursor.execute(f"VACUUM {table}")
