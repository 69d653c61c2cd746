"""Long-term persona memory: the user profile, user knowledge and assistant knowledge of a space.

The profile is a set of entries, one per attribute (see profile_attributes.py), never one blob. User and
assistant knowledge are embedded facts. Every entry keeps the pages it came from, and every change to
an entry is an EntryVersion (before, after, cause, actor, time, source pages): the diff history.

- A near-duplicate fact is merged into the entry it repeats (its provenance grows), not added again.
- A fact on the same topic as an active one, but saying something else, supersedes it: the old entry
  is kept with status "superseded" and a link to the new one.
- Beyond the space's knowledge capacity, the least used entries are evicted (kept, marked evicted).
- Nothing an LLM returns is stored unchecked: see `validate_extraction`.

Functions that write expect to run inside the caller's `space_write` (store/writes.py).
"""

from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache

import numpy as np

from memory_engine.config import memory_settings
from memory_engine.engine.grounding import GROUNDING_MIN, changes, grounding, sets_aside, states, tells_a_change
from memory_engine.language import memory_requests
from memory_engine.language.keywords import content_tokens, extract_keywords
from memory_engine.language.profile_attributes import PROFILE_ATTRIBUTES, is_multi_valued, values_in
from memory_engine.language.reading import (
    is_statement,
    opens_as_imperative,
    opens_as_request,
    plain,
    speaks_of_self,
    split_sentences,
    straight,
    tells_what_to_remind,
)
from memory_engine.language.small_talk import ERROR_LIKE, FIRST_PERSON_SINGULAR, OPENS_ON_BEFORE, TO_THE_OTHER
from memory_engine.models import EntryVersion, LongTermEntry, MemorySpace, Page
from memory_engine.store.embeddings import from_bytes, to_bytes

Kind = LongTermEntry.Kind
Status = LongTermEntry.Status
Cause = EntryVersion.Cause

FACT_MIN_WORDS = 3  # a fact with fewer content words ("I'm super thankful.") says nothing worth keeping
VALUE_SEPARATOR = "; "
CHANGE_SIMILARITY = 0.55  # a fact saying something changed replaces an earlier one this close (cosine)


# --- Checking what the LLM extracted ----------------------------------------------------------


@dataclass(frozen=True)
class ProfileItem:
    attribute: str
    value: str
    page: Page


@dataclass(frozen=True)
class FactItem:
    kind: str
    topic: str
    fact: str
    page: Page
    supersedes: bool = True  # may a fact on the same topic replace an older one?


@dataclass
class Extraction:
    profile: list[ProfileItem] = field(default_factory=list)
    facts: list[FactItem] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    # What the history credits: an LLM's extraction, or the person's own words kept with no LLM.
    cause: str = Cause.CONSOLIDATION


MAX_PROFILE_VALUE_WORDS = 8


def is_sentence(value: str) -> bool:
    """Whether a profile value is a sentence someone said ("I live in Porto.") rather than a value
    ("Porto", "a cat called Miso"): it speaks in the first person or runs past MAX_PROFILE_VALUE_WORDS."""
    return bool(FIRST_PERSON_SINGULAR.search(straight(value))) or len(value.split()) > MAX_PROFILE_VALUE_WORDS


def _clean(text: object) -> str:
    return " ".join(str(text).split()) if isinstance(text, str) else ""


def _grounded_page(value: str, cited: Page | None, pages: list[Page]) -> Page | None:
    """The page the value is grounded in: the cited one if it holds it, else the best other page."""
    candidates = ([cited] if cited else []) + [p for p in pages if p is not cited]
    for page in candidates:
        if grounding(value, page.text) >= GROUNDING_MIN:
            return page
    return None


def validate_extraction(data: dict, pages: list[Page], *, trust_topics: bool = True) -> Extraction:
    """Keep the extracted items that are well-formed and grounded in the pages they came from.

    `data` is the LLM's schema-valid answer; pages are numbered from 1 in the order given. An item is
    rejected (and listed in `rejected`) when it is empty, reads like an error or a refusal, names an
    unknown profile attribute, or when its words are not found in any of the pages: a small model
    invents, and an invention must never become memory. Without `trust_topics` (a weak model gives
    unrelated facts the same topic), a fact's topic is its own keywords and never supersedes anything.
    """
    out = Extraction()
    by_number = {i + 1: page for i, page in enumerate(pages)}

    def accept(value: str, page_number: object, label: str) -> Page | None:
        if not value:
            out.rejected.append(f"{label}: empty")
            return None
        if ERROR_LIKE.match(value):
            out.rejected.append(f"{label}: reads like an error or refusal: {value[:80]!r}")
            return None
        page = _grounded_page(value, by_number.get(page_number), pages)
        if page is None:
            out.rejected.append(f"{label}: not found in the conversation: {value[:80]!r}")
        return page

    for item in data.get("profile", []):
        attribute, value = _clean(item.get("attribute")), _clean(item.get("value"))
        if attribute not in PROFILE_ATTRIBUTES:
            out.rejected.append(f"profile: unknown attribute {attribute!r}")
            continue
        if is_sentence(value):
            out.rejected.append(f"profile {attribute}: a sentence, not a value: {value[:80]!r}")
            continue
        page = accept(value, item.get("page"), f"profile {attribute}")
        if page is not None:
            out.profile.append(ProfileItem(attribute, value, page))
    for list_name, kind in (
        ("user_facts", Kind.USER_KNOWLEDGE),
        ("assistant_knowledge", Kind.ASSISTANT_KNOWLEDGE),
    ):
        for item in data.get(list_name, []):
            topic, fact = _clean(item.get("topic")), _clean(item.get("fact"))
            if fact and len(set(content_tokens(fact))) < FACT_MIN_WORDS:
                out.rejected.append(f"{list_name}: too slight to keep: {fact[:80]!r}")
                continue
            page = accept(fact, item.get("page"), list_name)
            if page is None:
                continue
            if trust_topics and topic:
                out.facts.append(FactItem(kind, topic.lower()[:200], fact, page))
            else:
                out.facts.append(FactItem(kind, " ".join(extract_keywords([fact], k=4)), fact, page, supersedes=False))
    return out


# --- A weak model's promotion: the person's own words ------------------------------------------------

MIN_STATEMENT_CHARS = 12
MAX_STATEMENT_CHARS = 200


def statements(text: str) -> list[str]:
    """The sentences of `text` in which the speaker says something about themselves: statements
    (language.is_statement), not opening as a request ("can you remind me what I said", "write a follow-up to the
    landlord") nor asking something of the memory ("please forget my diagnosis": language/memory_requests.py), nor
    said to the other side ("your encouragement gives me strength", "I'll check out those websites you mentioned")
    nor about what an earlier sentence named ("It inspires me to keep making art, too."), with a first-person word
    or telling a change of theirs ("standup moved to 9:15", grounding.tells_a_change), short enough to keep as a
    fact. Pure."""
    found = []
    for sentence in split_sentences(straight(text)):
        said = plain(sentence)
        if (
            MIN_STATEMENT_CHARS <= len(sentence) <= MAX_STATEMENT_CHARS
            and is_statement(sentence)
            and (not opens_as_request(sentence) or tells_what_to_remind(said))  # "remind me my code is 4471"
            and not (opens_as_imperative(said) and not tells_what_to_remind(said))
            and not TO_THE_OTHER.search(said.replace("for your information", ""))
            and not OPENS_ON_BEFORE.match(said)
            and not memory_requests.read_all(sentence)  # "pls dont keep what i said abt my diagnosis"
            and (speaks_of_self(sentence) or tells_a_change(sentence))
            and sentence not in found
        ):
            found.append(sentence)
    return found


TOPIC_WORDS = 4


def topic_words(sentence: str) -> str:
    """A fact's topic, for a person to read: its TOPIC_WORDS most characteristic words as spelled, in the
    sentence's order ("blood negative case matters"), never stems ("roundhay small flat leed"). Pure."""
    words = extract_keywords([sentence], k=TOPIC_WORDS, surface=True)
    lowered = sentence.lower()
    return " ".join(sorted(words, key=lambda word: lowered.find(word.lower())))


def extraction_from_words(pages: list[Page]) -> Extraction:
    """What a weak model's promotion keeps, with no LLM call: the person's own statements as user
    knowledge, and profile values read off their sentences (profile_attributes.values_in: "Porto", never "I
    live in Porto."). Everything stored is a span of what was said, so nothing can be invented; topics are the
    fact's own keywords and never supersede, but a single-valued profile attribute takes its newest value.
    The reply's sentences are not kept as assistant knowledge, even where the reply is memory (the pages keep
    them): read word for word they were offers, tips and pleasantries ("I hope these ideas help!"), facts in
    8 and 11 of 50 labelled (docs/benchmarks.md, "Knowledge kept without an LLM"). Pure apart from reading the
    pages given."""
    out = Extraction(cause=Cause.WORDS)
    for page in pages:
        for sentence in statements(page.user_input):
            if len(set(content_tokens(sentence))) < FACT_MIN_WORDS:
                out.rejected.append(f"{Kind.USER_KNOWLEDGE}: too slight to keep: {sentence[:80]!r}")
                continue
            out.facts.append(FactItem(Kind.USER_KNOWLEDGE, topic_words(sentence), sentence, page, supersedes=False))
        for sentence in split_sentences(page.user_input):
            for attribute, value in values_in(sentence):
                out.profile.append(ProfileItem(attribute, value, page))
    return out


# --- Writing entries ----------------------------------------------------------------------------


class History:
    """Entry versions and their provenance (the version's pages, added to its entry's) to write together,
    in the order recorded: a history's batch of facts records thousands, and written one by one (a version,
    then a link each way) they took a third of its promotion's time. `record` returns the version, unsaved;
    `write` saves all of them and their links. Inside the caller's space_write."""

    def __init__(self) -> None:
        self._recorded: list[tuple[EntryVersion, list[Page]]] = []

    def record(
        self,
        entry: LongTermEntry,
        *,
        before: str | None,
        after: str | None,
        cause: str,
        actor: str,
        now: datetime,
        pages: list[Page] = (),
    ) -> EntryVersion:
        version = EntryVersion(
            entry=entry, before=before, after=after, status_after=entry.status, cause=cause, actor=actor, at=now
        )
        self._recorded.append((version, list(pages)))
        return version

    def write(self) -> None:
        if not self._recorded:
            return
        EntryVersion.objects.bulk_create([version for version, _ in self._recorded])  # sets their keys
        version_pages = {(version.pk, page.pk) for version, pages in self._recorded for page in pages}
        entry_pages = {(version.entry_id, page.pk) for version, pages in self._recorded for page in pages}
        _links_add(EntryVersion, version_pages)
        _links_add(LongTermEntry, entry_pages)
        self._recorded = []


def _links_add(model, pairs: set[tuple[int, int]]) -> None:
    """(row, page) links of `model`'s source_pages, as .add() makes them: one already there is kept."""
    field = model._meta.get_field("source_pages")
    through = field.remote_field.through
    mine, pages = f"{field.m2m_field_name()}_id", f"{field.m2m_reverse_field_name()}_id"
    links = [through(**{mine: row, pages: page}) for row, page in sorted(pairs)]
    through.objects.bulk_create(links, ignore_conflicts=True, batch_size=500)


def record_version(
    entry: LongTermEntry,
    *,
    before: str | None,
    after: str | None,
    cause: str,
    actor: str,
    now: datetime,
    pages: list[Page] = (),
    history: History | None = None,
) -> EntryVersion:
    """A change to `entry`: recorded in `history` (written with it), or written now when none is given."""
    if history is not None:
        return history.record(entry, before=before, after=after, cause=cause, actor=actor, now=now, pages=pages)
    alone = History()
    version = alone.record(entry, before=before, after=after, cause=cause, actor=actor, now=now, pages=pages)
    alone.write()
    return version


def _note(
    entry: LongTermEntry, *, cause: str, actor: str, now: datetime, pages: list[Page] = (), history: History | None
) -> EntryVersion:
    """A version for a change that keeps the value: provenance merged, superseded, evicted."""
    return record_version(
        entry, before=entry.value, after=entry.value, cause=cause, actor=actor, now=now, pages=pages, history=history
    )


@lru_cache(maxsize=4096)
def normalise(text: str) -> str:
    """The text's content words, in order: two facts with the same are the same fact. Kept for the texts
    seen lately: a history's promotion compares each new fact with every active entry, read again for
    each batch."""
    return " ".join(content_tokens(text))


def profile_set(
    space: MemorySpace,
    *,
    attribute: str,
    value: str,
    pages: list[Page],
    cause: str,
    actor: str,
    now: datetime,
    history: History | None = None,
) -> LongTermEntry:
    """Record a profile value. A single-valued attribute takes the new value (the old one stays in the
    history); a multi-valued one gains it beside the others. Repeating a known value only adds its pages
    to the provenance. Caller holds the space lock."""
    entry = LongTermEntry.objects.filter(space=space, kind=Kind.PROFILE, key=attribute, status=Status.ACTIVE).first()
    if entry is None:
        entry = LongTermEntry.objects.create(space=space, kind=Kind.PROFILE, key=attribute, value=value)
        record_version(entry, before=None, after=value, cause=cause, actor=actor, now=now, pages=pages, history=history)
        return entry
    values = entry.value.split(VALUE_SEPARATOR) if is_multi_valued(attribute) else [entry.value]
    new_words = set(content_tokens(value))
    if any(normalise(v) == normalise(value) or new_words <= set(content_tokens(v)) for v in values):
        _note(entry, cause=Cause.MERGED, actor=actor, now=now, pages=pages, history=history)
        return entry
    before = entry.value
    entry.value = VALUE_SEPARATOR.join([*values, value]) if is_multi_valued(attribute) else value
    entry.save(update_fields=["value", "updated_at"])
    record_version(
        entry, before=before, after=entry.value, cause=cause, actor=actor, now=now, pages=pages, history=history
    )
    return entry


@dataclass
class ActiveKnowledge:
    """A space's active entries of one kind, oldest first, with their vectors as one matrix and their words
    normalised: read once for a batch of facts, and kept current by knowledge_add as it adds and supersedes.
    An entry without a vector has a row of zeros and is never similar by vector."""

    entries: list[LongTermEntry]
    vectors: np.ndarray
    has_vector: np.ndarray
    words: list[str]

    @classmethod
    def read(cls, space: MemorySpace, kind: str, dim: int) -> "ActiveKnowledge":
        entries = list(LongTermEntry.objects.filter(space=space, kind=kind, status=Status.ACTIVE).order_by("pk"))
        vectors = np.zeros((len(entries), dim), dtype=np.float32)
        for row, entry in enumerate(entries):
            if entry.embedding is not None:
                vectors[row] = from_bytes(entry.embedding, dim)
        has_vector = np.array([entry.embedding is not None for entry in entries], dtype=bool)
        return cls(entries, vectors, has_vector, [normalise(entry.value) for entry in entries])

    def similarities(self, vector: np.ndarray) -> np.ndarray:
        return self.vectors @ vector if self.entries else np.zeros(0, dtype=np.float32)

    def keep_only(self, rows: list[int]) -> None:
        self.entries = [self.entries[row] for row in rows]
        self.vectors, self.has_vector = self.vectors[rows], self.has_vector[rows]
        self.words = [self.words[row] for row in rows]

    def append(self, entry: LongTermEntry, vector: np.ndarray, words: str) -> None:
        self.entries.append(entry)
        self.vectors = np.vstack([self.vectors, vector[None, :].astype(np.float32)])
        self.has_vector = np.append(self.has_vector, True)
        self.words.append(words)


def knowledge_add(
    space: MemorySpace,
    *,
    kind: str,
    topic: str,
    fact: str,
    vector: np.ndarray,
    pages: list[Page],
    cause: str,
    actor: str,
    now: datetime,
    version: int,
    supersede: bool = True,
    active: ActiveKnowledge | None = None,
    history: History | None = None,
) -> LongTermEntry:
    """Add a fact to user or assistant knowledge: merged into a near-duplicate, or new, superseding an active
    fact on the same topic (when `supersede`) and a user fact whose value it says has changed or sets aside
    (grounding.changes, grounding.sets_aside; between facts CHANGE_SIMILARITY close). Caller holds the space
    lock; `version` is its vector version. `active` is the kind's active entries as read for a batch
    (ActiveKnowledge.read; read here when not given), which this keeps current."""
    active = active or ActiveKnowledge.read(space, kind, vector.shape[0])
    similarity = active.similarities(vector)
    threshold = memory_settings().duplicate_similarity
    words = normalise(fact)
    for row, entry in enumerate(active.entries):
        if (active.has_vector[row] and float(similarity[row]) >= threshold) or active.words[row] == words:
            _note(entry, cause=Cause.MERGED, actor=actor, now=now, pages=pages, history=history)
            entry.save(update_fields=["updated_at"])
            return entry
    new = LongTermEntry.objects.create(
        space=space, kind=kind, key=topic, value=fact, embedding=to_bytes(vector), vector_version=version
    )
    record_version(new, before=None, after=fact, cause=cause, actor=actor, now=now, pages=pages, history=history)
    kept = []
    for row, old in enumerate(active.entries):
        # "standup moved to 9:15" replaces "standup is at 9:30", and "I booked Hotel Hanabusa, not Hotel
        # Sakuraya" replaces "I booked Hotel Sakuraya", whatever topic each was filed under
        close = active.has_vector[row] and float(similarity[row]) >= CHANGE_SIMILARITY
        changed = kind == Kind.USER_KNOWLEDGE and close and (changes(old.value, fact) or sets_aside(old.value, fact))
        if (supersede and old.key == topic) or changed:
            old.status, old.superseded_by, old.vector_version = Status.SUPERSEDED, new, version
            old.save(update_fields=["status", "superseded_by", "vector_version", "updated_at"])
            _note(old, cause=Cause.SUPERSEDED, actor=actor, now=now, pages=pages, history=history)
        else:
            kept.append(row)
    active.keep_only(kept)
    active.append(new, vector, words)
    return new


def profile_value(space: MemorySpace, attribute: str) -> str | None:
    """The attribute's active value, if it has one."""
    active = LongTermEntry.objects.filter(space=space, kind=Kind.PROFILE, key=attribute, status=Status.ACTIVE)
    return active.values_list("value", flat=True).first()


def supersede_told(
    space: MemorySpace,
    *,
    old: str,
    new: str,
    page: Page,
    actor: str,
    now: datetime,
    version: int,
    history: History | None = None,
) -> int:
    """The person said something that replaces what they told before: the active user facts told before
    `page` that state the old value and not the new one are superseded (kept, with their history), so
    that the knowledge holds the latest as the profile does. Returns how many."""
    superseded = 0
    told_before = LongTermEntry.objects.filter(
        space=space, kind=Kind.USER_KNOWLEDGE, status=Status.ACTIVE, source_pages__seq__lt=page.seq
    ).distinct()
    for entry in told_before:
        if states(old, entry.value) and not states(new, entry.value):
            entry.status, entry.vector_version = Status.SUPERSEDED, version
            entry.save(update_fields=["status", "vector_version", "updated_at"])
            _note(entry, cause=Cause.SUPERSEDED, actor=actor, now=now, pages=[page], history=history)
            superseded += 1
    return superseded


def knowledge_enforce_capacity(
    space: MemorySpace, *, kind: str, actor: str, now: datetime, version: int, history: History | None = None
) -> int:
    """Evict the least used active entries of `kind` beyond the space's capacity; returns how many."""
    active = LongTermEntry.objects.filter(space=space, kind=kind, status=Status.ACTIVE)
    excess = active.count() - space.knowledge_capacity
    if excess <= 0:
        return 0
    for entry in active.order_by("hits", "last_hit_at", "updated_at", "pk")[:excess]:
        entry.status, entry.vector_version = Status.EVICTED, version
        entry.save(update_fields=["status", "vector_version", "updated_at"])
        _note(entry, cause=Cause.EVICTED, actor=actor, now=now, history=history)
    return excess


def apply_extraction(
    space: MemorySpace, extraction: Extraction, vectors: np.ndarray, *, now: datetime, version: int
) -> None:
    """Write a validated extraction: profile values, then facts (one vector each, in order). A profile
    value that replaces another (a single-valued attribute: "we moved to Bristol" after "we live in Leeds")
    supersedes the earlier facts that state the old value, as well (supersede_told). The versions and their
    provenance are written together at the end (History)."""
    actor, history = "consolidation", History()
    for item in extraction.profile:
        before = profile_value(space, item.attribute)
        entry = profile_set(
            space,
            attribute=item.attribute,
            value=item.value,
            pages=[item.page],
            cause=extraction.cause,
            actor=actor,
            now=now,
            history=history,
        )
        if before and not is_multi_valued(item.attribute) and entry.value != before:
            supersede_told(
                space,
                old=before,
                new=entry.value,
                page=item.page,
                actor=actor,
                now=now,
                version=version,
                history=history,
            )
    read: dict[str, ActiveKnowledge] = {}
    for item, vector in zip(extraction.facts, vectors, strict=True):
        if item.kind not in read:
            read[item.kind] = ActiveKnowledge.read(space, item.kind, vector.shape[0])
        knowledge_add(
            space,
            kind=item.kind,
            topic=item.topic,
            fact=item.fact,
            vector=vector,
            pages=[item.page],
            cause=extraction.cause,
            actor=actor,
            now=now,
            version=version,
            supersede=item.supersedes,
            active=read[item.kind],
            history=history,
        )
    for kind in (Kind.USER_KNOWLEDGE, Kind.ASSISTANT_KNOWLEDGE):
        knowledge_enforce_capacity(space, kind=kind, actor=actor, now=now, version=version, history=history)
    history.write()


def profile_entries(space: MemorySpace):
    return LongTermEntry.objects.filter(space=space, kind=Kind.PROFILE, status=Status.ACTIVE).order_by("key")


def user_profile(space: MemorySpace) -> dict[str, str]:
    """The current profile as attribute -> value."""
    return {entry.key: entry.value for entry in profile_entries(space)}


def entry_text(kind: str, key: str, value: str) -> str:
    """An entry as every reader shows it: a profile entry as "attribute: value", knowledge as its value. Pure."""
    return f"{key}: {value}" if kind == Kind.PROFILE else value


def knowledge_entries(space: MemorySpace, kind: str):
    return LongTermEntry.objects.filter(space=space, kind=kind, status=Status.ACTIVE).order_by("pk")


SUPERSEDED_HOPS = 5  # a value corrected again and again: the newest within this many corrections


def replaced_on(page_ids: set[int]) -> dict[int, LongTermEntry]:
    """page id -> the active entry that now stands for what an entry drawn from that page said (the entry
    superseded it, directly or through later corrections: "I booked Hotel Sakuraya" -> "the hotel is Hotel
    Hanabusa, not Hotel Sakuraya"), for the pages given that have one. What a capable model's prompt says beside
    a past turn whose words the memory holds replaced (engine/generator.py); not the turn that told the new value.
    A query, one a further hop, and one for the turns of the newest entries."""
    links = LongTermEntry.source_pages.through.objects.filter(
        page_id__in=page_ids,
        longtermentry__status=Status.SUPERSEDED,
        longtermentry__superseded_by__isnull=False,
    ).values_list("page_id", "longtermentry__superseded_by")
    newer = {page_id: entry_id for page_id, entry_id in links}
    found: dict[int, LongTermEntry] = {}
    for _ in range(SUPERSEDED_HOPS):
        if not newer:
            break
        entries = LongTermEntry.objects.in_bulk(set(newer.values()))
        still = {}
        for page_id, entry_id in newer.items():
            entry = entries.get(entry_id)
            if entry is None:
                continue
            if entry.status == Status.ACTIVE:
                found[page_id] = entry
            elif entry.status == Status.SUPERSEDED and entry.superseded_by_id is not None:
                still[page_id] = entry.superseded_by_id
        newer = still
    # A superseded entry keeps the turn that superseded it among its sources: that turn tells the new value itself
    through = LongTermEntry.source_pages.through.objects
    own = set(
        through.filter(page_id__in=found, longtermentry__in=found.values()).values_list("page_id", "longtermentry")
    )
    return {page_id: entry for page_id, entry in found.items() if (page_id, entry.pk) not in own}
