"""What a promotion keeps with no LLM (engine/long_term.extraction_from_words), and whether it is knowledge.

The entries kept from LoCoMo's development conversations, LongMemEval's development histories and two chat
sets, as the bundled model's promotion keeps them (the person's statements word for word, the reply's where it
is memory, profile values read off sentences). `sample` draws a seeded sample of them for someone who never saw
the code to label (is it a fact about the speaker or their world, in their words?), and `scored` reads such a
labelled file against what is kept now: the share of the labelled entries still kept that are facts, and the
facts no longer kept. No model, no database; seconds.
"""

import json
import random
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path

from memory_engine.config import memory_settings
from memory_engine.engine.long_term import extraction_from_words
from memory_engine.formats.locomo import iter_pages, load_samples
from memory_engine.formats.longmemeval import load_questions
from memory_engine.models import Page

DATA = Path(__file__).parent / "data"
CHAT_SETS = (DATA / "chat_quality.json", DATA / "heldout" / "chat_issue64_a.json")
# How many of each corpus and kind a sample draws: "user" the person's statements, "reply" the other side's,
# "profile" the values read off the person's sentences.
SAMPLED = {"user": 45, "reply": 25, "profile": 15}


def _page(user_input: str, reply: str) -> Page:
    return Page(user_input=user_input, agent_response=reply, reply_source=Page.ReplySource.GIVEN)


def corpora() -> dict[str, list[Page]]:
    """Each corpus's turns as pages whose reply is memory (given with the turn, as an import's is). Unsaved."""
    found = {}
    locomo, longmemeval = memory_settings().locomo_file, memory_settings().longmemeval_file
    if locomo.exists():
        found["LoCoMo dev"] = [
            _page(page.user_input, page.agent_response)
            for sample in load_samples(locomo)
            for page in iter_pages(sample)
        ]
    if longmemeval.exists():
        found["LongMemEval dev"] = list(_longmemeval_pages(load_questions(longmemeval)))
    for path in CHAT_SETS:
        found[path.name] = [
            _page(turn.get("say") or turn["ask"], "")
            for conversation in json.loads(path.read_text())["conversations"]
            for session in conversation["sessions"]
            for turn in session["turns"]
        ]
    return found


def _longmemeval_pages(questions: list[dict]) -> Iterator[Page]:
    seen = set()
    for question in questions:
        for session in question["haystack_sessions"]:
            for i, turn in enumerate(session):
                if turn["role"] != "user":
                    continue
                reply = session[i + 1]["content"] if i + 1 < len(session) and session[i + 1]["role"] != "user" else ""
                if (turn["content"], reply) not in seen:  # the histories share sessions
                    seen.add((turn["content"], reply))
                    yield _page(turn["content"], reply)


def kept(pages: list[Page]) -> list[dict]:
    """Every entry a weak model's promotion keeps from `pages`: {"kind", "text", "message"} (the message it is
    from), in order; a profile value's text is "attribute: value"."""
    out = []
    for page in pages:
        extraction = extraction_from_words([page])
        for fact in extraction.facts:
            reply = fact.kind == "assistant_knowledge"
            out.append({"kind": "reply" if reply else "user", "text": fact.fact, "message": _message(page, reply)})
        for item in extraction.profile:
            out.append({"kind": "profile", "text": f"{item.attribute}: {item.value}", "message": page.user_input})
    return out


def _message(page: Page, reply: bool) -> str:
    return page.agent_response if reply else page.user_input


def sample(seed: int) -> list[dict]:
    """A seeded sample of what is kept, SAMPLED of each corpus and kind, each with an id to label."""
    rng = random.Random(seed)
    drawn = []
    for corpus, pages in corpora().items():
        by_kind = defaultdict(list)
        for entry in kept(pages):
            by_kind[entry["kind"]].append(entry)
        for kind, count in SAMPLED.items():
            entries = by_kind.get(kind, [])
            for entry in rng.sample(entries, min(count, len(entries))):
                drawn.append({"id": f"{seed}-{len(drawn) + 1}", "corpus": corpus, **entry})
    return drawn


def scored(labelled: list[dict]) -> dict:
    """The labelled entries (`fact`: true or false) against what is kept now, by corpus and kind: how many are
    still kept, how many of those are facts, and the facts no longer kept."""
    now = {corpus: {(e["kind"], e["text"], e["message"]) for e in kept(pages)} for corpus, pages in corpora().items()}
    rows = defaultdict(lambda: {"labelled": 0, "kept": 0, "facts kept": 0, "facts lost": 0})
    lost, wrong = [], []
    for entry in labelled:
        still = (entry["kind"], entry["text"], entry["message"]) in now.get(entry["corpus"], set())
        for key in ((entry["corpus"], entry["kind"]), ("all", entry["kind"]), ("all", "all")):
            row = rows[key]
            row["labelled"] += 1
            row["kept"] += still
            row["facts kept"] += still and entry["fact"]
            row["facts lost"] += entry["fact"] and not still
        if entry["fact"] and not still:
            lost.append(entry)
        if still and not entry["fact"]:
            wrong.append(entry)
    return {"rows": dict(rows), "lost": lost, "kept, not facts": wrong}
