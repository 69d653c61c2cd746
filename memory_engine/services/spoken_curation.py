"""Curation by talking: a message that asks the memory to forget something, or to say what it holds, is
carried out here, whichever model replies and whichever door the turn came through (the reading:
language/memory_requests.py).

Forgetting is what the chat page's × does (services/curation.py: entry_delete): an entry deleted, and the
statements it was drawn from held out of the turns (engine/statement_marks.py), so that no reply, prompt or search
uses them again; Undo is the entry's revert. A statement the memory holds no entry for yet (a turn not yet
consolidated) gets one first, of the person's words, as consolidation would have made it. The deletion's
version names the turn that asked (its source page), which is how `forgotten_by` finds what a turn forgot,
and how the turn itself holds out what it repeated ("forget that I take sertraline").

What is meant is found by the memory's own match: the person's statements and the entries that a search for
the words named ranks (recall.retrievals), scored by their closeness to those words (`score`). Only what
scores SURE is forgotten; when the best scores less but some might be meant, the reply asks, naming them,
and forgets nothing until the next message says yes ("yes", "oui", "yes please, forget them"). "Forget that"
means the person's last message: what it told.

A statement is forgotten by its clause that matches ("and my midwife is Funmi" stays when "I have gestational
diabetes" goes): an entry drawn from the turn that states no more than the clause is deleted; one that says
more (a sentence kept whole) is edited to the rest, as a correction is; with neither, an entry of the clause
is made and deleted. Undo reverts each entry to its version before (`Forgotten.undo_to`).

A message asking to forget more than MAX_FORGETS things is bulk work, not a conversation: each thing is a
search, so such a message forgets nothing and the reply says why (the memory panel's × does the rest).

`plan` is read-only: it finds what a request would do and the reply that says so. `carry_out` does it, once
the turn that asked is stored (conversation.turn_add), so a reply stopped before then changes nothing.
"""

from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
from django.utils import timezone

from memory_engine.engine import recall
from memory_engine.engine.grounding import states
from memory_engine.engine.long_term import entry_text, knowledge_add, topic_words
from memory_engine.engine.statement_marks import clauses, without
from memory_engine.language import things_named
from memory_engine.language.asked import HELD_DOSE, HELD_WORD, holds
from memory_engine.language.keywords import content_tokens
from memory_engine.language.memory_requests import FORGET, MemoryRequest, agrees, asks_in_english, read_all
from memory_engine.language.reading import asks, plain, second_person, split_sentences
from memory_engine.language.word_lists import (
    FUNCTION_WORDS,
    OWN_WORDS,
    OWNER_ARTICLES,
    RELATIVES,
)
from memory_engine.models import EntryVersion, LongTermEntry, MemorySpace, Page
from memory_engine.services.curation import entry_delete, entry_edit
from memory_engine.store.embeddings import get_embedder
from memory_engine.store.writes import space_write

CAUSE = EntryVersion.Cause.CONVERSATION
ACTOR = "conversation"
SURE = 0.55  # a statement or entry this close to the words named is forgotten ...
MARGIN = 0.15  # ... with all within this of the best
MAYBE = 0.30  # below SURE, from this score it may be meant: the reply asks
LEXICAL = 0.4  # the share of the named words found in it, weighed beside the cosine
ASKED_ABOUT = 3  # what an unsure reply names, at most
LISTED = 20  # what "what do you know about me?" lists, at most
MAX_FORGETS = 10  # things one message may ask to forget: each is a search, and more is the memory panel's work
TOO_MANY = (
    "That asks me to forget {count} things at once; I forget at most {most} in one message, so I've forgotten "
    "nothing. Please ask for a few at a time, or use \u00d7 beside each in the memory panel."
)
_GENERIC = frozenset(
    {"said", "told", "tell", "thing", "bit", "part", "stuff", "mention", "mentioned", "everything", *OWN_WORDS}
)
# The other languages' short words, which name nothing ("de", "mon", "aus"); not those that are English words too
# ("forget the die thing").
_FUNCTION_WORDS = frozenset(
    content_tokens(" ".join((*FUNCTION_WORDS, *OWNER_ARTICLES, "aus", "von", "vom", "zum")))
) - frozenset(("die", "ma", "da", "do", "con", "den", "em", "mi", "dose"))
MAX_NAMED_WORDS = 30  # words of a thing named that are read: a longer request names nothing more surely


@dataclass(frozen=True)
class Target:
    """Something a forget request may mean: a statement of the person's, or an entry."""

    text: str
    said_at: datetime
    score: float
    page_id: int | None = None  # a statement's turn
    entry_id: int | None = None  # an entry
    this_turn: bool = False  # a statement of the message that asks ("My PIN is 2208, no, forget that")


@dataclass(frozen=True)
class Plan:
    """The reply to a message's requests, and `forget`: what carrying them out forgets (none for a reply
    that asks what was meant, or lists what is kept)."""

    text: str
    forget: tuple[Target, ...] = ()
    answered: str = ""  # the answer to a question asked beside the requests, which `text` opens with


NOTHING = Plan("")  # a message planned already, which asks nothing of the memory


def plan(space: MemorySpace, message: str, *, now: datetime | None = None, replying: bool = False) -> Plan | None:
    """What `message` asks of the memory, planned, or None when it asks nothing of it (nor "forget that" after a
    message that told nothing). `replying`: the plan's text is a chat reply, so a question asked beside the
    requests is answered too (`_answered_beside`); a turn stored with a reply of its own, or imported, needs only
    what it forgets. Read-only."""
    requests = tuple(read_all(message))
    now = now or timezone.now()
    if not requests:
        return _agreed(space, message, now)
    forgets = [r for r in requests if r.kind == FORGET]
    if not forgets:
        return Plan(_listing(_kept(space), _not_yet_kept(space), now))
    if len(forgets) > MAX_FORGETS:  # "Forget my thing1. Forget my thing2. ..." 400 times: 400 searches
        return Plan(TOO_MANY.format(count=len(forgets), most=MAX_FORGETS))
    done, asked, pointed, forget = [], [], [], []
    for request in forgets:
        here = _told_here(message, request)
        if request.last_thing:  # what this message told before, or else the last message
            chosen, maybe = here or tuple(_last_told(space)), ()
            if not chosen:
                continue  # "forget it" after a question: never mind
        else:
            chosen, maybe = _meant(space, request)
            if request.tentative and not chosen:
                continue  # "forget the formal tone": nothing of theirs, so a request to the model
            if request.pointed and not chosen and here:
                chosen, maybe = here, ()  # "My PIN is 2208. Please delete it.": what this message told
        if chosen:
            what = "that" if request.last_thing or chosen is here else f"what I kept about {_thing(request)}"
            done += [] if any(_same_thing(what, said) for said in done) else [what]
        else:
            # "vergiss den Token, I should not have put it here. Forget it please": the same thing said again; and
            # after what was forgotten, "I keep nothing about" what else a message seemed to name is noise
            (pointed if request.pointed or not maybe else asked).append(_unsure_reply(request, maybe, now))
        forget += chosen
    asked += [] if done else pointed
    if not done and not asked:
        return None
    said = [_forgot_reply(done, forget, now)] if done else []
    beside = _answered_beside(space, message, requests, forget, now) if replying and not asked else []
    return Plan(" ".join([*beside, *said, *asked]), forget=tuple(forget), answered=" ".join(beside))


def _answered_beside(
    space: MemorySpace, message: str, requests: tuple[MemoryRequest, ...], forget: list[Target], now: datetime
) -> list[str]:
    """The answer to what `message` asks besides its requests ("jak się nazywa teacher Antka? ... A, i zapomnij
    proszę o tym co pisałam o Bartku"), as recall gives it from what is kept: [the reply], or [] when nothing is
    asked besides, recall leaves it to a model, or it quotes what this message forgets. `questions` and the
    clauses are compared plain (lower case); the question goes to recall as written (its names capitalised)."""
    clauses = [plain(r.clause) for r in requests if r.clause]
    asked = [
        sentence
        for sentence in split_sentences(message)
        if asks(said := plain(sentence)) and not any(c in said or said in c for c in clauses)
    ]
    if not asked:
        return []
    found = recall.answer(space, " ".join(asked), now=now)
    pages, texts = {t.page_id for t in forget if t.page_id is not None}, {t.text for t in forget}
    if found is None or any(s.page_id in pages or s.text in texts for s in found.quoted):
        return []
    return [found.text]


def _agreed(space: MemorySpace, message: str, now: datetime) -> Plan | None:
    """A yes to the memory's last reply when it asked what a request to forget meant ("Did you mean ...?"): what
    it asked about, forgotten; None for any other message, or a yes to anything else."""
    if not agrees(message):
        return None
    last = Page.objects.filter(space=space).defer("embedding").order_by("-seq").first()
    if last is None or last.reply_source != Page.ReplySource.CURATION or _ASKED not in last.agent_response:
        return None
    done, forget = [], []
    for request in read_all(last.user_input):
        if request.kind != FORGET or request.last_thing:
            continue
        chosen, maybe = _meant(space, request)
        if maybe and not chosen:  # what the reply asked about; what it was sure of went then
            done.append(f"what I kept about {_thing(request)}")
            forget += maybe
    return Plan(_forgot_reply(done, forget, now), forget=tuple(forget)) if forget else None


def _same_thing(one: str, other: str) -> bool:
    """Whether two requests' phrases name one thing ("forget my passport number ... delete that from your
    memory": "your passport number" twice), by their words; "that" is the same only as "that"."""
    words, others = set(content_tokens(one)), set(content_tokens(other))
    return one == other or bool(words and others and (words <= others or others <= words))


def _told_here(message: str, request: MemoryRequest) -> tuple[Target, ...]:
    """What `message` told before the clause that asks `request` (as recall reads statements), as targets of
    the turn that asks; for a request that points at a clause, only what holds that clause. Requests to the
    memory are no part of it."""
    start = message.find(request.clause)
    head = message[:start] if start > 0 else ""
    candidates, _ = recall.told_in(head)
    # A clause said to the assistant ("I should prefer that you not retain my home address") tells nothing here.
    told = [
        text
        for text in candidates
        if text in head
        and len(set(content_tokens(text))) >= recall.MIN_CONTENT_WORDS  # "oh no, forget that" told nothing
        and not read_all(text)
        and not things_named.TO_YOU.search(text)
    ]
    if request.pointed:
        told = [text for text in told if request.about in text or text in request.about]
    widest = [text for text in told if not any(other != text and text in other for other in told)]
    return tuple(Target(text, timezone.now(), 1.0, this_turn=True) for text in widest)


def _named_by(request: MemoryRequest) -> str:
    """What a request names (`named`); for one that points at a clause, from its first word owning something on
    ("I should prefer that you not retain my home address" -> "my home address")."""
    thing = named(request.about)
    if request.pointed and (own := things_named.OWNING_WORD.search(thing)) is not None:
        thing = thing[own.start() :]
    return thing


def _thing(request: MemoryRequest) -> str:
    """What a request names, in the reply's words ("your home address"); as said when it asks in another language
    ("Bartku i pracy", where Polish "i" is "and", not "you")."""
    thing = _named_by(request).strip(" .!?")
    return second_person(thing) if asks_in_english(request) else thing


def _meant(space: MemorySpace, request: MemoryRequest) -> tuple[tuple[Target, ...], tuple[Target, ...]]:
    """What a request to forget means: the targets that score SURE (the best and those within MARGIN of it, each
    narrowed to its clause), or else those that may be meant, for the reply to ask about."""
    thing = _named_by(request)
    maybe: tuple[Target, ...] = ()
    chosen: list[Target] = []
    # the whole of what it names, then each thing of a list alone ("my eyes, the glaucoma and the drops both")
    for named_here in (thing, *_listed(thing)):
        targets = _matching(space, named_here)
        best = targets[0].score if targets else 0.0
        if best >= SURE:
            sure = _narrowest([t for t in targets if t.score >= max(SURE, best - MARGIN)])
            kept = {(t.text, t.page_id, t.entry_id) for t in chosen}
            narrowed = (_by_clause(t, named_here) for t in sure)
            chosen += [t for t in narrowed if (t.text, t.page_id, t.entry_id) not in kept]
        elif named_here == thing:
            maybe = tuple(t for t in targets if t.score >= MAYBE)[:ASKED_ABOUT]
    if not chosen and (head := head_of(thing)):
        # "the thing about lyle's birthday he says he don't want any fuss": what it names before the clause
        targets = _matching(space, head)
        best = targets[0].score if targets else 0.0
        sure = [t for t in targets if t.score >= max(SURE, best - MARGIN)]
        chosen = [_by_clause(t, head) for t in _narrowest(sure)]
    return (tuple(_narrowest(chosen)), ()) if chosen else ((), maybe)


@dataclass(frozen=True)
class Forgotten:
    """An entry a request to forget changed (deleted, or edited to what it says besides), and the version Undo
    gives it back (services/curation.py: entry_revert)."""

    entry: LongTermEntry
    undo_to: int


def forget_as_asked(space: MemorySpace, page: Page) -> list[Forgotten]:
    """Carry out what a stored turn of a history asks the memory to forget (an import, stored many turns at
    once: services/ingest.py), as the chat would have when it was said: only what was told before it or in it,
    never what the person told after asking. Returns what changed; [] for a turn that asks nothing."""
    if not any(request.kind == FORGET for request in read_all(page.user_input)):
        return []
    planned = plan(space, page.user_input, now=page.timestamp)
    if planned is None or not planned.forget:
        return []
    named = [target.page_id for target in planned.forget if target.page_id is not None]
    later = set(Page.objects.filter(space=space, pk__in=named, seq__gt=page.seq).values_list("pk", flat=True))
    before = tuple(target for target in planned.forget if target.page_id not in later)
    return carry_out(space, replace(planned, forget=before), asked_in=page) if before else []


def carry_out(space: MemorySpace, planned: Plan, *, asked_in: Page) -> list[Forgotten]:
    """Forget what `planned` forgets, each change naming `asked_in`, the turn that asked; returns what changed.
    For each statement, the entries drawn from its turn: deleted when they state no more than it, edited to the
    rest when they say more; an entry of its words is made and deleted when none held it. An entry meant is
    deleted whole."""
    deleted: dict[int, LongTermEntry] = {}
    edits: dict[int, tuple[LongTermEntry, list[str]]] = {}
    for target in planned.forget:
        if target.entry_id is not None:
            entry = LongTermEntry.objects.filter(space=space, pk=target.entry_id).defer("embedding").first()
            if entry is not None:
                deleted[entry.pk] = entry  # whole: what is left of "my HIV status, on Biktarvy" still says it
            continue
        page = (
            asked_in
            if target.this_turn
            else Page.objects.filter(space=space, pk=target.page_id).defer("embedding").first()
        )
        if page is None:
            continue
        drawn = _drawn_from(space, page)
        within = [e for e in drawn if states(e.value, target.text)]
        beyond = [e for e in drawn if e not in within and states(target.text, e.value)]
        for entry in within or ([] if beyond else [_entry_of_words(space, page, target.text)]):
            deleted[entry.pk] = entry
        for entry in beyond:
            edits.setdefault(entry.pk, (entry, []))[1].append(target.text)
    changed = []
    for entry in deleted.values():
        changed.append(Forgotten(entry, _undo_to(entry)))
        entry_delete(entry=entry, actor=ACTOR, cause=CAUSE, asked_in=asked_in)
    for pk, (entry, parts) in edits.items():
        entry.refresh_from_db()
        if pk in deleted or entry.status != LongTermEntry.Status.ACTIVE:
            continue  # gone with an entry drawn from the same statement (engine/statement_marks.py), its Undo with it
        rest = without(entry.value, [(part, "") for part in parts])
        undo_to = _undo_to(entry)
        if len(set(content_tokens(rest))) < 2:  # nothing left worth keeping
            entry_delete(entry=entry, actor=ACTOR, cause=CAUSE, asked_in=asked_in)
        else:
            entry_edit(entry=entry, value=rest, actor=ACTOR, cause=CAUSE, asked_in=asked_in)
        changed.append(Forgotten(entry, undo_to))
    return changed


def _undo_to(entry: LongTermEntry) -> int:
    """The entry's version that Undo gives back: its latest that left a value, before a change now."""
    return entry.versions.exclude(after=None).order_by("-at", "-pk").values_list("pk", flat=True).first()


def forgotten_by(page: Page) -> list[Forgotten]:
    """What the turn `page` asked to forget, still forgotten: each entry it changed whose latest change is that
    one (an Undo since gives it back), with the version Undo gives back."""
    found = []
    changes = EntryVersion.objects.filter(cause=CAUSE, source_pages=page).select_related("entry").order_by("pk")
    for change in changes:
        entry = change.entry
        latest = entry.versions.order_by("-at", "-pk").first()
        if latest is None or latest.pk != change.pk:
            continue
        before = (
            entry.versions.exclude(after=None)
            .filter(pk__lt=change.pk)
            .order_by("-at", "-pk")
            .values_list("pk", flat=True)
            .first()
        )
        if before is not None:
            found.append(Forgotten(entry, before))
    return found


# --- Finding what is meant ------------------------------------------------------------------------


def named(about: str) -> str:
    """The thing a request names, without its frame or article: "what I said about my diagnosis" -> "my
    diagnosis", "den Token" -> "Token". Pure."""
    thing = things_named.FRAME_END.sub("", things_named.FRAME.sub("", about.strip()).strip()).strip()
    return things_named.ARTICLE.sub("", thing).strip() or thing or about


def head_of(thing: str) -> str:
    """The thing named before a clause of someone's that goes on after it ("lyle's birthday he says he don't want
    any fuss" -> "lyle's birthday"), or "" when none does. Only a fallback: "my dad he has cancer" names the
    cancer, not every statement about the dad. Pure."""
    goes_on = things_named.GOES_ON.search(thing)
    if goes_on and set(content_tokens(thing[: goes_on.start()])) - _GENERIC:
        return thing[: goes_on.start()].strip(" ,")
    return ""


def score(about: str, texts: list[str], encoder) -> list[float]:
    """How close each text is to the thing named: the MiniLM cosine plus LEXICAL times the share of its
    content words the text holds (`asked.holds`: "my passport number" in "my passport number is X123", "my
    diagnosis" in "got diagnosed w adhd", "the meds" in "methylphenidate 10mg"; the other languages' short words
    ("de", "mon") are no part of it). Pure apart from the encoder."""
    if not texts:
        return []
    vectors = encoder.encode([about, *texts])
    cosines = vectors[1:] @ vectors[0]
    words = list(dict.fromkeys(w for w in content_tokens(about) if w not in _GENERIC and w not in _FUNCTION_WORDS))
    words = words[:MAX_NAMED_WORDS]
    shares = [_share(words, text) for text in texts]
    return [round(float(c) + LEXICAL * share, 6) for c, share in zip(np.asarray(cosines), shares, strict=True)]


def _share(words: list[str], text: str) -> float:
    """The share of the named words `text` holds (`asked.holds`); a figure or a dose counts for a value's word or a
    medicine's only beside another word held ("Preis aus dem Angebot": "das Angebot liegt bei 1.380 Euro"), never
    alone ("my salary", never told, is not "my rent is 1200"), but for a dose of the person's own ("the meds":
    "the doc put me on methylphenidate 10mg"; not "my dad takes warfarin 5mg")."""
    if not words:
        return 0.0
    said = frozenset(content_tokens(text))
    held = [holds(word, text, said) for word in words]
    if HELD_WORD not in held and not (
        HELD_DOSE in held and things_named.FIRST_PERSON.search(text) and not said & _RELATIVES
    ):
        return 0.0
    return sum(bool(how) for how in held) / len(words)


def _matching(space: MemorySpace, thing: str) -> list[Target]:
    """The statements and entries a search for the thing named finds, best first, with their scores."""
    _, deep = recall.retrievals(space, thing)
    statements = recall.statements_of(deep, thing, searching=True)  # what a request names may be among them
    items = [*deep.profile, *deep.user_knowledge]
    texts = [s.text for s in statements] + [item.text for item in items]
    scores = score(thing, texts, get_embedder())
    targets = [Target(s.text, s.said_at, scores[i], page_id=s.page_id) for i, s in enumerate(statements)] + [
        Target(
            item.text,
            datetime.fromisoformat(item.provenance["updated_at"]),
            scores[len(statements) + i],
            entry_id=item.id,
        )
        for i, item in enumerate(items)
    ]
    return sorted(targets, key=lambda t: -t.score)


def _narrowest(targets: list[Target]) -> list[Target]:
    """The targets without those that hold another of them (a message quoted whole beside its sentence)."""
    return [
        t
        for t in targets
        if not any(o is not t and o.page_id == t.page_id and o.text != t.text and o.text in t.text for o in targets)
    ]


_RELATIVES = frozenset(content_tokens(" ".join(RELATIVES)))
_NAMES_NOTHING = frozenset(content_tokens("whatever it's called whatever his her their name is something like that"))


def _listed(thing: str) -> list[str]:
    """The things a request names in a list, each alone ("the glaucoma and the drops both" -> "the glaucoma", "the
    drops both"; "my diagnosis or the meds"); [] for one thing. Pure."""
    parts = [part for part in things_named.LIST_SEPARATOR.split(thing) if set(content_tokens(part)) - _NAMES_NOTHING]
    return parts if len(parts) > 1 else []


def _by_clause(target: Target, thing: str) -> Target:
    """A statement narrowed to its clause that matches the thing named best, when that clause matches nearly as
    well as the whole ("and my midwife is Funmi" is no part of "forget my gestational diabetes")."""
    pieces = [piece for sentence in split_sentences(target.text) for piece in clauses(sentence)]
    if target.page_id is None or len(pieces) < 2:
        return target
    scores = score(thing, pieces, get_embedder())
    best = max(range(len(pieces)), key=lambda i: scores[i])
    if scores[best] < target.score - MARGIN:
        return target
    return replace(target, text=pieces[best], score=scores[best])


def _last_told(space: MemorySpace) -> list[Target]:
    """What the person's last message told, as recall reads statements."""
    page = Page.objects.filter(space=space).defer("embedding").order_by("-seq").first()
    if page is None:
        return []
    candidates, _ = recall.told_in(page.user_input)
    sentences = [text for text in candidates if text in page.user_input]
    return [Target(text, page.timestamp, 1.0, page_id=page.pk) for text in sentences]


def _drawn_from(space: MemorySpace, page: Page) -> list[LongTermEntry]:
    return list(
        LongTermEntry.objects.filter(space=space, status=LongTermEntry.Status.ACTIVE, source_pages=page)
        .exclude(kind=LongTermEntry.Kind.ASSISTANT_KNOWLEDGE)
        .defer("embedding")
    )


def _entry_of_words(space: MemorySpace, page: Page, sentence: str) -> LongTermEntry:
    """An entry of the person's words `sentence`, drawn from `page`, as consolidation keeps one (a
    near-duplicate already kept is that one)."""
    vector = get_embedder().encode_one(sentence)
    with space_write(space.pk) as write:
        return knowledge_add(
            write.space,
            kind=LongTermEntry.Kind.USER_KNOWLEDGE,
            topic=topic_words(sentence),
            fact=sentence,
            vector=vector,
            pages=[page],
            cause=EntryVersion.Cause.WORDS,
            actor=ACTOR,
            now=timezone.now(),
            version=write.version,
            supersede=False,
        )


# --- What the memory holds ------------------------------------------------------------------------


def _kept(space: MemorySpace) -> list[LongTermEntry]:
    """The profile, then the person's knowledge, newest first."""
    active = LongTermEntry.objects.filter(space=space, status=LongTermEntry.Status.ACTIVE).defer("embedding")
    profile = list(active.filter(kind=LongTermEntry.Kind.PROFILE).order_by("key"))
    facts = list(active.filter(kind=LongTermEntry.Kind.USER_KNOWLEDGE).order_by("-updated_at", "-pk")[:LISTED])
    return (profile + facts)[:LISTED]


def _not_yet_kept(space: MemorySpace) -> list[Target]:
    """What the person told in the turns still in short-term memory (not consolidated into entries yet), in
    the order told, as recall reads statements; requests to the memory left out."""
    pages = Page.objects.filter(space=space, tier=Page.Tier.SHORT).only("id", "user_input", "timestamp", "seq")
    told = []
    for page in pages.order_by("seq"):
        if read_all(page.user_input):
            continue
        sentences, _ = recall.told_in(page.user_input)
        told += [Target(text, page.timestamp, 1.0, page_id=page.pk) for text in sentences[:1]]
    return told[-LISTED:]


# --- Replies ------------------------------------------------------------------------------------


def _forgot_reply(what: list[str], targets: list[Target], now: datetime) -> str:
    """What was forgotten (`what`: each request's, in the person's terms), and when it was told; never the words
    forgotten."""
    days = sorted({recall.when_said(t.said_at, now) for t in targets if t.page_id is not None})
    told = f" (told {' and '.join(days)})" if days else ""
    return f"Done: I've forgotten {' and '.join(what)}{told}. Undo gives it back."


def _unsure_reply(request: MemoryRequest, maybe: tuple[Target, ...], now: datetime) -> str:
    thing = _thing(request)
    if not maybe:
        return f"I keep nothing about {thing}, so I've forgotten nothing."
    said = {}  # a statement and the entry kept of it read the same: named once, as first told
    for target in sorted(maybe, key=lambda t: t.said_at):
        said.setdefault(target.text, target)
    options = "; ".join(f"\u201c{t.text}\u201d ({recall.when_said(t.said_at, now)})" for t in said.values())
    return (
        f"I'm not sure what to forget about {thing}, so {_ASKED} {options}? Say yes to forget "
        f"{'it' if len(said) == 1 else 'them'}, or tell me again with its words, e.g. \u201cforget that I ...\u201d."
    )


_ASKED = "I've forgotten nothing yet. Did you mean"  # in a reply that asks what a request meant (_agreed)


def _listing(entries: list[LongTermEntry], recent: list[Target], now: datetime) -> str:
    """The entries with the day each was kept, then what the latest turns told, in the person's words."""
    if not entries and not recent:
        return "I don't keep anything about you yet."
    lines = [f"- {entry_text(entry.kind, entry.key, entry.value)}" for entry in entries]
    lines = [f"{line} ({recall.when_said(entry.updated_at, now)})" for line, entry in zip(lines, entries, strict=True)]
    lines += [
        f"- \u201c{t.text}\u201d ({recall.when_said(t.said_at, now)}, not sorted into the memory yet)" for t in recent
    ]
    body = "\n".join(lines)
    return f"Here is what I keep about you:\n{body}\nSay \u201cforget ...\u201d and I'll drop any of it."


__all__ = ["NOTHING", "Forgotten", "Plan", "Target", "carry_out", "forgotten_by", "plan"]
