"""What the memory holds now: statements forgotten with an entry, or corrected to its edited value.

An entry is drawn from what the person said, and every reader (the reply, quoted or from a model, the
prompt's context, retrieval and inspection, the lab, the export) reads the turns it was drawn from. So
forgetting an entry, or editing it, must change the turns too, or the memory goes on saying what its owner
took back. When an entry is deleted or edited (services/curation.py: entry_delete, entry_edit, entry_revert call
`mark_entry`):

- the statements it was drawn from are found: the sentences of its source turns that state its value as it
  was drawn (GROUNDING_MIN of the value's content words), and the same sentences repeated in later turns
  (a reply that quoted one);
- each is marked (StatementMark): forgotten, or corrected to the edited value (the old value's words
  replaced in the sentence: "I work as a radiology nurse" edited from "radiology nurse" to "midwife" stands
  as "I work as a midwife");
- the turns' words are rewritten: `user_input` and `agent_response` hold what the memory holds now, which
  every reader uses, and `Page.said` the words as said, for the conversation shown as it happened (the chat
  page shows the marks). The turn is re-embedded and its keywords, thread summary and session recomputed,
  so retrieval ranks the new words at once;
- entries drawn from the same statements go with it (forgotten, or corrected where the old value is among
  their words), each change a version made `with_entry` the one the person changed.

An entry's marks follow from its state, so `mark_entry` recomputes them: an entry reverted to its value as
drawn has none, and its turns' words and the entries that went with it come back.
"""

from dataclasses import dataclass, field

from django.utils import timezone

from memory_engine.engine.grounding import states
from memory_engine.engine.mid_term import PAGE_KEYWORDS, session_refresh
from memory_engine.engine.summaries import thread_summary
from memory_engine.language.clauses import (
    CLAUSE_END,
    DANGLING,
    EMPTY_QUOTE,
    JOINED_WORDS,
    OPENING_PHRASE,
    RUN_OF_SPACES,
    loose_span,
    span,
)
from memory_engine.language.keywords import content_tokens, extract_keywords
from memory_engine.language.reading import split_sentences
from memory_engine.models import EntryVersion, LongTermEntry, MidTermSession, Page, StatementMark
from memory_engine.store.embeddings import get_embedder, to_bytes

FIELDS = ("user_input", "agent_response")
FORGOTTEN = "(forgotten)"
WHOLE_SHARE = 0.8  # a value this much of its sentence is the sentence
Cause = EntryVersion.Cause
Status = LongTermEntry.Status
# Causes of a value a person wrote, rather than one drawn from the turns.
PERSON_CAUSES = frozenset([Cause.ADMIN, Cause.OWNER, Cause.API, Cause.LIBRARY, Cause.CONVERSATION])


@dataclass(frozen=True)
class Mark:
    """A statement to mark: where it is, what it said, what stands in its place ("" when forgotten)."""

    page_id: int
    field: str
    sentence: str
    replacement: str = ""

    @property
    def kind(self) -> str:
        return StatementMark.Kind.CORRECTED if self.replacement else StatementMark.Kind.FORGOTTEN


@dataclass
class Coverage:
    """What a forget or an edit covers: the statements marked, in which turns, and the other entries that
    went with it."""

    statements: int = 0
    seqs: list[int] = field(default_factory=list)
    entries: list[int] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {"statements": self.statements, "turns": self.seqs, "entries": self.entries}


# --- Pure: which sentences state a value, and the words without them ---------------------------------


def corrected(sentence: str, before: str, after: str) -> str:
    """The sentence with the entry's old value replaced by its new one, where the old value's words are in
    it ("I work as a radiology nurse": "radiology nurse" -> "midwife" gives "I work as a midwife"); else the
    new value, which then stands in the sentence's place. Pure."""
    found = span(before, sentence) if before.strip() else None
    if found is None:
        found = loose_span(before.strip(), sentence) if before.strip() else None
    if found is None:
        return after
    return sentence[: found.start()] + after + sentence[found.end() :]


def without(text: str, marks: list[tuple[str, str]]) -> str:
    """`text` with each marked sentence ((sentence, replacement)) taken out, or its replacement put in its
    place; the rest as it was. Pure."""
    for sentence, replacement in marks:
        found = span(sentence, text)
        if found is None:
            continue
        text = _joined(text[: found.start()], replacement + text[found.end() :])
    return RUN_OF_SPACES.sub(" ", text).strip()


def _joined(head: str, tail: str) -> str:
    """`head` and `tail` joined where a sentence was taken out, tidied there only: a quote left empty says a
    sentence was forgotten (a reply that quoted only it), and a conjunction or comma left hanging goes ("I'm a
    nurse and." after its last clause went); "I hope so." elsewhere in the turn stays as said."""
    text, cut = head + tail, len(head)
    for pattern, kept in ((EMPTY_QUOTE, lambda found: FORGOTTEN), (DANGLING, lambda found: found.group(1))):
        at = next((found for found in pattern.finditer(text) if found.start() <= cut <= found.end()), None)
        if at is not None:
            text = text[: at.start()] + kept(at) + text[at.end() :]
            cut = at.start() + len(kept(at))
    return text


def corrections_in(page_ids: set[int]) -> dict[int, list[StatementMark]]:
    """page id -> the corrected statements of those pages, for a reply that quotes one (recall.py)."""
    out: dict[int, list[StatementMark]] = {}
    for mark in StatementMark.objects.filter(page_id__in=page_ids, kind=StatementMark.Kind.CORRECTED):
        out.setdefault(mark.page_id, []).append(mark)
    return out


# --- The marks an entry's state gives -------------------------------------------------------------


def drawn_value(entry: LongTermEntry) -> str | None:
    """The entry's value as drawn from the turns: that of its latest version a person did not write (nor
    made with another entry); None when a person wrote it, so no statement of the turns is its."""
    versions = entry.versions.exclude(cause__in=PERSON_CAUSES).filter(with_entry=None).exclude(after=None)
    latest = versions.order_by("-at", "-pk").first()
    return latest.after if latest is not None else None


def _words(page: Page) -> dict[str, str]:
    return dict(page.said) if page.said else {name: getattr(page, name) for name in FIELDS}


def clauses(sentence: str) -> list[str]:
    """The sentence's clauses, each with the comma or "and" that joins it to the next: "I'm a nurse and I
    have a cat named Milo." gives "I'm a nurse and" and "I have a cat named Milo.". A phrase that opens a
    clause goes with it: "For the VPN from home, IT gave me this token: VX-4471-KQ." is one clause, so that
    forgetting the token leaves no "For the VPN from home," to quote; so does a word joined by "and" ("Tom and
    Ann are 5", "Between you and me I let his tyre down"), which is no clause. Pure."""
    pieces, start = [], 0
    for joint in CLAUSE_END.finditer(sentence):
        pieces.append(sentence[start : joint.end()].strip())
        start = joint.end()
    pieces.append(sentence[start:].strip())
    joined: list[str] = []
    for piece in filter(None, pieces):
        if joined and (OPENING_PHRASE.fullmatch(joined[-1]) or JOINED_WORDS.fullmatch(joined[-1])):
            joined[-1] = f"{joined[-1]} {piece}"
        else:
            joined.append(piece)
    return joined


def statement_in(value: str, sentence: str) -> str:
    """What of `sentence` states `value`: its one clause that does ("I'm a nurse and" of "I'm a nurse and I
    have a cat named Milo.", for "nurse"), so that forgetting the one leaves the other; else the sentence."""
    if span(sentence, value) or (span(value, sentence) and len(value) >= WHOLE_SHARE * len(sentence)):
        return sentence  # the value is the sentence (a fact kept in the person's words)
    stating = [piece for piece in clauses(sentence) if states(value, piece)]
    return stating[0] if len(stating) == 1 else sentence


def statements_drawn_from(entry: LongTermEntry, value: str, *, whole: bool = False) -> list[tuple[Page, str, str]]:
    """(page, field, statement) of each statement of `value` in the entry's source turns (the clause that
    states it, or with `whole` its sentence), and of the same statements said again in a later turn of the
    space (a reply that quoted one), as they were said."""
    found: list[tuple[Page, str, str]] = []
    seen: set[tuple[int, str, str]] = set()

    def add(page: Page, name: str, sentence: str) -> None:
        if (page.pk, name, sentence) not in seen:
            seen.add((page.pk, name, sentence))
            found.append((page, name, sentence))

    sources = list(entry.source_pages.defer("embedding").order_by("seq"))
    for page in sources:
        words = _words(page)
        for name in FIELDS:
            for sentence in split_sentences(words[name]):
                if states(value, sentence):
                    add(page, name, sentence if whole else statement_in(value, sentence))
    for page, _, sentence in list(found):
        for later, name in _said_again(entry.space_id, sentence, after_seq=page.seq):
            add(later, name, sentence)
    return found


def _said_again(space_id: int, sentence: str, *, after_seq: int) -> list[tuple[Page, str]]:
    """The later turns of the space that hold `sentence` (in either field, as said), found through its
    longest word and checked whole."""
    longest = max(sentence.split(), key=len)
    query = Page.objects.filter(space_id=space_id, seq__gt=after_seq).defer("embedding")
    candidates = (
        query.filter(**{"user_input__icontains": longest})
        | query.filter(agent_response__icontains=longest)
        | query.filter(said__isnull=False)
    )
    out = []
    for page in candidates.distinct().order_by("seq"):
        words = _words(page)
        out += [(page, name) for name in FIELDS if span(sentence, words[name])]
    return out


def marks_for(entry: LongTermEntry) -> list[Mark]:
    """The marks the entry's state gives: forgotten statements for a deleted entry, corrected ones for an
    active entry whose value a person changed from the one drawn, none otherwise."""
    drawn = drawn_value(entry)
    if drawn is None:
        return []
    if entry.status == Status.DELETED:
        return [Mark(page.pk, name, sentence) for page, name, sentence in statements_drawn_from(entry, drawn)]
    if entry.status == Status.ACTIVE and entry.value != drawn:
        return [
            Mark(page.pk, name, sentence, corrected(sentence, drawn, entry.value) or entry.value)
            for page, name, sentence in statements_drawn_from(entry, drawn, whole=True)
        ]
    return []


# --- Writing: the one place marks change ------------------------------------------------------------


def mark_entry(entry: LongTermEntry, *, write, actor: str, cause: str) -> Coverage:
    """Make the entry's marks those its state gives (marks_for), rewrite the turns they are in, and take
    the entries drawn from the same statements with it (or give them back). Runs inside the caller's
    space_write, after the entry's change is saved."""
    old = list(StatementMark.objects.filter(entry=entry))
    new = marks_for(entry)
    if {(m.page_id, m.field, m.sentence, m.replacement) for m in old} == {
        (m.page_id, m.field, m.sentence, m.replacement) for m in new
    }:
        return _coverage(entry, new)
    _give_back(entry, write=write, actor=actor, cause=cause)
    StatementMark.objects.filter(entry=entry).delete()
    now = timezone.now()
    StatementMark.objects.bulk_create(
        StatementMark(
            space_id=entry.space_id,
            page_id=m.page_id,
            entry=entry,
            field=m.field,
            sentence=m.sentence,
            replacement=m.replacement,
            kind=m.kind,
            at=now,
        )
        for m in new
    )
    _take_along(entry, new, write=write, actor=actor, cause=cause)
    curate({m.page_id for m in old} | {m.page_id for m in new}, write=write)
    return _coverage(entry, new)


def _coverage(entry: LongTermEntry, marks: list[Mark]) -> Coverage:
    return coverage(entry) if marks else Coverage()


# Prefetch these for a list of entries whose coverage is shown (coverage reads them).
COVERAGE_PREFETCH = ("marks__page", "changed_with")


def coverage(entry: LongTermEntry) -> Coverage:
    """What the entry's forget or edit covers now: its marked statements, the turns they are in, and the
    entries that went with it (still as it left them). Reads entry.marks and entry.changed_with
    (COVERAGE_PREFETCH for a list)."""
    marks = list(entry.marks.all())
    if not marks:
        return Coverage()
    went = {}
    for version in sorted(entry.changed_with.all(), key=lambda v: (v.at, v.pk)):
        went[version.entry_id] = version.status_after == Status.DELETED or version.after is not None
    return Coverage(
        statements=len({(m.page_id, m.field, m.sentence) for m in marks}),
        seqs=sorted({m.page.seq for m in marks}),
        entries=sorted(pk for pk, gone in went.items() if gone),
    )


def mark_dict(mark: StatementMark) -> dict:
    """A mark as a page's shape shows it (REST, MCP, the chat page)."""
    return {
        "kind": mark.kind,
        "field": mark.field,
        "sentence": mark.sentence,
        "replacement": mark.replacement,
        "entry_id": mark.entry_id,
        "at": mark.at.isoformat(),
    }


def page_marks(page: Page) -> list[dict]:
    """The marks of a turn whose words curation changed (none, without a query, for any other)."""
    return [] if page.said is None else [mark_dict(m) for m in page.marks.all()]


def _take_along(entry: LongTermEntry, marks: list[Mark], *, write, actor: str, cause: str) -> None:
    """The other active entries drawn from the marked statements go with the entry. A forget: an entry whose
    value holds a forgotten statement keeps the rest of its words (none left: forgotten too), and one that
    the statement states is forgotten. An edit: an entry whose value holds the old value's words is
    corrected the same way; the others stand."""
    if not marks:
        return
    drawn = drawn_value(entry) or ""
    others = (
        LongTermEntry.objects.filter(
            space_id=entry.space_id, status=Status.ACTIVE, source_pages__in={m.page_id for m in marks}
        )
        .exclude(pk=entry.pk)
        .distinct()
    )
    for other in others:
        value, status = other.value, Status.ACTIVE
        if entry.status == Status.ACTIVE:
            if span(drawn, other.value) is None and loose_span(drawn, other.value) is None:
                continue
            value = corrected(other.value, drawn, entry.value)
        else:
            held = [m.sentence for m in marks if span(m.sentence, other.value)]
            if held:
                value = without(other.value, [(sentence, "") for sentence in held])
            elif not any(states(other.value, m.sentence) for m in marks):
                continue
            if not held or len(content_tokens(value)) < 2:
                value, status = other.value, Status.DELETED
        change_with(other, value=value, status=status, with_entry=entry, write=write, actor=actor, cause=cause)


def _give_back(entry: LongTermEntry, *, write, actor: str, cause: str) -> None:
    """The entries that went with this one come back as they were before."""
    went = EntryVersion.objects.filter(with_entry=entry).select_related("entry").order_by("-at", "-pk")
    done: set[int] = set()
    for version in went:
        other = version.entry
        if other.pk in done:
            continue
        done.add(other.pk)
        latest = other.versions.order_by("-at", "-pk").first()
        if latest is None or latest.pk != version.pk:
            continue  # changed since, by someone: theirs to keep
        change_with(
            other,
            value=version.before if version.before is not None else other.value,
            status=Status.ACTIVE,
            with_entry=None,
            write=write,
            actor=actor,
            cause=cause,
        )


def change_with(
    entry: LongTermEntry, *, value: str, status: str, with_entry: LongTermEntry | None, write, actor: str, cause: str
) -> None:
    """Give an entry drawn from a marked statement a value and status, re-embedding a knowledge entry whose
    value changes, recorded as a version made with `with_entry` (None: given back)."""
    before = entry.value if entry.status == Status.ACTIVE else None
    if (entry.value, entry.status) == (value, status):
        return
    if value != entry.value and entry.kind != LongTermEntry.Kind.PROFILE:
        entry.embedding = to_bytes(get_embedder().encode_one(value))
    entry.value, entry.status = value, status
    write.stamp(entry)
    entry.save()
    EntryVersion.objects.create(
        entry=entry,
        before=before,
        after=value if status == Status.ACTIVE else None,
        status_after=status,
        cause=cause,
        actor=actor,
        at=timezone.now(),
        with_entry=with_entry,
    )


def curate(page_ids: set[int], *, write, said: dict[int, dict[str, str]] | None = None) -> None:
    """Rewrite each page's words from the words as said and its marks: what the memory holds now. `said`
    gives some pages new words as said (an erasure: the words are gone from the record itself). A page
    whose words change is re-embedded (when it has a vector), its keywords, thread summaries and session
    recomputed, and stamped for the indexes."""
    given = said or {}
    pages = list(Page.objects.filter(pk__in=page_ids).order_by("seq"))
    marks: dict[tuple[int, str], list[tuple[str, str]]] = {}
    for mark in StatementMark.objects.filter(page_id__in=page_ids).order_by("pk"):
        marks.setdefault((mark.page_id, mark.field), []).append((mark.sentence, mark.replacement))
    changed: list[Page] = []
    for page in pages:
        said = given.get(page.pk) or _words(page)
        words = {
            name: without(said[name], marks[page.pk, name]) if (page.pk, name) in marks else said[name]
            for name in FIELDS
        }
        if not (words["user_input"] or words["agent_response"]):
            words["user_input"] = FORGOTTEN  # a turn holds some words (an export of it restores)
        page.said = said if any(key[0] == page.pk for key in marks) else None
        fields = ["said"]
        if (page.user_input, page.agent_response) != (words["user_input"], words["agent_response"]):
            page.user_input, page.agent_response = words["user_input"], words["agent_response"]
            fields += ["user_input", "agent_response", "vector_version"]
            if page.embedding is not None:
                page.embedding = to_bytes(get_embedder().encode_one(page.text))
                page.keywords = extract_keywords([page.text], k=PAGE_KEYWORDS)
                fields += ["embedding", "keywords"]
            write.stamp(page)
            changed.append(page)
        page.save(update_fields=fields)
    for session in MidTermSession.objects.filter(pk__in={page.session_id for page in changed}):
        session_refresh(session, version=write.version)
    _rethread(write.space, [page.seq for page in changed if page.tier != Page.Tier.SHORT])


def _rethread(space, seqs: list[int]) -> None:
    """The thread summaries from the first changed page on, to the end of the last changed page's thread:
    they are made of the pages' words (updater.move_short_term_to_mid_term), and the space's own when the
    thread runs to its newest page out of short-term memory."""
    if not seqs:
        return
    moved = Page.objects.filter(space=space).exclude(tier=Page.Tier.SHORT).defer("embedding")
    previous = moved.filter(seq__lt=min(seqs)).order_by("-seq").first()
    thread = previous.thread_summary if previous is not None else ""
    for page in moved.filter(seq__gte=min(seqs)).order_by("seq"):
        if page.seq > max(seqs) and not page.continues_previous:
            return
        thread = thread_summary(thread if page.continues_previous else "", page.text)
        if thread != page.thread_summary:
            page.thread_summary = thread
            page.save(update_fields=["thread_summary"])
    type(space).objects.filter(pk=space.pk).update(thread_summary=thread)
