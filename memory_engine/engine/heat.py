"""Heat of a mid-term session: how much it deserves promotion to long-term memory.

    H = alpha * N_visit + beta * L_interaction + gamma * R_recency,   R_recency = exp(-dt / mu)

N_visit counts retrieval hits and L_interaction pages added, both since the last promotion; dt is the
real time since the session was last visited. Pure functions: no database, no clock.
"""

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class HeatParams:
    alpha: float = 1.0
    beta: float = 1.0
    gamma: float = 1.0
    mu_seconds: float = 1e7

    def __post_init__(self) -> None:
        if self.mu_seconds <= 0:
            raise ValueError("mu_seconds must be positive")


def recency(seconds_since_visit: float, mu_seconds: float) -> float:
    """exp(-dt/mu): 1.0 for a session visited just now, towards 0 as it goes untouched.

    A visit in the future (clock skew between machines) counts as just now, never above 1.
    """
    if mu_seconds <= 0:
        raise ValueError("mu_seconds must be positive")
    return math.exp(-max(0.0, seconds_since_visit) / mu_seconds)


def heat(*, n_visit: int, l_interaction: int, seconds_since_visit: float, params: HeatParams) -> float:
    return (
        params.alpha * n_visit
        + params.beta * l_interaction
        + params.gamma * recency(seconds_since_visit, params.mu_seconds)
    )


def is_hot(heat_value: float, threshold: float) -> bool:
    """A session at or above the threshold is due for promotion (if it has pages left to analyse)."""
    return heat_value >= threshold


def heat_params(space) -> HeatParams:
    """The heat parameters of a memory space (its heat_alpha, heat_beta, heat_gamma and
    recency_mu_seconds). Pure."""
    return HeatParams(
        alpha=space.heat_alpha,
        beta=space.heat_beta,
        gamma=space.heat_gamma,
        mu_seconds=space.recency_mu_seconds,
    )
