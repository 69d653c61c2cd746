"""What a reply used and cost, kept beside its turn (models.ReplyRecord): the model and its tokens, for what a
space costs over time (beyond/usage.py), and the memory the prompt held, as references, read again when
the chat page shows "What it used" after a reload (`used_now`)."""

from memory_engine.engine.retriever import Retrieval, items_now
from memory_engine.models import Page, ReplyRecord

SECTIONS = ("short_term", "pages", "profile", "user_knowledge", "assistant_knowledge")


def reply_record(
    *, page: Page, retrieval: Retrieval, model: str, prompt_tokens: int, completion_tokens: int
) -> ReplyRecord:
    """Record what the reply stored as `page` used and cost."""
    used = [[item.kind, item.id, round(item.score, 6)] for name in SECTIONS for item in getattr(retrieval, name)]
    return ReplyRecord.objects.create(
        page=page,
        space_id=page.space_id,
        model=model[:200],
        prompt_tokens=max(0, prompt_tokens),
        completion_tokens=max(0, completion_tokens),
        memory_tokens=retrieval.tokens_used,
        token_budget=retrieval.token_budget,
        used=used,
    )


def used_counts(record: ReplyRecord) -> dict[str, int]:
    """How many items of each section the prompt held: {"short_term", "pages", "profile", "knowledge"}."""
    counts = {"short_term": 0, "pages": 0, "profile": 0, "knowledge": 0}
    for kind, _, _ in record.used:
        section = {"page": "pages", "short_term": "short_term", "profile": "profile"}.get(kind, "knowledge")
        counts[section] += 1
    return counts


def used_now(record: ReplyRecord) -> dict:
    """What the reply used, as a retrieval's sections hold it (Retrieval.as_dict's shape, without the
    sessions ranked and the items cut, which are not kept), read from the memory as it is now; "gone"
    counts the items deleted or forgotten since, which are left out."""
    items, gone = items_now(record.page.space, [(kind, pk, score) for kind, pk, score in record.used])
    sections = {name: [] for name in SECTIONS}
    for item in items:
        sections["short_term" if item.kind == "short_term" else "pages" if item.kind == "page" else item.kind].append(
            item.as_dict()
        )
    return {
        **sections,
        "sessions": [],
        "cut": [],
        "dropped": 0,
        "query": record.page.user_input,
        "token_budget": record.token_budget,
        "tokens_used": record.memory_tokens,
        "gone": gone,
    }
