"""The heat formula and recency decay, without a database."""

import math

import pytest

from memory_engine.engine.heat import HeatParams, heat, is_hot, recency


def test_recency_is_one_for_a_session_visited_just_now():
    assert recency(0, 1e7) == 1.0


def test_recency_decays_by_e_every_mu_seconds():
    assert recency(1e7, 1e7) == pytest.approx(math.exp(-1))
    assert recency(2e7, 1e7) == pytest.approx(math.exp(-2))


def test_recency_keeps_falling_as_time_passes():
    values = [recency(dt, 3600) for dt in (0, 60, 3600, 86400)]
    assert values == sorted(values, reverse=True)
    assert values[-1] < 1e-9


def test_a_visit_in_the_future_counts_as_just_now():
    assert recency(-500, 1e7) == 1.0


def test_mu_must_be_positive():
    with pytest.raises(ValueError):
        recency(10, 0)
    with pytest.raises(ValueError):
        HeatParams(mu_seconds=-1)


def test_heat_is_alpha_visits_plus_beta_length_plus_gamma_recency():
    params = HeatParams(alpha=2.0, beta=0.5, gamma=3.0, mu_seconds=100)
    value = heat(n_visit=3, l_interaction=4, seconds_since_visit=100, params=params)
    assert value == pytest.approx(2.0 * 3 + 0.5 * 4 + 3.0 * math.exp(-1))


def test_paper_defaults_weigh_every_term_equally():
    value = heat(n_visit=1, l_interaction=2, seconds_since_visit=0, params=HeatParams())
    assert value == pytest.approx(4.0)


def test_zero_weights_switch_terms_off():
    params = HeatParams(alpha=0, beta=0, gamma=1, mu_seconds=10)
    assert heat(n_visit=100, l_interaction=100, seconds_since_visit=0, params=params) == 1.0


def test_a_session_at_the_threshold_is_hot_and_just_below_it_is_not():
    assert is_hot(5.0, 5.0)
    assert not is_hot(4.999, 5.0)
