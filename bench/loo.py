"""Leave-one-conversation-out: how a setting chosen on some conversations does on one it never saw.

LoCoMo's dev split has five conversations; a setting chosen because it scores best on all five is chosen
on the very questions that report it. So for each conversation in turn, the setting is chosen on the
other four (their questions pooled) and scored on the one left out. The mean of those held-out scores
is the figure a new conversation can expect; their spread says how much it depends on the conversation;
and if the choice changes from fold to fold, no setting is clearly best. Pure functions.
"""

from dataclasses import dataclass
from typing import Generic, TypeVar

Setting = TypeVar("Setting")


@dataclass(frozen=True)
class Score:
    """A sum of per-question scores over `n` questions (sums, so conversations pool by question)."""

    total: float
    n: int

    @property
    def mean(self) -> float:
        return self.total / self.n if self.n else 0.0

    def __add__(self, other: "Score") -> "Score":
        return Score(self.total + other.total, self.n + other.n)


@dataclass(frozen=True)
class Fold(Generic[Setting]):
    held_out: str  # the conversation left out
    chosen: Setting  # the best setting on the others
    chosen_on_others: float  # its mean there
    held_out_score: float  # its mean on the conversation left out


def pooled(scores: dict[str, Score], conversations: list[str]) -> Score:
    total = Score(0.0, 0)
    for conversation in conversations:
        total = total + scores[conversation]
    return total


def best_setting(table: dict[Setting, dict[str, Score]], conversations: list[str]) -> Setting:
    """The setting with the best pooled mean over `conversations`; on a tie, the first in the table."""
    best, best_mean = None, -1.0
    for setting, scores in table.items():
        mean = pooled(scores, conversations).mean
        if mean > best_mean:
            best, best_mean = setting, mean
    if best is None:
        raise ValueError("no settings to choose from")
    return best


def leave_one_out(table: dict[Setting, dict[str, Score]]) -> list[Fold[Setting]]:
    """One fold per conversation. `table`: setting -> conversation -> its questions' summed score; every
    setting must have every conversation. Needs at least two conversations."""
    conversations = sorted({c for scores in table.values() for c in scores})
    if len(conversations) < 2:
        raise ValueError("leave-one-out needs at least two conversations")
    folds = []
    for held_out in conversations:
        others = [c for c in conversations if c != held_out]
        chosen = best_setting(table, others)
        folds.append(
            Fold(
                held_out=held_out,
                chosen=chosen,
                chosen_on_others=pooled(table[chosen], others).mean,
                held_out_score=table[chosen][held_out].mean,
            )
        )
    return folds


def held_out_mean(table: dict[Setting, dict[str, Score]], folds: list[Fold[Setting]]) -> float:
    """The held-out scores pooled by question: each fold's chosen setting on its own conversation."""
    total = Score(0.0, 0)
    for fold in folds:
        total = total + table[fold.chosen][fold.held_out]
    return total.mean
