"""Ideas for what the model sees, measured on LoCoMo without building them (`manage.py ablate_locomo`).

Each idea re-ranks or re-packs the pages of the memory's own retrieval from the scores `retrieve` computes,
so trying one costs a function here rather than a change to the engine; the ones that pay are then built
(filling the budget, retriever.FILL_PAGES, was). For every question of categories 1-4 the features are read
once from the real indexes (`read_conversation`): the MiniLM cosine and the BM25 (dates included) of every
mid-term page for the query as `retrieve` makes it, the same for each page's two turns, the pages' order,
sessions and tokens, and the short-term pages every context holds. Scores cover every mid-term page
rather than retrieve's top 100 of each search and their neighbours: "as it ships" reproduces
evaluate_locomo's figures all the same (recall@10 0.710, 0.818 of the evidence shown on the dev split).

A variant maps a question to what a context shows, best first: (page, the turns it shows, its tokens).
It is scored as evaluate_locomo scores the memory: recall@10 of the distinct turns, and the share of the
evidence a context of each budget shows, short-term first (retriever.within_budget). A variant with
settings to choose chooses them by leave-one-conversation-out on the evidence shown at 1,500 tokens: the
setting best on four conversations is scored on the fifth (bench/loo.py).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from itertools import product

import numpy as np

from bench.loo import Score, best_setting
from memory_engine.engine.retriever import dated_query, estimate_tokens, topic_query
from memory_engine.engine.short_term import short_term_pages
from memory_engine.language.temporal import said_tokens
from memory_engine.models import MemorySpace, Page
from memory_engine.store.embeddings import from_bytes, get_embedder
from memory_engine.store.index import score_dense, search_lexical
from memory_engine.store.lexical import BM25Index

BUDGETS = (1000, 1500, 2000)
CHOOSE_AT = 1500  # a variant's settings are chosen on the evidence shown at this budget
K = 10
BM25_SHAPES = ((1.2, 0.75), (0.9, 0.4), (1.2, 0.4), (0.6, 0.75), (1.5, 0.75))  # (k1, b); the first is the index's


@dataclass
class Question:
    text: str
    category: int
    evidence: frozenset[str]
    vector: np.ndarray
    dense: np.ndarray  # a page's cosine with the query
    bm25: dict[tuple[float, float], np.ndarray]  # (k1, b) -> a page's BM25 for the dated query
    bm25_undated: np.ndarray  # for the query without its date tokens
    turn_dense: np.ndarray  # (pages, 2): each turn's cosine (the user's, the assistant's)
    turn_bm25: np.ndarray  # (pages, 2)
    named: int | None  # which of the two people the question names, when it names one


@dataclass
class Conversation:
    sample_id: str
    seq: np.ndarray
    session: np.ndarray
    tokens: np.ndarray  # a page's tokens as the context shows it
    turn_tokens: np.ndarray  # (pages, 2)
    turns: list[tuple[str | None, str | None]]
    vectors: np.ndarray  # the pages' embeddings
    short_tokens: int
    short_turns: frozenset[str]
    questions: list[Question] = field(default_factory=list)


Shown = tuple[int, tuple[str, ...], int]  # (page index, the turns it shows, its tokens)
Variant = Callable[[Conversation, Question, dict], list[Shown]]


def read_conversation(
    space: MemorySpace,
    sample_id: str,
    questions: Sequence[tuple[str, int, list[str]]],
    turn_ids: dict,
) -> Conversation:
    """The features of a space's mid-term pages for each (question, category, evidence), from the space's
    own indexes (pages) and indexes built here the same way (each turn alone, other BM25 shapes)."""
    pages = list(Page.objects.filter(space=space, tier=Page.Tier.MID).order_by("seq"))
    shorts = list(short_term_pages(space).defer("embedding"))
    ids = [page.pk for page in pages]
    replies = [page.memory_reply for page in pages]
    embedder = get_embedder()
    users = embedder.encode([page.user_input or "." for page in pages])
    assistants = embedder.encode([reply or "." for reply in replies])
    shapes = {shape: BM25Index(k1=shape[0], b=shape[1]) for shape in BM25_SHAPES[1:]}
    turn_index = (BM25Index(), BM25Index())
    for i, (page, reply) in enumerate(zip(pages, replies, strict=True)):
        text = f"{page.user_input}\n{reply}"
        for index in shapes.values():
            index.add(i, f"{text}\n{' '.join(said_tokens(text, page.timestamp))}")
        for side, said in enumerate((page.user_input, reply)):
            turn_index[side].add(i, f"{said}\n{' '.join(said_tokens(said, page.timestamp))}")

    def scores(index: BM25Index, query: str) -> np.ndarray:
        out = np.zeros(len(ids), dtype=np.float32)
        for i, score in index.search(query, len(ids)):
            out[i] = score
        return out

    names = [space.user.display_name, space.assistant.name]
    conversation = Conversation(
        sample_id=sample_id,
        seq=np.array([page.seq for page in pages]),
        session=np.array([page.session_id or 0 for page in pages]),
        tokens=np.array([estimate_tokens(page.text) for page in pages]),
        turn_tokens=np.array(
            [
                [estimate_tokens(f"User: {page.user_input}"), estimate_tokens(f"Assistant: {reply}")]
                for page, reply in zip(pages, replies, strict=True)
            ]
        ),
        turns=[turn_ids[pk] for pk in ids],
        vectors=np.vstack([from_bytes(page.embedding) for page in pages]) if pages else np.zeros((0, 1)),
        short_tokens=sum(estimate_tokens(page.text) for page in shorts),
        short_turns=frozenset(t for page in shorts for t in turn_ids[page.pk] if t),
    )
    for text, category, evidence in questions:
        topic = topic_query(text, names)
        vector = embedder.encode_one(topic)
        dense = score_dense(space, "pages", vector, ids)
        lexical = dict(search_lexical(space, "pages", dated_query(topic), len(ids)))
        undated = dict(search_lexical(space, "pages", topic, len(ids)))
        bm25 = {BM25_SHAPES[0]: np.array([lexical.get(pk, 0.0) for pk in ids], dtype=np.float32)}
        bm25 |= {shape: scores(index, dated_query(topic)) for shape, index in shapes.items()}
        named = [n for n, name in enumerate(names) if name and name.lower() in text.lower()]
        conversation.questions.append(
            Question(
                text=text,
                category=category,
                evidence=frozenset(evidence),
                vector=vector,
                dense=np.array([dense.get(pk, 0.0) for pk in ids], dtype=np.float32),
                bm25=bm25,
                bm25_undated=np.array([undated.get(pk, 0.0) for pk in ids], dtype=np.float32),
                turn_dense=np.stack([users @ vector, assistants @ vector], axis=1),
                turn_bm25=np.stack([scores(index, dated_query(topic)) for index in turn_index], axis=1),
                named=named[0] if len(named) == 1 else None,
            )
        )
    return conversation


# --- The memory's page score, and the ideas -------------------------------------------------------


def scaled(values: np.ndarray) -> np.ndarray:
    best = float(values.max()) if values.size else 0.0
    return values / (best or 1.0)


def chained(conversation: Conversation, match: np.ndarray, weight: float) -> np.ndarray:
    """retriever.chain_scores over every page: its match plus `weight` times its neighbours'."""
    at = {int(seq): i for i, seq in enumerate(conversation.seq)}
    before = np.array([match[at[s - 1]] if s - 1 in at else 0.0 for s in conversation.seq])
    after = np.array([match[at[s + 1]] if s + 1 in at else 0.0 for s in conversation.seq])
    return match + weight * (before + after)


def page_scores(conversation: Conversation, q: Question, s: dict) -> np.ndarray:
    """retriever._search_pages' score: lexical weight x BM25 scaled to the best page + the rest x the cosine,
    lifted by the neighbours' match; `s` may change the weights, the BM25 shape, the dates, and add a share
    of the turns' own match (`turn`) or of the named person's turn (`speaker`)."""
    lexical_weight = s.get("lexical_weight", 0.5)
    bm25 = q.bm25_undated if s.get("undated") else q.bm25[s.get("bm25", BM25_SHAPES[0])]
    match = lexical_weight * scaled(bm25) + (1 - lexical_weight) * q.dense
    if "turn" in s or "speaker" in s:
        best = float(q.turn_bm25.max()) or 1.0
        turn = lexical_weight * q.turn_bm25 / best + (1 - lexical_weight) * q.turn_dense
        if "turn" in s:
            match = match + s["turn"] * turn.max(axis=1)
        elif q.named is not None:
            match = match + s["speaker"] * turn[:, q.named]
    return chained(conversation, match, s.get("chain_weight", 0.2))


def order_of(scores: np.ndarray) -> list[int]:
    return [int(i) for i in np.argsort(-scores, kind="stable")]


def whole(conversation: Conversation, order: Sequence[int]) -> list[Shown]:
    return [(i, tuple(t for t in conversation.turns[i] if t), int(conversation.tokens[i])) for i in order]


def ranked(conversation: Conversation, q: Question, s: dict) -> list[Shown]:
    """The pages best first by page_scores, `s["pages"]` of them (all when absent)."""
    return whole(conversation, order_of(page_scores(conversation, q, s))[: s.get("pages")])


def ceiling(conversation: Conversation, q: Question, s: dict) -> list[Shown]:
    """Every page holding evidence first (the most evidence a token first): what a perfect ranking shows."""
    worth = np.array(
        [len(q.evidence & set(t)) / n for t, n in zip(conversation.turns, conversation.tokens, strict=True)]
    )
    return whole(conversation, order_of(worth))


def feedback(conversation: Conversation, q: Question, s: dict) -> list[Shown]:
    """Pseudo-relevance feedback (Rocchio): the query vector moved towards the `k` best pages' by `a`."""
    first = order_of(page_scores(conversation, q, {}))[: s["k"]]
    vector = q.vector + s["a"] * conversation.vectors[first].mean(axis=0)
    moved = Question(**{**q.__dict__, "dense": conversation.vectors @ (vector / np.linalg.norm(vector))})
    return ranked(conversation, moved, {})


def diverse(conversation: Conversation, q: Question, s: dict) -> list[Shown]:
    """Greedy re-ranking of the best 100: a page's score less `session` for each page of its session
    already chosen, and less `mmr` times its closest cosine to a page already chosen."""
    scores = page_scores(conversation, q, {})
    candidates = np.array(order_of(scores)[:100])
    vectors, sessions = conversation.vectors[candidates], conversation.session[candidates]
    closest, same_session = np.zeros(len(candidates)), np.zeros(len(candidates))
    taken, chosen = np.zeros(len(candidates), dtype=bool), []
    for _ in range(len(candidates)):
        value = scores[candidates] - s.get("session", 0.0) * same_session - s.get("mmr", 0.0) * closest
        value[taken] = -np.inf
        best = int(np.argmax(value))  # on a tie, the better-ranked page
        taken[best] = True
        chosen.append(int(candidates[best]))
        closest = np.maximum(closest, vectors @ vectors[best])
        same_session += sessions == sessions[best]
    return whole(conversation, chosen)


def halves(conversation: Conversation, q: Question, s: dict) -> list[Shown]:
    """Pages ranked as they are, each shown as its better-matching turn alone when the other turn matches
    less than `r` times as well (a page's other half being filler)."""
    best = float(q.turn_bm25.max()) or 1.0
    turn = 0.5 * q.turn_bm25 / best + 0.5 * q.turn_dense
    shown = []
    for i in order_of(page_scores(conversation, q, {})):
        user, assistant = conversation.turns[i]
        better = int(turn[i, 1] > turn[i, 0])
        if user and assistant and turn[i, 1 - better] < s["r"] * turn[i, better]:
            shown.append((i, (conversation.turns[i][better],), int(conversation.turn_tokens[i, better])))
        else:
            shown += whole(conversation, [i])
    return shown


def turns_alone(conversation: Conversation, q: Question, s: dict) -> list[Shown]:
    """Turns ranked and shown one by one (a turn's match, plus 0.2 of the turns beside it), not pages."""
    best = float(q.turn_bm25.max()) or 1.0
    match = (0.5 * q.turn_bm25 / best + 0.5 * q.turn_dense).reshape(-1)  # page 0's user, page 0's reply, ...
    lifted = match + 0.2 * (np.r_[0.0, match[:-1]] + np.r_[match[1:], 0.0])
    shown = []
    for flat in order_of(lifted):
        page, side = divmod(flat, 2)
        turn = conversation.turns[page][side]
        if turn:
            shown.append((page, (turn,), int(conversation.turn_tokens[page, side])))
    return shown


def with_next(conversation: Conversation, q: Question, s: dict) -> list[Shown]:
    """Each of the best `top` pages followed by the page after it (the answer often follows the match)."""
    order, at = order_of(page_scores(conversation, q, {})), {int(seq): i for i, seq in enumerate(conversation.seq)}
    out, seen = [], set()
    for rank, i in enumerate(order):
        for j in (i, at.get(int(conversation.seq[i]) + 1)) if rank < s["top"] else (i,):
            if j is not None and j not in seen:
                seen.add(j)
                out.append(j)
    return whole(conversation, out)


@dataclass(frozen=True)
class Idea:
    name: str
    variant: Variant
    settings: tuple[dict, ...] = ({},)  # chosen among by leave-one-out when more than one
    short_term: bool = True  # whether the short-term pages take their share of the budget first


def grid(**axes: Sequence) -> tuple[dict, ...]:
    return tuple(dict(zip(axes, values, strict=True)) for values in product(*axes.values()))


def ideas(top_pages: int, fill_pages: int) -> list[Idea]:
    """Every idea measured, the memory as it ships first."""
    return [
        Idea(f"the memory's top {top_pages} pages (before filling)", ranked, ({"pages": top_pages},)),
        Idea(f"as it ships: filled with the next {fill_pages} pages", ranked, ({"pages": top_pages + fill_pages},)),
        Idea("every page that fits (a deeper fill)", ranked),
        Idea("the budget without short-term (what short-term costs)", ranked, short_term=False),
        Idea("ceiling: the evidence's pages first", ceiling),
        Idea("BM25 alone (lexical weight 1)", ranked, ({"lexical_weight": 1.0},)),
        Idea("the cosine alone (lexical weight 0)", ranked, ({"lexical_weight": 0.0},)),
        Idea("no neighbours' share (chain weight 0)", ranked, ({"chain_weight": 0.0},)),
        Idea("no date tokens in the query", ranked, ({"undated": True},)),
        Idea("another BM25 shape (k1, b)", ranked, grid(bm25=BM25_SHAPES)),
        Idea("plus the turns' own match", ranked, grid(turn=(0.2, 0.5, 1.0))),
        Idea("plus the named person's turn", ranked, grid(speaker=(0.2, 0.5, 1.0))),
        Idea("pseudo-relevance feedback (Rocchio)", feedback, grid(a=(0.3, 0.6, 1.0), k=(2, 5))),
        Idea("fewer pages a session", diverse, grid(session=(0.05, 0.1, 0.2))),
        Idea("maximal marginal relevance", diverse, grid(mmr=(0.1, 0.3))),
        Idea("the better-matching turn alone", halves, grid(r=(0.3, 0.5, 0.9))),
        Idea("turns ranked and shown alone", turns_alone),
        Idea("each top page with the page after it", with_next, grid(top=(3, 5, 10))),
    ]


# --- Scoring --------------------------------------------------------------------------------------


@dataclass
class Scores:
    """Per-question sums over one conversation: recall@K, the evidence shown and tokens at each budget."""

    n: int = 0
    recall: float = 0.0
    shown: dict[int, float] = field(default_factory=dict)
    tokens: dict[int, float] = field(default_factory=dict)
    by_category: dict[int, list[float]] = field(default_factory=dict)  # category -> [n, recall@K]

    def __add__(self, other: "Scores") -> "Scores":
        categories = {
            c: [
                a + b
                for a, b in zip(self.by_category.get(c, [0, 0.0]), other.by_category.get(c, [0, 0.0]), strict=True)
            ]
            for c in self.by_category.keys() | other.by_category.keys()
        }
        return Scores(
            self.n + other.n,
            self.recall + other.recall,
            {b: self.shown.get(b, 0.0) + other.shown.get(b, 0.0) for b in self.shown.keys() | other.shown.keys()},
            {b: self.tokens.get(b, 0.0) + other.tokens.get(b, 0.0) for b in self.tokens.keys() | other.tokens.keys()},
            categories,
        )


def score_question(
    conversation: Conversation, q: Question, shown: list[Shown], short_term: bool, budgets=BUDGETS
) -> Scores:
    """recall@K of the distinct turns `shown` ranks, and at each budget the share of the evidence and the
    tokens of a context packed as retriever.within_budget packs one: short-term first, then in order, an
    item that does not fit left out and a later, shorter one still taken. Pure."""
    turns: list[str] = []
    for _, shown_turns, _ in shown:
        turns += [t for t in shown_turns if t not in turns]
    recall = len(q.evidence & set(turns[:K])) / len(q.evidence)
    out = Scores(n=1, recall=recall, by_category={q.category: [1, recall]})
    for budget in budgets:
        seen = set(conversation.short_turns) if short_term else set()
        used = conversation.short_tokens if short_term else 0
        for _, shown_turns, tokens in shown:
            if used + tokens <= budget:
                used += tokens
                seen |= set(shown_turns)
        out.shown[budget] = len(q.evidence & seen) / len(q.evidence)
        out.tokens[budget] = used
    return out


def score_conversation(conversation: Conversation, idea: Idea, setting: dict) -> Scores:
    total = Scores()
    for q in conversation.questions:
        total = total + score_question(conversation, q, idea.variant(conversation, q, setting), idea.short_term)
    return total


@dataclass
class Result:
    idea: Idea
    pooled: Scores  # over every conversation: with one setting, that one; else each held-out fold's choice
    chosen: list[str]  # the setting each fold chose (one entry when there was nothing to choose)


def measure(conversations: list[Conversation], idea: Idea) -> Result:
    """An idea over the conversations: its one setting pooled, or by leave-one-conversation-out (each
    conversation scored with the setting best at CHOOSE_AT tokens on the others)."""
    table = {
        i: {c.sample_id: score_conversation(c, idea, setting) for c in conversations}
        for i, setting in enumerate(idea.settings)
    }
    if len(idea.settings) == 1:
        pooled = Scores()
        for scores in table[0].values():
            pooled = pooled + scores
        return Result(idea, pooled, [label(idea.settings[0])])
    at_budget = {i: {sid: Score(s.shown[CHOOSE_AT], s.n) for sid, s in row.items()} for i, row in table.items()}
    pooled, chosen = Scores(), []
    for held_out in conversations:
        others = [c.sample_id for c in conversations if c is not held_out]
        best = best_setting(at_budget, others)
        pooled = pooled + table[best][held_out.sample_id]
        chosen.append(label(idea.settings[best]))
    return Result(idea, pooled, chosen)


def label(setting: dict) -> str:
    return ", ".join(f"{k}={v}" for k, v in setting.items() if k != "pages") or "-"


def evidence_ranks(conversations: list[Conversation]) -> dict[str, dict[int, int]]:
    """Where each evidence turn's page ranks in the memory's order: band -> category -> turns. Short-term
    turns are in every context ("short-term")."""
    bands = (("1-5", 5), ("6-10", 10), ("11-20", 20), ("21-50", 50), ("51-100", 100), ("101-", 10**9))
    out: dict[str, dict[int, int]] = {name: {} for name in ("short-term", *(b for b, _ in bands))}
    for conversation in conversations:
        page_of = {t: i for i, pair in enumerate(conversation.turns) for t in pair if t}
        for q in conversation.questions:
            rank = {page: r for r, page in enumerate(order_of(page_scores(conversation, q, {})), start=1)}
            for turn in q.evidence:
                if turn in conversation.short_turns or turn not in page_of:
                    band = "short-term"
                else:
                    band = next(name for name, upto in bands if rank[page_of[turn]] <= upto)
                out[band][q.category] = out[band].get(q.category, 0) + 1
    return out
