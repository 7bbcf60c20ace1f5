"""Maximum attainable bounds under perfect prediction (stats/perfect_prediction.py; paper App. F.1
and F.3): with all L runs at V = r, Theorem 4.2 gives the ceiling of the cell (m, r, L, ζ).

Closed form (independent of the library): only the N_r = C(m − r, ⌈(m − r)/2⌉) sign vectors that
agree with all r non-zero guesses reach V = r, so with g(ε) = e^ε/(e^ε + M' − 1) the mean bound
(Eq. 1, λ → ∞) is (g·N_r)^L and the median bound (Eq. 2) is C(L, ⌈L/2⌉)·(g·N_r)^⌈L/2⌉; setting
either to ζ gives g*, and ε_ldp = log(g*(M' − 1)/(1 − g*)), ε_lb = ε_ldp / 2 (Lemma 4.1).
App. F.1: ε_ldp = 4.00 at m = r = 6 and 67.84 at m = r = 100; App. F.3: 40.83 at m = 100,
r = 60 (L = 10, ζ = 0.05)."""

from __future__ import annotations

import math

import pytest

from reference_bounds import reference_epsilon
from unlearn_audit.stats.bounds import epsilon_lower_bound, unlearning_epsilon_lower_bound
from unlearn_audit.stats.perfect_prediction import (
    CEILING_RTOL,
    at_ceiling,
    attainable_bounds,
    perfect_prediction_bound,
    perfect_prediction_epsilon_lb,
)


def closed_form_epsilon_ldp(m: int, r: int, L: int, zeta: float, statistic: str) -> float:
    m_prime = math.comb(m, m // 2)
    n_r = math.comb(m - r, math.ceil((m - r) / 2))
    if statistic == "mean":
        log_g = math.log(zeta) / L - math.log(n_r)
    else:
        k = math.ceil(L / 2)
        log_g = (math.log(zeta) - math.log(math.comb(L, k))) / k - math.log(n_r)
    if log_g >= 0:
        return math.inf
    g = math.exp(log_g)
    return max(0.0, math.log(g * (m_prime - 1) / (1 - g)))


@pytest.mark.parametrize("m,r,expected", [(6, 6, 4.00), (100, 100, 67.84), (100, 60, 40.83)])
def test_values_of_appendix_f(m, r, expected):
    res = perfect_prediction_bound(m, r, 10)
    assert round(res.epsilon_ldp, 2) == expected
    assert res.epsilon_lb == pytest.approx(res.epsilon_ldp / 2) and res.rejected
    assert (res.m, res.r, res.L, res.zeta, res.statistic, res.statistic_value) == (m, r, 10, 0.05, "mean", float(r))


@pytest.mark.parametrize("m,r", [(6, 6), (10, 4), (20, 10), (100, 60), (101, 60), (300, 300)])
@pytest.mark.parametrize("L", [1, 4, 10, 25])
@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_ceiling_is_the_closed_form(m, r, L, statistic):
    for zeta in (0.05, 0.01):
        res = perfect_prediction_bound(m, r, L, zeta=zeta, statistic=statistic)
        want = closed_form_epsilon_ldp(m, r, L, zeta, statistic)
        assert res.epsilon_ldp == pytest.approx(want, rel=1e-9, abs=1e-9), (m, r, L, zeta, statistic)
        assert res.epsilon_lb == res.epsilon_ldp / 2
        assert perfect_prediction_epsilon_lb(m, r, L, zeta=zeta, statistic=statistic) == res.epsilon_lb


def test_ceiling_agrees_with_the_naive_reference_and_bounds_every_audit():
    for m, r, L in ((6, 6, 10), (30, 10, 6), (100, 60, 10)):
        ceiling = perfect_prediction_bound(m, r, L)
        assert ceiling.epsilon_ldp == pytest.approx(reference_epsilon([r] * L, m, r), abs=1e-4)
        # a miss in one run gives less; no audit of the cell exceeds its ceiling
        assert epsilon_lower_bound([r] * (L - 1) + [r - 1], m, r).epsilon_ldp < ceiling.epsilon_ldp
        # more runs, a looser level or more candidates raise the ceiling
        assert perfect_prediction_bound(m, r, L + 5).epsilon_ldp > ceiling.epsilon_ldp
        assert perfect_prediction_bound(m, r, L, zeta=0.2).epsilon_ldp > ceiling.epsilon_ldp


def test_a_cell_that_cannot_reject_has_ceiling_zero():
    # m = r = 2, one run: g* = ζ, M' = 2, ε = log(ζ/(1 − ζ)) < 0, so not even a perfect guess rejects
    res = perfect_prediction_bound(2, 2, 1)
    assert res.epsilon_ldp == 0.0 and not res.rejected
    assert closed_form_epsilon_ldp(2, 2, 1, 0.05, "mean") == 0.0
    assert not at_ceiling(0.0, res.epsilon_lb)  # a ceiling of 0 marks nothing


def test_delta_is_the_delta_of_the_unlearning_claim():
    base = perfect_prediction_bound(6, 6, 10)
    for delta in (1e-6, 0.01, 0.2):
        res = perfect_prediction_bound(6, 6, 10, delta=delta)
        assert res == unlearning_epsilon_lower_bound([6] * 10, 6, 6, delta=delta)
        assert res.delta == delta and 0 < res.epsilon_lb < base.epsilon_lb
        assert res.epsilon_lb < math.log(1 / delta - 1)  # below the cap log(M'/(Kδ) − 1), M' = K at m = r
    assert perfect_prediction_bound(6, 6, 10, delta=0.0) == base


def test_at_ceiling():
    c = perfect_prediction_epsilon_lb(24, 8, 10)
    assert at_ceiling(c, c) and at_ceiling(c * (1 + CEILING_RTOL / 2), c) and at_ceiling(c * (1 - CEILING_RTOL / 2), c)
    assert not at_ceiling(c * (1 - 10 * CEILING_RTOL), c) and not at_ceiling(c * (1 + 10 * CEILING_RTOL), c)
    assert at_ceiling(1.0 + 1e-3, 1.0, rtol=1e-2) and not at_ceiling(1.0 + 1e-3, 1.0, rtol=1e-4)
    for bad in ((math.nan, c), (c, math.nan), (math.inf, math.inf), (0.0, 0.0), (-1.0, -1.0)):
        assert not at_ceiling(*bad)
    assert CEILING_RTOL == 1e-9


def test_attainable_bounds_has_one_row_per_cell():
    grid = [{"m": 6, "r": 6}, {"m": 100, "r": 60}, {"m": 30, "r": 10}]
    rows = attainable_bounds(grid, 10, 0.05)
    assert [(row["m"], row["r"]) for row in rows] == [(6, 6), (100, 60), (30, 10)]
    for row in rows:
        assert set(row) == {"m", "r", "L", "zeta", "epsilon_ldp_mean", "epsilon_lb_mean", "epsilon_ldp_median", "epsilon_lb_median"}
        assert (row["L"], row["zeta"]) == (10, 0.05)
        for statistic in ("mean", "median"):
            assert row[f"epsilon_ldp_{statistic}"] == pytest.approx(closed_form_epsilon_ldp(row["m"], row["r"], 10, 0.05, statistic), rel=1e-9)
            assert row[f"epsilon_lb_{statistic}"] == row[f"epsilon_ldp_{statistic}"] / 2
        assert row["epsilon_ldp_median"] < row["epsilon_ldp_mean"]  # C(L, ⌈L/2⌉) and half the runs cost the median
    assert round(rows[0]["epsilon_ldp_mean"], 2) == 4.00 and round(rows[1]["epsilon_ldp_mean"], 2) == 40.83
    assert attainable_bounds([], 10, 0.05) == []
