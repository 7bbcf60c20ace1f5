"""The trade-off-function test of μ-GDP on the overlaps (docs/bounds.md §6a), statistically.

Mechanisms with a known μ against one common reference Q (the unlearning reading: every unlearned
model μ-GDP-close to the retrained one): the one-coordinate Gaussian that attains the bound (m = 2),
one-hot Gaussians over the 20 sign vectors of S_6 with an argmax guess, coordinate Gaussians at
m = 20 with a top/bottom guess, a per-run mixture of strengths and an adaptively switching sequence.
Each audit's p-value depends on the sum of its overlaps only, so it is computed once per sum.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest

from unlearn_audit.stats import gdp_overlaps as go
from unlearn_audit.stats.signs import num_sign_vectors, sample_sign_vectors, sign_vector_rank

ZETA = 0.05


def _guess_overlap(S: np.ndarray, Y: np.ndarray, r: int) -> np.ndarray:
    """Overlap of the guess +1 on the r/2 largest coordinates of Y and −1 on the r/2 smallest."""
    order = np.argsort(-Y, axis=1)
    top, bottom = order[:, : r // 2], order[:, Y.shape[1] - r // 2 :]
    return (np.take_along_axis(S, top, 1) == 1).sum(1) + (np.take_along_axis(S, bottom, 1) == -1).sum(1)


def coordinate_gaussian(m: int, r: int, mu: float, n: int, rng) -> np.ndarray:
    """P_s = N(c·s, I_m), Q = N(0, I_m): T(Q, P_s) = G_μ with μ = c·√m for every s."""
    S = sample_sign_vectors(m, n, rng).astype(float)
    return _guess_overlap(S, mu / math.sqrt(m) * S + rng.standard_normal(S.shape), r)


def one_hot_gaussian(m: int, mu: float, n: int, rng) -> np.ndarray:
    """P_s = N(μ·e_rank(s), I_M'), Q = N(0, I_M'); the guess is the sign vector of the largest
    coordinate (r = m): V = m when it is S's, else its overlap with S."""
    from unlearn_audit.stats.signs import sign_vector_unrank

    M = num_sign_vectors(m)
    S = sample_sign_vectors(m, n, rng)
    ranks = np.array([sign_vector_rank(s) for s in S])
    Y = rng.standard_normal((n, M))
    Y[np.arange(n), ranks] += mu
    guesses = np.stack([sign_vector_unrank(int(k), m) for k in Y.argmax(1)])
    return (guesses == S).sum(1)


def rejection_rate(V: np.ndarray, m: int, r: int, mu: float, statistic: str = "mean") -> float:
    """Share of audits (rows of V) whose mu_lb exceeds μ: min(p_lemma(2μ), p_tradeoff(μ)) ≤ ζ for the
    mean (a function of the sum) or the median."""
    L = V.shape[1]

    @lru_cache(maxsize=None)
    def rejects(value: float) -> bool:
        lemma = go.mu_log_p_value(value, m, r, L, 2 * mu, statistic=statistic, method="lemma_c1")
        return min(lemma, go._tradeoff_log_p(value, m, r, L, mu, statistic)) <= math.log(ZETA)

    values = V.sum(1) / L if statistic == "mean" else np.median(V, axis=1)
    return float(np.mean([rejects(float(v)) for v in values]))


def _within(rate: float, n: int, zeta: float = ZETA) -> bool:
    return rate <= zeta + 3 * math.sqrt(zeta * (1 - zeta) / n)


def test_one_run_tail_is_below_t_mu_and_attained_at_m_2():
    rng = np.random.default_rng(1)
    for m, r, mu, sampler in [(2, 2, 1.3, lambda n: binary_gaussian(np.full(n, 1.3), rng)),
                              (6, 6, 2.0, lambda n: one_hot_gaussian(6, 2.0, n, rng)),
                              (20, 10, 3.0, lambda n: coordinate_gaussian(20, 10, 3.0, n, rng))]:
        n = 40_000
        V = sampler(n)
        log_t, _ = go.log_gdp_dominating_tail(m, r, mu)
        for v in range(1, r + 1):
            emp, t = float((V >= v).mean()), math.exp(log_t[v])
            assert emp <= t + 4 * math.sqrt(t * (1 - t) / n) + 2 / n, (m, r, v, emp, t)
        if m == 2:  # the attaining mechanism: P(V = 2) = Φ(μ) = t_μ(1)
            assert abs(float((V == 2).mean()) - math.exp(log_t[1])) < 4 * math.sqrt(0.25 / n)


def binary_gaussian(strengths: np.ndarray, rng) -> np.ndarray:
    """m = 2: S = ±(1, −1), P_s = N(μ_run·S_1, 1), Q = N(0, 1), guess the sign: V = 2 when right, else 0.
    It attains §6a's bound: P(V = 2) = Φ(μ) = t_μ(1)."""
    s1 = rng.choice([-1.0, 1.0], size=strengths.shape)
    return 2 * (s1 * (strengths * s1 + rng.standard_normal(strengths.shape)) > 0)


CASES = ["attaining m=2", "one-hot m=6", "coordinates m=20", "coordinates m=6 r=4", "mixture", "adaptive"]


@pytest.mark.parametrize("statistic", ["mean", "median"])
@pytest.mark.parametrize("case", CASES)
def test_type_one_error_at_the_true_mu(case, statistic):
    rng = np.random.default_rng(sum(map(ord, case + statistic)))
    audits, L = 2000, 10
    if case == "attaining m=2":  # L = 100: the binomial test is nearly continuous, its rate near ζ
        m, r, mu, L = 2, 2, 1.0, 100
        V = binary_gaussian(np.full((audits, L), mu), rng)
    elif case == "one-hot m=6":
        m, r, mu = 6, 6, 2.5
        V = one_hot_gaussian(m, mu, audits * L, rng).reshape(audits, L)
    elif case == "coordinates m=20":
        m, r, mu = 20, 10, 4.0
        V = coordinate_gaussian(m, r, mu, audits * L, rng).reshape(audits, L)
    elif case == "coordinates m=6 r=4":
        m, r, mu = 6, 4, 3.0
        V = coordinate_gaussian(m, r, mu, audits * L, rng).reshape(audits, L)
    elif case == "mixture":  # every run μ-GDP at a strength drawn per run (≤ μ): H0(μ) holds
        m, r, mu, L = 2, 2, 1.0, 100
        V = binary_gaussian(rng.choice([0.25, 0.5, 1.0], size=(audits, L)), rng)
    else:  # adaptive: full strength while the running count of right guesses is below half, none after
        m, r, mu, L = 2, 2, 1.0, 100
        V = np.zeros((audits, L), dtype=int)
        for ell in range(L):
            strength = np.where(V[:, :ell].sum(1) < ell, mu, 0.0)
            V[:, ell] = binary_gaussian(strength, rng)
    if statistic == "median" and L % 2 == 0:  # an odd number of runs: the median is one run's overlap
        V, L = V[:, :-1], L - 1
    rate = rejection_rate(V, m, r, mu, statistic)
    assert _within(rate, audits), (case, statistic, rate)
    if case == "attaining m=2" and statistic == "mean":  # the bound is attained: the test is not conservative
        assert rate > 0.02, rate


def test_tradeoff_is_never_below_lemma_c1_and_agrees_with_its_p_value():
    rng = np.random.default_rng(3)
    for m, r, L in [(2, 2, 10), (6, 6, 30), (20, 10, 10), (144, 60, 10)]:
        for _ in range(3):
            V = coordinate_gaussian(m, r, 3.0, L, rng)
            a, b = go.mu_lower_bound(V, m, r), go.mu_lower_bound(V, m, r, method="tradeoff")
            assert b.mu_ldp >= a.mu_ldp - 1e-12 and b.mu_lb >= a.mu_lb - 1e-12 and b.method == "tradeoff"
            if b.mu_lb > a.mu_lb:  # §6a's μ: rejected just below it, not just above
                mean = float(np.mean(V))
                assert go._tradeoff_log_p(mean, m, r, L, b.mu_lb * (1 - 1e-6), "mean") <= math.log(ZETA)
                assert go._tradeoff_log_p(mean, m, r, L, b.mu_lb * (1 + 1e-6) + 1e-9, "mean") > math.log(ZETA)


def test_reference_values_and_refusals():
    assert go.mu_lower_bound([4] * 100, 6, 6, method="tradeoff").mu_lb == pytest.approx(0.642, abs=1e-3)
    assert go.mu_lower_bound([4] * 100, 6, 6).mu_lb == pytest.approx(0.066, abs=1e-3)
    assert go.mu_lower_bound([2000] * 10, 4500, 3000, method="tradeoff").mu_lb == pytest.approx(17.91, abs=1e-2)
    pmf = np.exp(go.log_gdp_dominating_pmf(6, 6, 1.5))
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12) and (pmf >= 0).all()
    assert go.mu_lower_bound([3] * 10, 6, 6, method="tradeoff").mu_lb == 0.0  # at random guessing
    with pytest.raises(ValueError, match="method must be one of"):
        go.mu_lower_bound([4] * 10, 6, 6, method="exact")


def test_the_closed_form_of_group_privacy_and_composition_is_valid_and_never_above_the_tradeoff_mu():
    """docs/bounds.md §6a: (Φ⁻¹(ζ) − Φ⁻¹(q)) / (2√L), q the blind guess's tail of the L-run statistic;
    weaker than the trade-off test's μ on any overlaps (so valid wherever that is), 0 at chance."""
    from scipy.stats import norm

    from unlearn_audit.stats.gdp_overlaps import mu_group_composition
    from unlearn_audit.stats.posterior_tests import log_dominating_pmf, log_sum_tail

    rng = np.random.default_rng(11)
    for m, r, L in [(2, 2, 10), (6, 6, 30), (20, 10, 10), (144, 60, 10)]:
        for _ in range(6):
            V = rng.integers(r // 2, r + 1, size=L)
            closed = mu_group_composition(V, m, r)
            assert closed <= go.mu_lower_bound(V, m, r, method="tradeoff").mu_lb + 1e-9, (m, r, list(V))
    # the formula itself at m = r = 6, L = 30, every V = 6: q = (1/20)^30
    q = math.exp(log_sum_tail(log_dominating_pmf(6, 6, 0.0), 30, 180))
    assert q == pytest.approx(20.0 ** -30, rel=1e-6)
    assert mu_group_composition([6] * 30, 6, 6) == pytest.approx((norm.ppf(0.05) - norm.ppf(q)) / (2 * math.sqrt(30)), rel=1e-6)
    assert mu_group_composition([3] * 10, 6, 6) == 0.0
