"""δ-aware Lemma 4.1 (stats/bounds.py: ``unlearning_epsilon_lower_bound``,
``pairwise_unlearning_epsilon_lower_bound``, ``pairwise_unlearning_mu_lower_bound``): bounds on an
(ε, δ) unlearning claim, which induces a (2ε, (1 + e^ε)δ) mechanism (Section 4 footnote 3,
Lemma C.1, Eq. 3 of App. A.3, docs/bounds.md §6): δ = 0 is the halved bound, monotone in δ, the
bisection is tight, the cap log(M'/(Kδ) − 1), type-I error at the claim, and Eq. 3 by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import beta

from per_statistic import per_distinct_statistic
from unlearn_audit.stats.bounds import (
    audit_tail_bound,
    epsilon_lower_bound,
    gdp_mu_lower_bound,
    log_num_guesses,
    log_num_sign_vectors,
    pairwise_epsilon_lower_bound,
    pairwise_error_limits,
    pairwise_unlearning_epsilon_lower_bound,
    pairwise_unlearning_mu_lower_bound,
    unlearning_epsilon_lower_bound,
)
from unlearn_audit.stats.simulation import randomized_response_overlaps


def _tail(b, eps):
    """p-value of the unlearning claim (ε, δ): Lemma C.1 at (2ε, (1 + e^ε)δ)."""
    return audit_tail_bound(b.statistic_value, b.m, b.r, b.L, 2 * eps, statistic=b.statistic, delta=(1 + math.exp(eps)) * b.delta)


def _cap(m, r, delta):
    return math.log(math.exp(log_num_sign_vectors(m) - log_num_guesses(m, r)) / delta - 1)


CASES = [  # (m, r, overlaps)
    (6, 6, np.array([6, 6, 4, 6, 2, 6, 6, 4] * 5)),
    (10, 4, np.array([4, 3, 4, 4, 2, 4, 3, 4, 4, 4] * 3)),
    (1000, 100, np.full(20, 80)),
]


@pytest.mark.parametrize("m, r, v", CASES)
@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_delta_zero_is_the_halved_bound(m, r, v, statistic):
    new = unlearning_epsilon_lower_bound(v, m, r, statistic=statistic)
    old = epsilon_lower_bound(v, m, r, statistic=statistic)
    assert new == old and new.epsilon_lb == old.epsilon_ldp / 2 and new.epsilon_lb > 0


def test_pairwise_delta_zero_is_the_halved_bound():
    for counts in [(3, 100, 5, 100), (0, 50, 0, 50), (40, 80, 45, 90), (10, 200, 0, 30)]:
        assert pairwise_unlearning_epsilon_lower_bound(*counts, zeta=0.1).epsilon_lb == pairwise_epsilon_lower_bound(*counts, zeta=0.1).epsilon_lb / 2
        assert pairwise_unlearning_mu_lower_bound(*counts, zeta=0.1) == gdp_mu_lower_bound(*counts, zeta=0.1) / 2
    assert pairwise_unlearning_mu_lower_bound(3, 100, 5, 100) > 0


@pytest.mark.parametrize("m, r, v", CASES)
@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_non_increasing_in_delta_and_bisection_is_tight(m, r, v, statistic):
    top = min(math.exp(log_num_sign_vectors(m) - log_num_guesses(m, r)) / 2, 0.5)  # δ < M'/(2K)
    deltas = [0.0, 1e-8, 1e-5, 1e-3 * top, 1e-2 * top, 0.1 * top, 0.5 * top, 0.9 * top]
    bounds = [unlearning_epsilon_lower_bound(v, m, r, statistic=statistic, delta=d) for d in deltas]
    eps = np.array([b.epsilon_lb for b in bounds])
    assert np.all(np.diff(eps) <= 1e-12 * eps[0]), eps
    assert eps[0] > eps[-1]
    for b in bounds[1:]:
        assert b.delta > 0 and b.epsilon_ldp == 2 * b.epsilon_lb
        if not b.rejected:
            assert _tail(b, 0.0) > b.zeta
            continue
        assert _tail(b, b.epsilon_lb) <= b.zeta
        assert _tail(b, b.epsilon_lb * (1 + 1e-8)) > b.zeta
        assert b.epsilon_lb < _cap(m, r, b.delta)


def test_cap():
    m = r = 6  # M'/K = 1: the cap is log(1/δ − 1)
    v = np.full(20_000, 6)
    for delta in (0.05, 0.2, 0.4):
        b = unlearning_epsilon_lower_bound(v, m, r, delta=delta)
        cap = math.log(1 / delta - 1)
        assert math.isclose(_cap(m, r, delta), cap, rel_tol=1e-12)
        assert b.rejected and b.epsilon_lb < cap and b.epsilon_lb > 0.95 * cap  # many perfect runs: near the cap
        with pytest.raises(ValueError, match="too large|must lie in"):  # beyond the cap Lemma C.1 does not apply
            _tail(b, cap + 1e-6)
    # with 2δ ≥ M'/K no claim ε ≥ 0 is testable
    with pytest.raises(ValueError, match=r"M'/\(2K\)"):
        unlearning_epsilon_lower_bound(v, m, r, delta=0.5)
    unlearning_epsilon_lower_bound(v, m, r, delta=0.499)


@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_type_one_error_at_the_claim(statistic):
    """Randomized response at LDP level (2ε, (1 + e^ε)δ) is the worst mechanism an (ε, δ) claim allows.

    1,000 audits per case (was 300), limit ζ + 3·sqrt(ζ(1 − ζ)/1000) = 0.0707 (binomial 3σ; 0.0877 at
    300, so the check is stricter).  Each audit's bound is ``unlearning_epsilon_lower_bound`` of its
    overlaps, evaluated once per distinct statistic (tests/support/per_statistic.py)."""
    n_audits, zeta = 1000, 0.05
    rng = np.random.default_rng(11)
    limit = zeta + 3 * math.sqrt(zeta * (1 - zeta) / n_audits)
    for m, r, L, eps, delta in ((6, 6, 60, 2.0, 0.02), (6, 6, 60, 3.0, 0.0), (4, 4, 200, 2.0, 0.02), (2, 2, 200, 2.0, 0.02)):
        ldp_delta = (1 + math.exp(eps)) * delta
        v = randomized_response_overlaps(m, r, 2 * eps, n_audits * L, rng, delta=ldp_delta).reshape(n_audits, L)
        lbs = per_distinct_statistic(
            v, statistic, lambda row: unlearning_epsilon_lower_bound(row, m, r, zeta=zeta, statistic=statistic, delta=delta).epsilon_lb)
        assert np.mean(lbs > eps) <= limit, (m, r, eps, delta, np.mean(lbs > eps))
        if statistic == "mean":  # the audit has power here: reading the claim as an LDP level (no Lemma 4.1) would fail
            assert np.mean(lbs) > 0.3 * eps, (m, r, eps, delta, np.mean(lbs))


def test_pairwise_hand_computed():
    fp, n_neg, fn, n_pos, zeta, delta = 3, 100, 5, 100, 0.05, 0.01
    fp_hi = beta.isf(zeta / 2, fp + 1, n_neg - fp)
    fn_hi = beta.isf(zeta / 2, fn + 1, n_pos - fn)

    def eq3(e):  # Eq. 3 at the induced pair guarantee (2ε, (1 + e^ε)δ), minus 2ε
        d = (1 + math.exp(e)) * delta
        return max(math.log((1 - d - fp_hi) / fn_hi), math.log((1 - d - fn_hi) / fp_hi)) - 2 * e

    expected = brentq(eq3, 0.0, 3.0, xtol=1e-14)
    res = pairwise_unlearning_epsilon_lower_bound(fp, n_neg, fn, n_pos, zeta=zeta, delta=delta)
    assert math.isclose(res.epsilon_lb, expected, rel_tol=1e-10)
    assert math.isclose(expected, 1.14769607, rel_tol=1e-7)
    assert res.delta == delta and res.method == "eq3" and res.epsilon_ldp == 2 * res.epsilon_lb
    limits = pairwise_error_limits(fp, n_neg, fn, n_pos, zeta=zeta)
    assert math.isclose(limits[0], fp_hi) and math.isclose(limits[1], fn_hi)
    values = [pairwise_unlearning_epsilon_lower_bound(fp, n_neg, fn, n_pos, delta=d).epsilon_lb for d in (0, 1e-4, 0.01, 0.1, 0.5, 0.9)]
    assert np.all(np.diff(values) <= 0) and values[-1] == 0.0 and values[0] > values[3]
