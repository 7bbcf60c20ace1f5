"""The ε of an unlearning claim against the retrained model (docs/bounds.md §6b), statistically.

Mechanisms whose guess is ε-indistinguishable from one reference guess Q (the guess on the retrained
model): the m = 2 mechanism that attains the bound, a guess that is the true one with probability
p and a uniform random guess otherwise (Q: a uniform random guess), per-coordinate randomized
response against uniform signs, a per-run mixture of strengths and an adaptively switching sequence.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pytest

from unlearn_audit import epsilon_lower_bound
from unlearn_audit.stats import reference as ref
from unlearn_audit.stats.signs import sample_sign_vectors

ZETA = 0.05


def binary(eps: np.ndarray, rng) -> np.ndarray:
    """m = 2: Q a fair coin between the two sign vectors; the guess is right with probability
    min{e^ε/2, 1 − e^{−ε}/2}, the most (ε, 0) allows against Q.  V = 2 when right, else 0."""
    p = np.minimum(np.exp(eps) / 2, 1 - np.exp(-eps) / 2)
    return 2 * (rng.random(eps.shape) < p)


def true_or_random(m: int, r: int, eps: float, n: int, rng) -> np.ndarray:
    """The guess made from S (its first r/2 +1 and first r/2 −1 coordinates) with probability p,
    a uniform random balanced guess otherwise; Q = the uniform random guess.  Every guess has the
    same number N_g of equally likely values, so P_s/Q ≤ 1 + p(N_g − 1) = e^ε and ≥ 1 − p > e^{−ε}."""
    from math import comb

    n_guesses = comb(m, r) * comb(r, r // 2)
    p = (math.exp(eps) - 1) / (n_guesses - 1)
    assert 0 < p < 1
    S = sample_sign_vectors(m, n, rng)
    V = np.empty(n, dtype=int)
    for i, s in enumerate(S):
        if rng.random() < p:
            V[i] = r
        else:
            idx = rng.permutation(m)[:r]
            g = np.zeros(m, dtype=int)
            g[idx[: r // 2]], g[idx[r // 2 :]] = 1, -1
            V[i] = int(np.sum(g * s == 1))
    return V


def randomized_response(m: int, r: int, eps: float, n: int, rng) -> np.ndarray:
    """Y_j = S_j with probability q, else −S_j, independently; Q: Y uniform on {±1}^m.  P_s(y)/Q(y) ≤ (2q)^m
    = e^ε and ≥ (2(1 − q))^m ≥ e^{−ε}.  The guess: r/2 coordinates with Y = +1 as +1 and r/2 with Y = −1
    as −1 (random among them, filled at random when too few)."""
    q = math.exp(eps / m) / 2
    S = sample_sign_vectors(m, n, rng)
    Y = np.where(rng.random(S.shape) < q, S, -S)
    key = Y + 0.5 * rng.random(S.shape)  # +1s first, in random order
    order = np.argsort(-key, axis=1)
    top, bottom = order[:, : r // 2], order[:, m - r // 2 :]
    return (np.take_along_axis(S, top, 1) == 1).sum(1) + (np.take_along_axis(S, bottom, 1) == -1).sum(1)


def rejection_rate(V: np.ndarray, m: int, r: int, eps: float, statistic: str = "mean") -> float:
    L = V.shape[1]

    @lru_cache(maxsize=None)
    def rejects(value: float) -> bool:
        return ref.reference_log_p_value(value, m, r, L, eps, statistic=statistic) <= math.log(ZETA)

    values = V.sum(1) / L if statistic == "mean" else np.median(V, axis=1)
    return float(np.mean([rejects(float(v)) for v in values]))


@pytest.mark.parametrize("statistic", ["mean", "median"])
@pytest.mark.parametrize("case", ["attaining m=2", "true or random m=6", "randomized response m=8", "mixture", "adaptive"])
def test_type_one_error_at_the_true_epsilon(case, statistic):
    rng = np.random.default_rng(sum(map(ord, case + statistic)))
    audits, L = 2000, 10
    if case == "attaining m=2":
        m, r, eps, L = 2, 2, 1.0, 100
        V = binary(np.full((audits, L), eps), rng)
    elif case == "true or random m=6":
        m, r, eps = 6, 6, 2.0
        V = true_or_random(m, r, eps, audits * L, rng).reshape(audits, L)
    elif case == "randomized response m=8":
        m, r, eps = 8, 4, 4.0
        V = randomized_response(m, r, eps, audits * L, rng).reshape(audits, L)
    elif case == "mixture":
        m, r, eps, L = 2, 2, 1.0, 100
        V = binary(rng.choice([0.25, 0.5, 1.0], size=(audits, L)), rng)
    else:
        m, r, eps, L = 2, 2, 1.0, 100
        V = np.zeros((audits, L), dtype=int)
        for ell in range(L):
            V[:, ell] = binary(np.where(V[:, :ell].sum(1) < ell, eps, 0.0), rng)
    if statistic == "median" and L % 2 == 0:
        V, L = V[:, :-1], L - 1
    rate = rejection_rate(V, m, r, eps, statistic)
    assert rate <= ZETA + 3 * math.sqrt(ZETA * (1 - ZETA) / audits), (case, statistic, rate)
    if case == "attaining m=2" and statistic == "mean":  # attained: the test is not conservative here
        assert rate > 0.02, rate


def test_one_run_tail_and_the_bound_itself():
    rng = np.random.default_rng(2)
    for m, r, eps, sampler in [(2, 2, 1.0, lambda n: binary(np.full(n, 1.0), rng)),
                               (6, 6, 2.0, lambda n: true_or_random(6, 6, 2.0, n, rng)),
                               (8, 4, 4.0, lambda n: randomized_response(8, 4, 4.0, n, rng))]:
        n = 20_000
        V = sampler(n)
        t = np.exp(ref.log_reference_tail(m, r, eps))
        for v in range(1, r + 1):
            emp = float((V >= v).mean())
            assert emp <= t[v] + 4 * math.sqrt(t[v] * (1 - t[v]) / n) + 2 / n, (m, r, v, emp, t[v])
    pmf = np.exp(ref.log_reference_pmf(6, 6, 1.5))
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12) and (pmf >= 0).all()
    # against the sign-vector route (ε_LDP / 2): larger where q₀ is small
    for m, r, L, V in [(6, 6, 100, 4), (144, 60, 10, 40), (4500, 3000, 10, 2000)]:
        assert ref.reference_epsilon_lower_bound([V] * L, m, r) > epsilon_lower_bound([V] * L, m, r, method="exact").epsilon_lb
    assert ref.reference_epsilon_lower_bound([2] * 10, 2, 2) == pytest.approx(-math.log(2 * (1 - 0.05 ** 0.1)), abs=1e-6)
    assert ref.reference_epsilon_lower_bound([3] * 10, 6, 6) == 0.0


def binary_delta(eps: float, delta: float, shape, rng) -> np.ndarray:
    """m = 2 at (ε, δ): the guess right with probability min{1, δ + e^ε/2, 1 − e^{−ε}(1/2 − δ)}, the
    most (ε, δ)-indistinguishability from a fair coin allows (both events checked); V = 2 or 0."""
    p = min(1.0, delta + math.exp(eps) / 2, 1 - math.exp(-eps) * (0.5 - delta))
    return 2 * (rng.random(shape) < p)


def true_or_random_delta(m: int, r: int, eps: float, delta: float, n: int, rng) -> np.ndarray:
    """With probability δ the run reveals the true guess (V = r), else :func:`true_or_random` at ε:
    (ε, δ)-indistinguishable from the uniform random guess."""
    V = true_or_random(m, r, eps, n, rng)
    V[rng.random(n) < delta] = r
    return V


@pytest.mark.parametrize("statistic", ["mean", "median"])
@pytest.mark.parametrize("case", ["attaining m=2", "true or random m=6", "adaptive m=2"])
def test_type_one_error_at_the_true_epsilon_and_delta(case, statistic):
    """δ > 0 (docs/bounds.md §6b): the rejection rate at the true (ε, δ) is at most ζ (3 standard
    errors of slack), and at m = 2, where the per-run tail is attained, the mean test is not conservative."""
    rng = np.random.default_rng(sum(map(ord, case + statistic)) + 7)
    audits, delta = 2000, 0.01
    if case == "attaining m=2":
        m, r, eps, L = 2, 2, 1.0, 100
        V = binary_delta(eps, delta, (audits, L), rng)
    elif case == "true or random m=6":
        m, r, eps, L = 6, 6, 2.0, 30
        V = true_or_random_delta(m, r, eps, delta, audits * L, rng).reshape(audits, L)
    else:  # each run's strength chosen from the earlier runs: full strength while behind
        m, r, eps, L = 2, 2, 1.0, 100
        V = np.zeros((audits, L), dtype=int)
        for ell in range(L):
            behind = V[:, :ell].sum(1) < ell
            V[behind, ell] = binary_delta(eps, delta, int(behind.sum()), rng)
            V[~behind, ell] = binary_delta(0.0, 0.0, int((~behind).sum()), rng)
    if statistic == "median" and L % 2 == 0:
        V, L = V[:, :-1], L - 1

    @lru_cache(maxsize=None)
    def rejects(value: float) -> bool:
        return ref.reference_log_p_value(value, m, r, L, eps, statistic=statistic, delta=delta) <= math.log(ZETA)

    values = V.sum(1) / L if statistic == "mean" else np.median(V, axis=1)
    rate = float(np.mean([rejects(float(v)) for v in values]))
    assert rate <= ZETA + 3 * math.sqrt(ZETA * (1 - ZETA) / audits), (case, statistic, rate)
    if case == "attaining m=2" and statistic == "mean":
        assert rate > 0.02, rate


def test_delta_weakens_the_test_and_is_paid_once_per_run():
    # the per-run tail at δ: t(v) = min{1, δ + e^ε q₀, 1 − e^{−ε}(1 − δ − q₀)}, 1 at v = 0 and 0 beyond r
    t = np.exp(ref.log_reference_tail(2, 2, 1.0, 0.1))
    assert t[0] == 1.0 and t[3] == 0.0 and t[2] == pytest.approx(min(0.1 + math.e / 2, 1 - math.exp(-1) * 0.4))
    pmf = np.exp(ref.log_reference_pmf(6, 6, 1.0, 0.01))
    assert pmf.sum() == pytest.approx(1.0, abs=1e-12) and (pmf >= 0).all()
    # a larger δ never gives a larger bound; δ = 0 is the δ = 0 test
    for V, m, r, L in [(2, 2, 2, 10), (6, 6, 6, 30), (40, 144, 60, 10)]:
        bounds = [ref.reference_epsilon_lower_bound([V] * L, m, r, delta=d) for d in (0.0, 1e-5, 1e-3, 0.1)]
        assert bounds == sorted(bounds, reverse=True) and bounds[0] == ref.reference_epsilon_lower_bound([V] * L, m, r)
    # δ once per run: at m = r = 6, L = 30 every run right, δ = 1e-5 costs 1e-5 of the bound (Lemma C.1's K·δ costs more)
    assert ref.reference_epsilon_lower_bound([6] * 30, 6, 6, delta=1e-5) == pytest.approx(2.8959, abs=1e-3)
    b = ref.reference_bound([6] * 30, 6, 6, delta=1e-5)
    assert b.method == "reference" and math.isnan(b.ldp) and b.lb == pytest.approx(2.8959, abs=1e-3) and b.rejected and b.delta == 1e-5
    with pytest.raises(ValueError, match="delta"):
        ref.reference_epsilon_lower_bound([6] * 30, 6, 6, delta=1.5)


def test_never_weaker_than_the_sign_vector_route():
    """At δ = 0 the reference tail lies below the tail the induced mechanism may have at 2ε (docs/bounds.md §6b),
    so on any overlaps its bound is at least Theorem 4.2's, the exact test's and the adaptive test's ε_LDP / 2."""
    from unlearn_audit.stats.posterior_tests import log_dominating_tail

    for m, r in [(2, 2), (6, 6), (20, 10), (144, 60)]:
        for eps in (0.05, 0.5, 2.0, 8.0):
            t = ref.log_reference_tail(m, r, eps)
            q = log_dominating_tail(m, r, 2 * eps)[0]
            assert (t[1 : r + 1] <= q[1 : r + 1] + 1e-9).all(), (m, r, eps)
    rng = np.random.default_rng(3)
    for m, r, L in [(2, 2, 10), (6, 6, 30), (36, 32, 10), (144, 100, 10)]:
        for _ in range(5):
            V = rng.integers(r // 2, r + 1, size=L)
            ours = ref.reference_epsilon_lower_bound(V, m, r)
            for method in ("theorem4.2", "exact", "adaptive"):
                assert ours >= epsilon_lower_bound(V, m, r, method=method).epsilon_lb - 1e-6, (m, r, L, list(V), method)
