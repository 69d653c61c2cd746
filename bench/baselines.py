"""Plain retrievers over one conversation's turns, the baselines the memory must beat.

Each indexes every turn as "Speaker: text [+ image caption]" (locomo.turn_document) and ranks turn ids
for a question: the last k turns (newest first), Okapi BM25, and dense all-MiniLM-L6-v2 by cosine. No
memory, no tiers: one flat index over the whole conversation, built once per conversation.
"""

from abc import ABC, abstractmethod

import numpy as np

from memory_engine.formats.locomo import Turn, turn_document
from memory_engine.store.embeddings import get_embedder
from memory_engine.store.lexical import BM25Index

__all__ = ["BM25Turns", "DenseTurns", "LastTurns", "TurnRanker"]


class TurnRanker(ABC):
    name = ""

    def __init__(self, turns: list[Turn]) -> None:
        self.turns = turns

    @abstractmethod
    def rank(self, question: str, depth: int) -> list[str]:
        """The ids of the `depth` best turns for `question`, best first."""


class LastTurns(TurnRanker):
    name = "last-k turns"

    def rank(self, question: str, depth: int) -> list[str]:
        return [turn.dia_id for turn in reversed(self.turns[-depth:])]


class BM25Turns(TurnRanker):
    name = "BM25 turns"

    def __init__(self, turns: list[Turn]) -> None:
        super().__init__(turns)
        self.index = BM25Index()
        for position, turn in enumerate(turns):
            self.index.add(position, turn_document(turn))

    def rank(self, question: str, depth: int) -> list[str]:
        return [self.turns[position].dia_id for position, _ in self.index.search(question, depth)]


class DenseTurns(TurnRanker):
    name = "dense MiniLM turns"

    def __init__(self, turns: list[Turn], vectors: np.ndarray | None = None) -> None:
        """`vectors`: the turns' own, embedded before (one a turn, in order); by default embedded here."""
        super().__init__(turns)
        self.embedder = get_embedder()
        self.vectors = self.embedder.encode([turn_document(turn) for turn in turns]) if vectors is None else vectors

    def rank(self, question: str, depth: int) -> list[str]:
        scores = self.vectors @ self.embedder.encode_one(question)
        best = np.argsort(-scores, kind="stable")[:depth]
        return [self.turns[position].dia_id for position in best]
