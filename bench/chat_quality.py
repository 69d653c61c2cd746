"""Chat quality: how the assistant's replies read, and what it remembers, over scripted conversations.

Two sets: data/chat_quality.json (written for this project alongside the reply path: facts stated plainly,
questions in the same words) and data/chat_fresh.json (written afterwards by someone else, to judge it:
facts said in passing, paraphrased questions, facts that change, questions 10+ turns later). Each
conversation is one user who tells the assistant things, makes small talk and later asks about them.
Every turn goes through the real reply path (`services.conversation.reply`: retrieval, the reply, the turn
stored), and the space is consolidated after each turn, off the reply's clock, as a worker would. The
same questions are also asked of a space with no memory, as the baseline.

Per run it counts what a demo audience sees: whether an answer holds the fact it was told (and whether it
gave only the old value of a fact that changed), replies that recite the prompt, replies that open with or
claim the person's name or describe them by it, loops, replies at the token cap, and reply time; and
what became memory: every profile value, knowledge entry and session summary left at the end, and those
holding a word the person never said. With a load (`load`), each reply also records whether a worker
was consolidating (promotions included) while it was written.
"""

from __future__ import annotations

import json
import re
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from django.utils import timezone

from memory_engine.engine import generator
from memory_engine.language.keywords import content_tokens
from memory_engine.language.word_lists import LANGUAGES
from memory_engine.llm import LLM, chat_sampling
from memory_engine.llm.degeneration import most_repeated_ngram
from memory_engine.models import LongTermEntry, MidTermSession, Page
from memory_engine.services.consolidation import ConsolidationRequest, run_consolidation
from memory_engine.services.conversation import reply
from memory_engine.services.spaces import assistant_create, space_get, user_create

DATA = Path(__file__).parent / "data" / "chat_quality.json"
FRESH = Path(__file__).parent / "data" / "chat_fresh.json"
TURN_MINUTES = 2


@dataclass
class ReplyRecord:
    conversation: str
    said: str
    text: str
    seconds: float
    prompt_tokens: int
    completion_tokens: int
    at_cap: bool
    withheld: bool
    retried: bool
    max_ngram_repeats: int
    claims_identity: bool
    expect: list[str] | None = None  # an ask: the alternatives of the told fact
    found: bool | None = None
    stale: bool | None = None  # an ask about a fact that changed, answered with only its old value
    leak: str | None = None  # the part of the prompt the reply recites
    names_user: bool = False  # opens with the person's name, claims it, or describes them by it
    source: str = ""  # who made the reply: "model", "weak_model", "quoted" (Page.ReplySource)
    under_load: bool | None = None  # a worker was consolidating from its start to its end
    not_told: bool = False  # an ask about something the person never told
    condolences: bool = False  # offers condolences though the person spoke of no loss
    unsaid: str | None = None  # a model's reply claiming what the person never said: the claim


@dataclass
class MemoryRecord:
    """What one conversation left in memory: every active profile value, knowledge entry and session
    summary, and those with a word the person never said (up to a few of each, as examples)."""

    conversation: str
    entries: int
    unsupported: int
    sentence_values: int  # profile values that are sentences ("I live in Porto.") rather than values
    examples: list[str] = field(default_factory=list)


@dataclass
class RunResult:
    label: str
    memory: bool
    records: list[ReplyRecord] = field(default_factory=list)
    memories: list[MemoryRecord] = field(default_factory=list)
    same_reply_conversations: int = 0

    def summary(self) -> dict:
        records = self.records
        warm = records[1:] or records  # the first reply also loads the model
        asks = [r for r in records if r.expect is not None]
        never = [r for r in records if r.not_told]
        changed = [r for r in asks if r.stale is not None]
        seconds = sorted(r.seconds for r in warm)
        loaded = sorted(r.seconds for r in warm if r.under_load)
        tokens = [r.completion_tokens for r in records]
        entries = sum(m.entries for m in self.memories)
        return {
            "label": self.label,
            "memory": self.memory,
            "replies": len(records),
            "questions": len(asks),
            "at_cap": _share(r.at_cap for r in records),
            "looping (a 4-word sequence > 3 times)": _share(r.max_ngram_repeats > 3 for r in records),
            "max 4-gram repeats": max((r.max_ngram_repeats for r in records), default=0),
            "withheld": _share(r.withheld for r in records),
            "retried": _share(r.retried for r in records),
            "mean prompt tokens": round(statistics.fmean(r.prompt_tokens for r in records), 1) if records else 0,
            "mean tokens": round(statistics.fmean(tokens), 1) if tokens else 0,
            "p95 tokens": _p95(sorted(tokens)),
            "mean seconds": round(statistics.fmean(seconds), 2) if seconds else 0,
            "p95 seconds": round(_p95(seconds), 2),
            "fact recalled": _share(r.found for r in asks),
            "changed facts answered with only the old value": f"{sum(bool(r.stale) for r in changed)}/{len(changed)}",
            "never-told questions": len(never),
            "never told, said so": _share(says_not_told(r.text) for r in never),
            "never told, answered with a quote (a guess)": sum(
                r.source == "quoted" and not says_not_told(r.text) for r in never
            ),
            "replies reciting the prompt": sum(r.leak is not None for r in records),
            "replies opening with, claiming or describing the person's name": sum(r.names_user for r in records),
            "claims the user's identity": _share(r.claims_identity for r in records),
            "replies quoting the person's words": _share(r.source == "quoted" for r in records),
            "small talk answered with a quote": sum(
                r.source == "quoted" and r.expect is None and not r.not_told for r in records
            ),
            "condolences for a loss never spoken of": sum(r.condolences for r in records),
            "model replies claiming what the person never said": sum(r.unsaid is not None for r in records),
            "conversations with one reply to two questions": self.same_reply_conversations,
            "memory entries (profile, knowledge, summaries)": entries,
            "entries with words the person never said": sum(m.unsupported for m in self.memories),
            "profile values that are sentences": sum(m.sentence_values for m in self.memories),
            "replies under load": len(loaded),
            "p95 seconds under load": round(_p95(loaded), 2) if loaded else None,
        }


_NOT_TOLD = re.compile(
    r"\b(?:haven't told me|have not told me|don't think you've told me|didn't tell me|never told me|"
    r"not told me|don't know (?:your|that)|asked to forget)\b",
    re.IGNORECASE,
)


def says_not_told(text: str) -> bool:
    """Whether a reply says the person never told it (what a never-told question should get)."""
    return bool(_NOT_TOLD.search(text.replace("\u2019", "'")))


def _share(flags) -> float:
    flags = list(flags)
    return round(sum(bool(f) for f in flags) / len(flags), 3) if flags else 0.0


def _p95(values: list[float]) -> float:
    if not values:
        return 0.0
    return values[min(len(values) - 1, round(0.95 * (len(values) - 1)))]


def load_conversations(path: Path = DATA, limit: int | None = None) -> list[dict]:
    conversations = json.loads(path.read_text())["conversations"]
    return conversations[:limit] if limit else conversations


def found(text: str, expect: list[str]) -> bool:
    """Whether the reply contains any alternative of the fact (case-insensitive, as a word, its plural:
    "peanuts" holds "peanut", or a number's ordinal: "October 10th" holds "October 10")."""
    return any(
        re.search(rf"(?<!\w){re.escape(alt)}{_ENDING[alt[-1:].isdigit()]}(?!\w)", text, re.IGNORECASE) for alt in expect
    )


_ENDING = {False: "(?:s|es)?", True: "(?:st|nd|rd|th)?"}


_QUOTED = re.compile(r"\u201c[^\u201d]*\u201d|\"[^\"]*\"")


def _unquoted(text: str) -> str:
    """The reply without what it quotes: the person's own words quoted back are theirs, not the reply's."""
    return _QUOTED.sub(" ", text.replace("\u2019", "'"))


def claims_identity(text: str, name: str, identity: list[str]) -> bool:
    """Whether the reply speaks as the user: "I'm Sam", "my name is Sam", "I'm a nurse", "I work as a
    nurse" (outside what it quotes)."""
    text = _unquoted(text)
    subjects = r"\b(?:i'm|i am|my name is|my name's|call me|i work as|i'm working as)\s+(?:an?\s+|the\s+)?"
    wanted = [re.escape(word) for word in (name, *identity) if word.strip()]
    if not wanted:
        return False
    return re.search(subjects + r"(?:" + "|".join(wanted) + r")\b", text, re.IGNORECASE) is not None


_DESCRIBES = r"(?:'s\b|\s+(?:is|was|has|had|loves|likes|lives|works|enjoys|seems|describes)\b|\s*[-\u2013\u2014:(])"


def names_user(text: str, name: str, identity: list[str]) -> bool:
    """Whether the reply takes the person's name the way a weak model does: it opens with it ("Maria
    Lindqvist. She is ..."; a greeting first is fine: "Hi Maria!"), claims it (claims_identity), or
    describes them by it ("Dana's a wonderful person", "Maria is an Italian doctor"). Outside quotes."""
    if claims_identity(text, name, identity):
        return True
    names = [part for part in {name.strip(), *name.split()[:1]} if len(part) >= 2]
    if not names:
        return False
    said = _unquoted(text).strip()
    alternatives = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
    if re.match(rf"\W*(?:{alternatives})\b", said, re.IGNORECASE):
        return True
    return re.search(rf"\b(?:{alternatives}){_DESCRIBES}", said, re.IGNORECASE) is not None


_CONDOLENCES = re.compile(
    r"\b(?:sorry (?:for|about) (?:your|the|their|his|her) loss|condolences?|deepest sympath|my sympath|"
    r"sorry to hear (?:about|of) (?:the )?(?:loss|passing|death)|passed away|passing of|rest in peace|r\.?i\.?p\b|"
    r"thoughts and prayers|my thoughts are with|in (?:this|these) difficult times?|grieving|grief|"
    r"lost (?:a|your|their) (?:loved one|dear))",
    re.IGNORECASE,
)
_LOSS = re.compile(
    r"\b(?:died|dies|dying|dead|death|passed away|passed on|passing|funeral|loss|lost (?:my|our|her|his)|"
    r"grief|grieving|rip|memorial|buried|put down|put to sleep|hospice|widow|widowed|miscarriage)\b",
    re.IGNORECASE,
)


def offers_condolences(text: str, said: list[str]) -> bool:
    """Whether the reply offers condolences ("I'm sorry for your loss") though nothing the person said so
    far (`said`, their messages) speaks of a death or a loss."""
    return bool(_CONDOLENCES.search(_unquoted(text))) and not any(_LOSS.search(line) for line in said)


# A model that was given no memory saying what the person told it.
_TOLD_CLAIM = re.compile(
    r"\b(?:you(?:'ve| have)? (?:told|mentioned|said)|as you (?:said|mentioned)|you (?:once )?(?:told|said to) me|"
    r"(?:last time|earlier) you)\b",
    re.IGNORECASE,
)
# A capitalised word inside a sentence: a name.
_INNER_NAME = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z\u00e0-\u00ff]+(?:['\u2019]s)?")
_NOT_NAMES = {
    "i", "i'm", "i've", "i'd", "i'll", "ok", "okay", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday", "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "christmas", "easter", "god", "internet", *LANGUAGES,
    "hi", "hello", "hey", "dear",  # a greeting after a colon ("a note: Hi there") names no one
    "earth",  # "found everywhere on Earth" says nothing of the person
}  # fmt: skip


_HEADINGS = re.compile(r"\*\*[^*\n]*\*\*|^#+ .*$|^\s*(?:\d+[.)]|[-*\u2022])\s*[^:\n]{0,60}:", re.MULTILINE)
_FICTION = re.compile(r"\b(?:story|stories|joke|jokes|poem|poems|limerick|song|tale|riddle|pun|haiku|rhyme)\b", re.I)


def claims_unsaid(text: str, said: list[str], own_names: list[str] = ()) -> str | None:
    """What a model's reply claims that the person never said, or None: that they told it something ("you
    mentioned ..."), or a name (a capitalised word inside a sentence) nowhere in what they said so far
    (`said`), nor the assistant's own (`own_names`): "a film by Tomas Verhoeven" when no one named him.
    Outside quotes, a list's headings ("**Keep Track**") and a story, joke or poem the message asked for."""
    reply = _unquoted(text)
    claim = _TOLD_CLAIM.search(reply)
    if claim:
        return claim.group(0)
    if said and _FICTION.search(said[-1]):
        return None  # a story, a joke or a poem asked for: its names are made up by request
    reply = _HEADINGS.sub(" ", reply)
    heard = " ".join(said).lower().replace("\u2019", "'")
    known = {name.lower() for name in own_names} | _NOT_NAMES
    for match in _INNER_NAME.finditer(reply):
        name = re.sub(r"['\u2019]s$", "", match.group(0))
        if name.lower() not in known and not re.search(rf"(?<!\w){re.escape(name.lower())}(?!\w)", heard):
            return name
    return None


def _grams(text: str, n: int = 5) -> set[tuple[str, ...]]:
    tokens = re.findall(r"[a-z']+", text.lower().replace("\u2019", "'"))
    return {tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1)}


# The frame the prompts put around memory, which a reply should never say back.
_FRAME = re.compile(
    r"\b(?:the user (?:said|asked|says|asks|told)|you replied|what you know about|notes below|"
    r"you know of yourself|you are \w+, (?:a|an) (?:friendly )?assistant)\b",
    re.IGNORECASE,
)


def prompt_leak(text: str) -> str | None:
    """The part of the prompt a reply recites: five words in a row of the generator's instructions (as
    its templates give them), or the frame its prompt puts around memory ("The user said: ..."). None
    when it recites nothing. Outside quotes."""
    said = _unquoted(text)
    frame = _FRAME.search(said)
    if frame:
        return frame.group(0)
    templates = " ".join(
        re.sub(r"\{\w+\}", " | ", template)
        for template in (
            generator.SYSTEM,
            generator.COMPACT_SYSTEM,
            generator.USER_SECTION,
            generator.ASSISTANT_SECTION,
        )
    )
    instructions: set[tuple[str, ...]] = set()
    for part in templates.split("|"):
        instructions |= _grams(part)
    recited = _grams(said) & instructions
    return " ".join(sorted(recited)[0]) if recited else None


def run(
    conversations: list[dict],
    *,
    llm: LLM,
    label: str,
    memory: bool = True,
    progress: Callable[[str], None] | None = None,
    load: Callable[[], bool] | None = None,
    promote: bool = True,
) -> RunResult:
    """Play every conversation through the reply path (`memory`), or ask only its questions, each of a
    fresh empty space (the baseline). `load()` says whether a worker is consolidating at the moment; a
    run with a load stops once it has stopped. Without `promote`, the consolidation after each turn makes
    only the moves that need no LLM (a run that measures only how fast replies come). Creates memory users
    named `cq-<run>-...`; changes nothing else."""
    result = RunResult(label=label, memory=memory)
    run_id = uuid.uuid4().hex[:8]
    assistant_create(assistant_id="chat-quality", name="Helper", persona="A friendly personal assistant.")
    start = timezone.now() - timedelta(days=120)
    for number, conversation in enumerate(conversations, 1):
        if load is not None and not load():
            break
        records, space = _play(
            conversation, llm=llm, run_id=run_id, memory=memory, start=start, load=load, promote=promote
        )
        result.records.extend(records)
        if memory:
            result.memories.append(memory_record(conversation, space))
        replies = {}
        for record in records:
            if record.expect is not None:
                replies.setdefault(" ".join(record.text.lower().split()), set()).add(record.said)
        if any(len(questions) > 1 for questions in replies.values()):
            result.same_reply_conversations += 1
        if progress:
            asks = [r for r in records if r.expect is not None]
            progress(
                f"{label}: {number}/{len(conversations)} {conversation['id']}: {sum(r.found for r in asks)}/{len(asks)}"
            )
    return result


def said_words(conversation: dict) -> set[str]:
    """Every content word the person said in the conversation (normalised as lexical search does)."""
    lines = [turn.get("say") or turn.get("ask", "") for s in conversation["sessions"] for turn in s["turns"]]
    return set(content_tokens(" ".join(lines)))


def memory_record(conversation: dict, space) -> MemoryRecord:
    """What the conversation left in the space's memory, against what the person said."""
    said = said_words(conversation)
    texts = [
        (entry.kind, entry.value)
        for entry in LongTermEntry.objects.filter(space=space, status=LongTermEntry.Status.ACTIVE)
    ]
    texts += [("summary", s.summary) for s in MidTermSession.objects.filter(space=space, status="active")]
    unsupported = []
    for kind, text in texts:
        new = set(content_tokens(text)) - said
        if new:
            unsupported.append(f"{kind}: {text[:120]!r} (never said: {', '.join(sorted(new)[:5])})")
    sentences = [
        value
        for kind, value in texts
        if kind == LongTermEntry.Kind.PROFILE
        and re.search(r"\b(?:i|i'm|i've|me|my)\b", value.replace("\u2019", "'"), re.IGNORECASE)
    ]
    return MemoryRecord(
        conversation=conversation["id"],
        entries=len(texts),
        unsupported=len(unsupported),
        sentence_values=len(sentences),
        examples=unsupported[:4] + [f"profile sentence: {v[:120]!r}" for v in sentences[:2]],
    )


def _play(conversation: dict, *, llm: LLM, run_id: str, memory: bool, start: datetime, load=None, promote=True):
    user_id = f"cq-{run_id}-{conversation['id']}"[:100]
    records = []
    space = None
    when = start
    asked = 0
    heard: list[str] = []  # what the person said so far
    for session in conversation["sessions"]:
        when += timedelta(days=session.get("days_after_previous", 0))
        for turn in session["turns"]:
            when += timedelta(minutes=TURN_MINUTES)
            if "say" in turn and not memory:
                continue
            said = turn.get("say") or turn["ask"]
            heard.append(said)
            if memory:
                space = _space(user_id)
            else:  # each question of the baseline to a space that has never heard anything
                asked += 1
                space = _space(f"{user_id}-q{asked}")
            loaded_before = load() if load is not None else None
            began = time.perf_counter()
            response = reply(space=space, query=said, llm=llm, timestamp=when, consolidate=False)
            seconds = time.perf_counter() - began
            under_load = bool(loaded_before and load()) if load is not None else None
            # What a worker does after the turn, off the reply's clock.
            run_consolidation(ConsolidationRequest(space.pk, retry_now=True, promotion=promote))
            _, repeats = most_repeated_ngram(response.text)
            expect = turn.get("expect")
            stale = turn.get("stale")
            identity = conversation.get("identity", [])
            records.append(
                ReplyRecord(
                    conversation=conversation["id"],
                    said=said,
                    text=response.text,
                    seconds=round(seconds, 3),
                    prompt_tokens=response.prompt_tokens,
                    completion_tokens=response.completion_tokens,
                    at_cap=response.completion_tokens >= chat_sampling().max_tokens,
                    withheld=response.withheld,
                    retried=response.retried_because is not None,
                    max_ngram_repeats=repeats,
                    claims_identity=claims_identity(response.text, conversation["user_name"] or "", identity),
                    expect=expect,
                    found=found(response.text, expect) if expect else None,
                    stale=(found(response.text, stale) and not found(response.text, expect)) if stale else None,
                    leak=prompt_leak(response.text),
                    names_user=names_user(response.text, conversation["user_name"] or "", identity),
                    source=getattr(response, "source", "model"),
                    under_load=under_load,
                    not_told=bool(turn.get("not_told")),
                    condolences=offers_condolences(response.text, heard),
                    unsaid=None
                    if response.source == Page.ReplySource.QUOTED
                    else claims_unsaid(response.text, heard if memory else [said], [space.assistant.name]),
                )
            )
    return records, space


def _space(user_id: str):
    user_create(user_id=user_id)
    return space_get(user_id=user_id, assistant_id="chat-quality")


def write_json(results: list[RunResult], path: Path) -> None:
    path.write_text(
        json.dumps(
            [
                {
                    "summary": r.summary(),
                    "records": [asdict(x) for x in r.records],
                    "memories": [asdict(m) for m in r.memories],
                }
                for r in results
            ],
            indent=1,
        )
    )


def markdown(results: list[RunResult]) -> str:
    """One column per run, one row per measure."""
    summaries = [r.summary() for r in results]
    rows = [key for key in summaries[0] if key != "label"]
    lines = ["| | " + " | ".join(s["label"] for s in summaries) + " |", "| --- |" + " --- |" * len(summaries)]
    for key in rows:
        lines.append(f"| {key} | " + " | ".join(str(s[key]) for s in summaries) + " |")
    return "\n".join(lines)
