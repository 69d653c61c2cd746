"""Mid-term memory: topic sessions of older pages, with heat.

A session has an extractive topic summary, keywords and the embedding of its summary; all three are
refreshed whenever pages merge in. Pages join the session that best matches them when

    cos(session summary, pages) + Jaccard(session keywords, page keywords) >= theta

and open a new session otherwise. Moving pages into sessions is the updater's job (updater.py); this
module scores, refreshes and heats sessions. Calls that write expect the space to be locked by the caller.
"""

from dataclasses import dataclass, replace
from datetime import datetime

import numpy as np
from django.db import transaction

from memory_engine import inputs
from memory_engine.engine.heat import HeatParams, heat, heat_params, recency
from memory_engine.engine.summaries import extractive_summary
from memory_engine.errors import InvalidTurn
from memory_engine.language.keywords import extract_keywords, jaccard
from memory_engine.models import HeatEvent, MemorySpace, MidTermSession, Page
from memory_engine.store import retrieval_sql
from memory_engine.store.embeddings import from_bytes, get_embedder, to_bytes
from memory_engine.store.writes import space_write

PAGE_KEYWORDS = 6
SESSION_KEYWORDS = 10
SUMMARY_CHARS = 400
SUMMARY_PAGES = 40  # the newest pages a refreshed summary is drawn from, so a refresh stays cheap


def merge_score(
    session_vector: np.ndarray, session_keywords: list[str], vector: np.ndarray, keywords: list[str]
) -> float:
    """cos(summary embeddings) + Jaccard(keywords): the paper's session-matching score."""
    return float(np.dot(session_vector, vector)) + jaccard(set(session_keywords), set(keywords))


@dataclass
class SessionMatch:
    session: MidTermSession | None
    score: float


def best_session(sessions: list[MidTermSession], vector: np.ndarray, keywords: list[str], dim: int) -> SessionMatch:
    """The active session with the highest merge score for these pages (None when there is none)."""
    best = SessionMatch(None, float("-inf"))
    for session in sessions:
        score = merge_score(from_bytes(session.embedding, dim), session.keywords, vector, keywords)
        if score > best.score:
            best = SessionMatch(session, score)
    return best


def seconds_since_visit(session: MidTermSession, now: datetime) -> float:
    return (now - session.last_visit_at).total_seconds()


def session_heat(session: MidTermSession, params: HeatParams, now: datetime) -> float:
    """The session's heat now, with recency decayed over the real time since its last visit."""
    return heat(
        n_visit=session.n_visit,
        l_interaction=session.l_interaction,
        seconds_since_visit=seconds_since_visit(session, now),
        params=params,
    )


def session_cooled(session: MidTermSession, heat_now: float) -> None:
    """Store the heat a session has cooled to since its last change (recency falls while it is not
    visited), when nothing has changed it meanwhile; no timeline point. What is due for promotion is read
    from the stored heat (services/consolidation._pending_spaces): a session stored at the threshold and
    cooled just below it stayed due for ever, and every sweep ran its space again for nothing."""
    unchanged = {"n_visit": session.n_visit, "l_interaction": session.l_interaction}
    MidTermSession.objects.filter(pk=session.pk, last_visit_at=session.last_visit_at, **unchanged).update(heat=heat_now)
    session.heat = heat_now


@dataclass(frozen=True)
class Turn:
    """The turn that made a heat point: its seq and its time, the conversation's own (HeatEvent.turn)."""

    seq: int
    at: datetime

    @classmethod
    def of(cls, page: Page) -> "Turn":
        return cls(page.seq, page.timestamp)


def turn_of_session(session: MidTermSession) -> Turn | None:
    """The last turn that changed the session: its newest page, or the turn of its newest heat point when later
    (a visit by a question after it). What a promotion or an eviction of it is placed at."""
    page = session.pages.order_by("-seq").only("seq", "timestamp").first()
    point = session.heat_events.exclude(turn=None).order_by("-turn").values_list("turn", "turn_at").first()
    found = [Turn.of(page)] if page is not None else []
    found += [Turn(*point)] if point is not None else []
    return max(found, key=lambda turn: turn.seq, default=None)


def record_heat(session: MidTermSession, cause: str, params: HeatParams, now: datetime, turn: Turn | None) -> HeatEvent:
    """Store the session's current heat on it and as a point of its heat timeline, made by `turn`."""
    session.heat = session_heat(session, params, now)
    MidTermSession.objects.filter(pk=session.pk).update(heat=session.heat)
    return HeatEvent.objects.create(**_heat_point(session, cause, params, now, turn))


def _heat_point(session: MidTermSession, cause: str, params: HeatParams, now: datetime, turn: Turn | None) -> dict:
    """The fields of a heat timeline point for the session as it is now (its heat already set)."""
    return {
        "space_id": session.space_id,
        "session": session,
        "at": now,
        "cause": cause,
        "heat": session.heat,
        "n_visit": session.n_visit,
        "l_interaction": session.l_interaction,
        "recency": recency(seconds_since_visit(session, now), params.mu_seconds),
        "turn": turn.seq if turn else None,
        "turn_at": turn.at if turn else None,
    }


def session_refresh(session: MidTermSession, *, version: int) -> None:
    """Recompute the summary, keywords and summary embedding from the session's pages and save them.

    Uses the pages' stored embeddings; embeds only the summary, and only when it changed (the same text
    gives the same vector, and a space's vectors all come from one model). Safe to repeat.
    """
    pages = list(
        Page.objects.filter(session=session)
        .order_by("-seq")
        .only("user_input", "agent_response", "reply_withheld", "reply_source", "embedding")[:SUMMARY_PAGES]
    )[::-1]
    embedder = get_embedder()
    texts = [p.text for p in pages]
    vectors = np.vstack([from_bytes(p.embedding, embedder.dim) for p in pages]) if pages else None
    # With no sentence worth a summary ("ok thanks"), the last thing said, without its speaker's label.
    last = (pages[-1].user_input or pages[-1].memory_reply) if pages else ""
    summary = extractive_summary(texts, vectors, max_chars=SUMMARY_CHARS) or last[:SUMMARY_CHARS]
    if summary != session.summary or not session.embedding:
        session.summary, session.embedding = summary, to_bytes(embedder.encode_one(summary))
    session.keywords = extract_keywords(texts, k=SESSION_KEYWORDS)
    session.vector_version = version
    session.save(update_fields=["summary", "keywords", "embedding", "vector_version", "updated_at"])


def active_sessions(space: MemorySpace) -> list[MidTermSession]:
    return list(MidTermSession.objects.filter(space=space, status=MidTermSession.Status.ACTIVE).order_by("pk"))


def sessions_record_hits(space: MemorySpace, session_ids: list[int], now: datetime) -> None:
    """Count a retrieval hit on each session: N_visit + 1, last visit now, its heat, a heat timeline point.

    Not idempotent: each call is one more visit. The sessions are locked while they are counted, in id
    order (two retrievals never deadlock), so concurrent hits all count; the caller holds the space
    against writers (writes.hold_space). Three statements however many sessions were hit, in plain SQL
    (store/retrieval_sql.py: a retrieval is on the request path).
    """
    if not session_ids:
        return
    params = heat_params(space)
    visited_now = recency(0.0, params.mu_seconds)  # a visit now leaves no time since it
    with transaction.atomic(savepoint=False):  # joins the caller's transaction when there is one
        visited = []
        for counts in retrieval_sql.visits_locked(space.pk, session_ids):  # what is read is what is stored
            counts = replace(
                counts, n_visit=counts.n_visit + 1, total_visits=counts.total_visits + 1, last_visit_at=now
            )
            hot = heat(
                n_visit=counts.n_visit, l_interaction=counts.l_interaction, seconds_since_visit=0.0, params=params
            )
            visited.append((counts, hot, visited_now))
        # made by the turn that asks, stored after its retrieval
        retrieval_sql.visits_store(visited, HeatEvent.Cause.RETRIEVED, turn=space.last_seq + 1)


# --- Curation (the admin) --------------------------------------------------------------------------


def page_words(page: Page, user_input: str, agent_response: str) -> tuple[str, str]:
    """The words `page` may be given instead of its own, checked as a new turn's are; raises InvalidTurn
    (for text a turn may not hold, an empty turn, or a reply on a turn whose reply was withheld)."""
    user_input, agent_response = inputs.turn_texts(user_input, agent_response)
    if page.reply_withheld and agent_response:
        raise InvalidTurn("a turn whose reply was withheld keeps no agent_response")
    return user_input, agent_response


def page_edit(*, page: Page, user_input: str, agent_response: str) -> Page:
    """Correct a stored turn's words. A page in mid-term or archived gets a new embedding and keywords
    and its session a new summary, under one vector version, so retrieval ranks the new words at once.
    Raises InvalidTurn as page_words; then nothing changes. Editing to the same words changes nothing."""
    user_input, agent_response = page_words(page, user_input, agent_response)
    with space_write(page.space_id) as write:
        page.refresh_from_db()
        if (page.user_input, page.agent_response) == (user_input, agent_response):
            return page
        if page.agent_response != agent_response:  # a person's correction: their words, given
            page.reply_source = Page.ReplySource.GIVEN
        page.user_input, page.agent_response = user_input, agent_response
        # The words given are the turn's now: what a forget or an edit held out of them is theirs to say.
        page.marks.all().delete()
        page.said = None
        fields = ["user_input", "agent_response", "reply_source", "said", "vector_version"]
        if page.embedding is not None:
            page.embedding = to_bytes(get_embedder().encode_one(page.text))
            page.keywords = extract_keywords([page.text], k=PAGE_KEYWORDS)
            fields += ["embedding", "keywords"]
        write.stamp(page)
        page.save(update_fields=fields)
        if page.session_id is not None:
            session_refresh(page.session, version=write.version)
    return page


def summary_text(summary: str) -> str:
    """A session summary as it may be stored; raises InvalidTurn for an empty or invalid one."""
    summary = inputs.text(summary, "summary").strip()
    if not summary:
        raise InvalidTurn("the summary is empty")
    return summary


def session_edit(*, session: MidTermSession, summary: str) -> MidTermSession:
    """Correct a session's summary (until new pages merge into the session and it is recomputed): the
    summary is re-embedded under a new vector version, so session retrieval uses it at once. Raises
    InvalidTurn as summary_text."""
    summary = summary_text(summary)
    with space_write(session.space_id) as write:
        session.refresh_from_db()
        if session.summary == summary:
            return session
        session.summary = summary
        session.embedding = to_bytes(get_embedder().encode_one(summary))
        write.stamp(session)
        session.save(update_fields=["summary", "embedding", "vector_version", "updated_at"])
    return session
