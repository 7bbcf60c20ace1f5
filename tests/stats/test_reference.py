"""The ε of an unlearning claim against the retrained model (docs/bounds.md §6b), statistically.

Mechanisms whose guess is ε-indistinguishable from one reference guess Q (the guess on the retrained
model): the m = 2 mechanism that attains the bound, a guess that is the true one with probability
p and a uniform random guess otherwise (Q: a uniform random guess), per-coordinate randomized
response against uniform signs, a per-run mixture of strengths, an adaptively switching sequence,
and the block mechanism that attains the bound at every (m, r), at δ = 0 and δ > 0.
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
    """At δ = 0 the reference tail lies below q_{2ε}, the exact test's per-run tail at 2ε; and the mechanism
    that attains the reference tail is 2ε-LDP (:func:`test_the_attaining_mechanism`), so the adaptive test at
    2ε bounds its tail too (docs/bounds.md §6b).  On any overlaps the bound is therefore at least Theorem
    4.2's, the exact test's and the adaptive test's ε_LDP / 2 (up to the numerical margins)."""
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
            for method in ("theorem4.2", "exact", "mgf", "adaptive"):
                assert ours >= epsilon_lower_bound(V, m, r, method=method).epsilon_lb - 1e-6, (m, r, L, list(V), method)


def admissible_guesses(m: int, r: int) -> np.ndarray:
    """All K guesses (r/2 entries +1, r/2 entries −1, the rest 0), one per row."""
    from itertools import combinations

    rows = []
    for chosen in combinations(range(m), r):
        for plus in combinations(chosen, r // 2):
            g = np.zeros(m, dtype=np.int64)
            g[list(chosen)] = -1
            g[list(plus)] = 1
            rows.append(g)
    return np.array(rows)


def attaining_mechanism(m: int, r: int, eps: float, delta: float):
    """The guessing game's (ε, δ) mechanism that attains t_{ε,δ}(v) at every v at once (docs/bounds.md §6b).

    Q: the uniform guess (the retrained model's, which knows nothing of S).  Given s, the overlap u is
    drawn from the law with tail t_{ε,δ} (computed here from its formula, not by the package) and the
    guess uniformly among the K N_u / M' guesses at overlap u with s.  Returns (S_m, guesses, V, P) with
    V[s, g] the overlap and P[s, g] = P(guess g | S = s)."""
    from unlearn_audit.stats.signs import enumerate_sign_vectors

    S, G = enumerate_sign_vectors(m).astype(np.int64), admissible_guesses(m, r)
    V = np.maximum(S[:, None, :] * G[None, :, :], 0).sum(-1)
    n_u = np.stack([np.bincount(row, minlength=r + 1) for row in V])  # guesses at overlap u with s
    assert (n_u == n_u[0]).all()  # the same for every s (coordinate permutations, §6a)
    q0 = np.append(n_u[0][::-1].cumsum()[::-1], 0) / len(G)  # q₀(v) = T_v / M', v = 0..r+1
    t = np.minimum(1.0, np.minimum(delta + math.exp(eps) * q0, 1 - math.exp(-eps) * (1 - delta - q0)))
    t[0], t[-1] = 1.0, 0.0
    rho = t[:-1] - t[1:]
    P = rho[V] / np.maximum(n_u[np.arange(len(S))[:, None], V], 1)
    return S, G, V, P


@pytest.mark.parametrize("m, r, eps, delta", [(6, 6, 1.0, 1e-3), (8, 4, 1.0, 0.01), (6, 6, 2.0, 0.0), (2, 2, 1.0, 0.01), (8, 4, 0.5, 0.0)])
def test_the_attaining_mechanism(m, r, eps, delta):
    """The mechanism of :func:`attaining_mechanism` (docs/bounds.md §6b): one run's tail is t_{ε,δ}(v) at every
    v; its guess is (ε, δ)-indistinguishable from the uniform guess Q (both hockey-stick divergences ≤ δ; the
    likelihood ratio is constant on each overlap block, so unions of blocks are the worst events); and it is
    (2ε, (1 + e^ε)δ)-LDP on S_m, 2ε-LDP at δ = 0, so the adaptive test (Proposition 5), the exact test and
    Theorem 4.2 / Lemma C.1 at (2ε, (1 + e^ε)δ) all bound its tail, which is the reference test's p-value."""
    S, G, V, P = attaining_mechanism(m, r, eps, delta)
    assert np.allclose(P.sum(1), 1.0, atol=1e-12)
    t = np.exp(ref.log_reference_tail(m, r, eps, delta))
    for v in range(r + 2):
        assert np.allclose((P * (V >= v)).sum(1), t[v], rtol=1e-7, atol=1e-15), (v, t[v])
    Q, x = 1.0 / len(G), math.exp(eps)
    hockey = np.maximum(P - x * Q, 0).sum(1).max(), np.maximum(Q - x * P, 0).sum(1).max()
    assert max(hockey) <= delta * (1 + 1e-9) + 1e-15, hockey
    if delta > 0 and t[r] < 1:  # not capped: the δ is used in full (the claim is attained, not only respected)
        assert max(hockey) == pytest.approx(delta, rel=1e-9)
    pair = np.maximum(P[:, None, :] - x * x * P[None, :, :], 0).sum(-1)  # over (s, s')
    assert pair.max() <= (1 + x) * delta * (1 + 1e-9) + 1e-15, pair.max()
    if delta == 0:
        assert P.min() > 0 and (P.max(0) / P.min(0)).max() <= x * x * (1 + 1e-12)


def wilson(k: int, n: int, z: float) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion k/n at the normal quantile z."""
    p = k / n
    centre, half = (p + z * z / (2 * n)) / (1 + z * z / n), z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


def test_type_one_error_of_the_attaining_mechanism_is_exact():
    """δ > 0 where the test is attained (docs/bounds.md §6b): m = r = 6, L = 30, ε = 1, δ = 1e-3, ζ = 0.05.

    The guesses are drawn by :func:`attaining_mechanism`, the game's form of "reveal S with probability δ,
    else randomized response at ε": here the δ sits on the right guess and is taken from the wrong one
    (V = 0).  It attains: P(V ≥ v) = t_{ε,δ}(v) at every v, the most an (ε, δ) claim allows (§6b), with
    the δ used in full (:func:`test_the_attaining_mechanism`).  The literal mixture "S with probability δ,
    else an ε-mechanism" would not: its tail is δ + (1 − δ)t_ε(v) < t_{ε,δ}(v); nor would independent
    randomized response on each of the r guesses, which is not ε-indistinguishable (r-fold composition)
    and gives no balanced guess.  So every overlap is an iid draw of the law with tail t_{ε,δ} and the
    test's size is exactly P(Σ V ≥ c*) for its critical sum c*: computed here by convolving that law L
    times (not by simulation) and compared with the rejection rate of 10,000 audits, 99 % Wilson interval.  At these
    parameters the size is 0.048, nearly all of ζ (the next sum down, 126, would give 0.088): the overlaps
    take the even values 0..6 only, and at L = 30 a lattice point falls just inside ζ.  Theorem 4.2 at the
    δ-aware Lemma 4.1 level (2ε, (1 + e^ε)δ) bounds the same mechanism, so it rejects on no sum the
    reference test accepts."""
    from unlearn_audit.stats.bounds import audit_tail_bound
    from unlearn_audit.stats.signs import overlap

    m = r = 6
    L, eps, delta, audits = 30, 1.0, 1e-3, 10_000
    S, G, V_sg, P = attaining_mechanism(m, r, eps, delta)
    rho = np.array([P[0, V_sg[0] == u].sum() for u in range(r + 1)])  # the law of V (the same for every s)
    law = np.array([1.0])
    for _ in range(L):
        law = np.convolve(law, rho)
    rejects = np.array([ref.reference_log_p_value(c / L, m, r, L, eps, delta=delta) <= math.log(ZETA) for c in range(L * r + 1)])
    c_star = int(np.argmax(rejects))
    assert rejects[c_star:].all() and not rejects[:c_star].any()  # the rejection region is {Σ V ≥ c*}
    exact = float(law[c_star:].sum())
    assert exact <= ZETA and exact > 0.9 * ZETA, exact  # valid, and attained up to the lattice of sums
    assert law[c_star - 2 :].sum() > ZETA  # one even sum lower would exceed ζ: c* is the size-ζ cut

    rng = np.random.default_rng(61)
    s_idx = rng.integers(len(S), size=audits * L)
    g_idx = np.minimum((rng.random(audits * L)[:, None] > P[s_idx].cumsum(1)).sum(1), len(G) - 1)
    V = overlap(G[g_idx], S[s_idx]).reshape(audits, L)
    k = int(rejects[V.sum(1)].sum())
    low, high = wilson(k, audits, 2.5758293035489)
    assert low <= exact <= high, (k / audits, exact, low, high)
    assert low <= ZETA, (k / audits, low)

    thm42 = np.array([audit_tail_bound(c / L, m, r, L, 2 * eps, delta=(1 + math.exp(eps)) * delta) <= ZETA for c in range(L * r + 1)])
    assert thm42.any() and not (thm42 & ~rejects).any()
