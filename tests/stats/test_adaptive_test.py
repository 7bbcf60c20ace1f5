"""The adaptive worst-case test of the sum of overlaps, ``method="adaptive"`` (stats/posterior_tests.py;
docs/bounds.md §3a): the backward induction against enumeration of every adaptive strategy on S_m, a
log-space reference far below 1e-300, the orderings proved in §3a (never above "exact" or "mgf", never
below the best fixed vertex), monotonicity in ε, the reference value, the work limit, and type-I error
by simulation of ε-LDP mechanisms on S_m, among them adaptively chosen ones and the one that attains
the bound."""

import functools
import itertools
import math
import time

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import logsumexp

from reference_bounds import overlaps_by_enumeration
from unlearn_audit import epsilon_lower_bound
from unlearn_audit.stats import posterior_tests as pt
from unlearn_audit.stats.bounds import (
    log_mgf_min,
    clopper_pearson_lower,
    clopper_pearson_upper,
    log_num_sign_vectors,
    log_overlap_counts,
)
from unlearn_audit.stats.signs import enumerate_sign_vectors, sample_sign_vectors

ZETA = 0.05
LOG_ZETA = math.log(ZETA)


def law_of(weights, v_of_s, r):
    """Law of V when the posterior over S_m is ∝ weights."""
    p = weights / weights.sum()
    return np.bincount(v_of_s, weights=p, minlength=r + 1)


def threshold_laws(m, r, eps):
    """p_v, v = 0..r: posterior e^ε on {V ≥ v}, 1 elsewhere (v = 0: the null law), by enumeration."""
    v = overlaps_by_enumeration(m, r)
    return np.array([law_of(np.where(v >= k, math.exp(eps), 1.0), v, r) for k in range(r + 1)])


def log_threshold_laws(m, r, eps):
    """log p_v(u) from the counts N_u (for m too large to enumerate; equal to threshold_laws otherwise)."""
    log_n = log_overlap_counts(m, r)
    u = np.arange(r + 1)
    with np.errstate(invalid="ignore"):
        rows = [log_n + np.where(u >= v, eps, 0.0) for v in range(r + 1)]
    return np.array([row - logsumexp(row) for row in rows])


def all_vertex_laws(m, r, eps):
    """The laws of V at every vertex of the posterior polytope: e^ε on ANY subset A of S_m (deduplicated)."""
    v = overlaps_by_enumeration(m, r)
    laws = {tuple(np.round(law_of(np.where(np.array(hi), math.exp(eps), 1.0), v, r), 14))
            for hi in itertools.product([False, True], repeat=v.size)}
    return np.array(sorted(laws))


def brute_adaptive(laws, L):
    """max over EVERY deterministic adaptive strategy (a law for each history of earlier overlaps) of
    P(ΣV ≥ c), for c = 0..L·r+1, by enumeration of all strategies.  Mixed strategies and mixtures over
    guesses are convex combinations, so this is the supremum over adaptively chosen ε-LDP mechanisms."""
    laws = np.unique(laws, axis=0)
    r = laws.shape[1] - 1
    supp = [u for u in range(r + 1) if laws[:, u].max() > 0]
    hists = [h for j in range(L) for h in itertools.product(supp, repeat=j)]
    pos = {h: i for i, h in enumerate(hists)}
    nl = laws.shape[0]
    idx = np.arange(nl ** len(hists), dtype=np.int64)
    digit = [((idx // nl**k) % nl).astype(np.int8) for k in range(len(hists))]  # the law after history k
    by_sum = np.zeros((L * r + 2, idx.size))
    for path in itertools.product(supp, repeat=L):
        prob = np.ones(idx.size)
        for j in range(L):
            prob *= laws[digit[pos[path[:j]]], path[j]]
        by_sum[sum(path)] += prob
    tails = np.cumsum(by_sum[::-1], axis=0)[::-1]  # P(ΣV ≥ c) of every strategy
    return tails.max(axis=1)


def reference_log_dp(log_laws, L, c):
    """Plain log-space backward induction G_{j−1}(s) = max_v log Σ_u p_v(u) G_j(s + u), s = 0..c−1;
    returns (log G_0(0), policy[j][s] = the maximising law index of run j + 1 at partial sum s)."""
    r = log_laws.shape[1] - 1
    g = np.where(np.arange(c + r) >= c, 0.0, -np.inf)
    policy = []
    for _ in range(L):
        idx = np.arange(c)[:, None] + np.arange(r + 1)[None, :]
        vals = logsumexp(log_laws[None, :, :] + g[idx][:, None, :], axis=2)  # (s, v)
        policy.append(vals.argmax(axis=1))
        g = np.concatenate([vals.max(axis=1), np.zeros(r)])
    return float(g[0]), policy[::-1]


def log_p(value, m, r, L, eps, method="adaptive"):
    return pt.posterior_log_p_value(value, m, r, L, eps, method=method)


# --------------------------------------------------------------------------------------
# the recursion against enumeration
# --------------------------------------------------------------------------------------
@pytest.mark.parametrize("m,r,L,vertices", [(4, 2, 2, "all"), (4, 4, 2, "all"), (4, 2, 3, "threshold"),
                                            (4, 4, 3, "threshold")])
@pytest.mark.parametrize("eps", [0.4, 1.5])
def test_recursion_matches_enumeration_of_adaptive_strategies(m, r, L, vertices, eps):
    """'all': every two-level posterior on every subset of S_m (all vertices of the polytope, not only
    the threshold sets of Lemma 3); 'threshold': the r + 1 laws p_v, with full-history strategies."""
    laws = all_vertex_laws(m, r, eps) if vertices == "all" else threshold_laws(m, r, eps)
    brutes = brute_adaptive(laws, L)
    for c in range(1, L * r + 2):
        brute = brutes[c]
        got = math.exp(log_p(c / L, m, r, L, eps))
        assert got == pytest.approx(brute, rel=1e-9, abs=1e-300), c
        assert got >= brute * (1 - 1e-12)  # the rounding margins point upwards


@pytest.mark.parametrize("m,r,L,c,eps,tiny", [(6, 6, 250, 1490, 0.0, True), (6, 6, 400, 2300, 0.5, True),
                                              (8, 4, 400, 1590, 0.2, True), (6, 6, 40, 200, 2.0, False),
                                              (8, 4, 60, 150, 1.0, False), (6, 4, 3, 7, 0.7, False),
                                              (100, 60, 10, 520, 3.0, False), (100, 60, 12, 715, 0.5, False), (100, 60, 18, 1077, 0.0, True),
                                              (60, 40, 8, 250, 0.5, False), (20, 10, 30, 280, 1.0, False)])
def test_matches_log_space_reference_far_below_1e300(m, r, L, c, eps, tiny):
    """Against a plain log-space recursion (no tilting, no pruning; m = 100, 60 prune the window)."""
    with np.errstate(divide="ignore"):
        laws = np.log(threshold_laws(m, r, eps)) if m <= 8 else log_threshold_laws(m, r, eps)
    if m <= 8:
        assert np.allclose(np.exp(laws), np.exp(log_threshold_laws(m, r, eps)), atol=1e-14)
    ref, _ = reference_log_dp(laws, L, c)
    got = log_p(c / L, m, r, L, eps)
    assert got == pytest.approx(ref, rel=1e-10, abs=1e-10)
    assert got >= ref - 1e-12 * abs(ref)  # never below the exact value
    assert math.isfinite(got) and (got < math.log(1e-300)) == tiny


@pytest.mark.parametrize("m,r,L,frac,eps", [(100, 60, 10, 0.8, 3.0), (100, 60, 4, 0.95, 20.0), (60, 40, 8, 0.7, 0.5),
                                            (300, 100, 5, 0.85, 10.0), (20, 10, 30, 0.75, 1.0), (6, 6, 100, 0.66, 1.6),
                                            (4500, 3000, 3, 0.66, 150.0)])
def test_matrix_and_frame_paths_agree(m, r, L, frac, eps, monkeypatch):
    """One matrix product per run (narrow windows) and prefix/suffix sums in D_v frames (wide windows,
    several frames when chunk_nats is small) compute the same recursion; a wider window (pruning at
    e^{-150}) changes nothing, a narrower one (e^{-15}) can only raise the p-value."""
    c = int(round(frac * L * r))
    dense = pt._log_adaptive_tail(m, r, L, c, eps, dense_max=10**9)
    frames = pt._log_adaptive_tail(m, r, L, c, eps, dense_max=0)
    chunked = pt._log_adaptive_tail(m, r, L, c, eps, dense_max=0, chunk_nats=2.0)
    assert frames == pytest.approx(dense, rel=1e-10, abs=1e-10)
    assert chunked == pytest.approx(dense, rel=1e-10, abs=1e-10)
    monkeypatch.setattr(pt, "_PRUNE_NATS", 150.0)
    wide = pt._log_adaptive_tail(m, r, L, c, eps)
    monkeypatch.setattr(pt, "_PRUNE_NATS", 15.0)
    narrow = pt._log_adaptive_tail(m, r, L, c, eps)
    assert wide == pytest.approx(dense, rel=1e-10, abs=1e-10)
    assert narrow >= wide - 1e-12 * abs(wide)


# --------------------------------------------------------------------------------------
# orderings (docs/bounds.md §3a) and monotonicity
# --------------------------------------------------------------------------------------
GRID = [(m, r, L, frac, eps) for m, r in [(6, 6), (8, 4), (20, 10), (100, 60)] for L in (1, 3, 10, 60)
        for frac in (0.55, 0.75, 0.9, 1.0) for eps in (0.0, 0.5, 2.0, 8.0)]


def best_fixed_vertex(m, r, L, c, eps):
    """max_v log P(p_v^{*L} ≥ c) over every ⌈r/10⌉-th v: every run uses the same vertex (a
    non-adaptive strategy), a lower bound on the adaptive worst case."""
    log_n, log_t, log_b = pt.log_overlap_blocks(m, r)
    log_d = pt._log_d(eps, log_t, log_b)
    u = np.arange(r + 1)
    return max(pt.log_sum_tail(log_n + np.where(u >= v, eps, 0.0) - log_d[v], L, c)
               for v in range(0, r + 1, max(1, r // 10)))


def thm42_log_p(value, m, r, L, eps):
    """log of Theorem 4.2's Eq. 1 (uncapped), as in test_posterior_tests.py."""
    log_mp = log_num_sign_vectors(m)
    return L * (eps - np.logaddexp(eps, log_mp + math.log1p(-math.exp(-log_mp))) + log_mgf_min(log_overlap_counts(m, r), value))


def test_orderings_on_a_grid():
    strict_exact = strict_mgf = 0
    for m, r, L, frac, eps in GRID:
        c = int(round(frac * L * r))
        v = c / L
        ada = log_p(v, m, r, L, eps)
        exact = log_p(v, m, r, L, eps, "exact")
        mgf = log_p(v, m, r, L, eps, "mgf")
        fixed = best_fixed_vertex(m, r, L, c, eps)
        tol = lambda x: 1e-9 * max(1.0, abs(x))  # noqa: E731
        assert ada <= exact + tol(exact), (m, r, L, v, eps)
        assert ada <= mgf + tol(mgf), (m, r, L, v, eps)
        assert ada >= fixed - tol(fixed), (m, r, L, v, eps)
        thm = min(0.0, thm42_log_p(v, m, r, L, eps))
        assert ada <= thm + tol(thm)  # Theorem 4.2, through "exact"
        if L == 1 or c == L * r:  # one run, or every run at r: q_ε is attained, all three coincide
            assert ada == pytest.approx(exact, rel=1e-9, abs=1e-12)
        strict_exact += ada < exact - 1e-6
        strict_mgf += ada < mgf - 1e-6
    assert strict_exact > 0 and strict_mgf > 0  # strictly tighter than both somewhere


def test_reference_value_and_ordering_of_the_bounds():
    ov = [4] * 100
    got = {meth: epsilon_lower_bound(ov, 6, 6, method=meth).epsilon_ldp for meth in ("theorem4.2", "exact", "mgf", "adaptive")}
    assert got["adaptive"] == pytest.approx(1.632, abs=5e-4)
    assert got["exact"] == pytest.approx(1.161, abs=5e-4) and got["mgf"] == pytest.approx(1.417, abs=5e-4)
    assert got["theorem4.2"] < got["exact"] < got["mgf"] < got["adaptive"]
    res = epsilon_lower_bound(ov, 6, 6, method="adaptive")
    assert res.method == "adaptive" and res.epsilon_lb == res.epsilon_ldp / 2 and res.rejected
    assert log_p(4.0, 6, 6, 100, res.epsilon_ldp) <= LOG_ZETA < log_p(4.0, 6, 6, 100, res.epsilon_ldp + 1e-6)


@pytest.mark.parametrize("overlaps,m,r", [([4] * 100, 6, 6), ([60] * 10, 100, 60), ([50, 52, 55, 58, 60], 100, 60),
                                          ([7, 8, 6, 8, 5, 7], 20, 10), ([3, 4, 4, 2, 4] * 6, 8, 4)])
def test_solved_epsilon_at_least_exact_and_mgf(overlaps, m, r):
    ada = epsilon_lower_bound(overlaps, m, r, method="adaptive").epsilon_ldp
    for method in ("theorem4.2", "exact", "mgf"):
        assert ada >= epsilon_lower_bound(overlaps, m, r, method=method).epsilon_ldp - 1e-8, method


def test_p_value_monotone_in_epsilon():
    eps_grid = np.linspace(0.0, 12.0, 49)
    for m, r, L, v in [(6, 6, 100, 4.0), (20, 10, 10, 8.0), (100, 60, 10, 55.0), (100, 60, 5, 60.0), (8, 4, 30, 3.1)]:
        p = np.array([log_p(v, m, r, L, e) for e in eps_grid])
        assert np.all(np.diff(p) >= -1e-10 * np.maximum(1.0, np.abs(p[1:]))), (m, r, L, v)
        assert p[-1] > p[0]


def test_edge_cases_and_errors():
    assert log_p(0.0, 6, 6, 3, 1.0) == 0.0 and log_p(7.0, 6, 6, 3, 1.0) == -math.inf
    assert log_p(6.0, 6, 6, 3, 1.0) == pytest.approx(3 * pt.log_dominating_tail(6, 6, 1.0)[0][6])  # c = L·r
    for overlaps, m, r in [([3, 3, 3], 6, 6), ([30] * 10, 100, 60), ([2, 2, 2, 2], 10, 4)]:
        res = epsilon_lower_bound(overlaps, m, r, method="adaptive")
        assert res.epsilon_ldp == 0.0 and not res.rejected
    with pytest.raises(ValueError, match=r"method='adaptive' is a bound for statistic='mean' only; use method='exact' "
                                         r"for the median"):
        epsilon_lower_bound([6, 6], 6, 6, method="adaptive", statistic="median")
    with pytest.raises(ValueError, match=r"method='adaptive' supports delta = 0 only"):
        epsilon_lower_bound([6, 6], 6, 6, method="adaptive", delta=0.01)
    with pytest.raises(ValueError, match=r"^method='adaptive' needs .* table cells .* above its limit of .*; use "
                                         r"method='exact' or method='mgf'$"):
        log_p(45.0, 100, 60, 20000, 1.0)
    assert "adaptive" in pt.METHODS


def test_large_case_is_fast_and_tighter():
    ov = [1985] * 5 + [1986] * 5
    eps = {meth: epsilon_lower_bound(ov, 4500, 3000, method=meth).epsilon_ldp for meth in ("exact", "mgf")}
    t0 = time.perf_counter()
    ada = epsilon_lower_bound(ov, 4500, 3000, method="adaptive").epsilon_ldp
    assert time.perf_counter() - t0 < 15.0
    assert max(eps.values()) - 1e-8 <= ada < max(eps.values()) + 5


# --------------------------------------------------------------------------------------
# type-I error by simulation of ε-LDP mechanisms on S_m
# --------------------------------------------------------------------------------------
M, R, L_RUNS, C_STAR, REPS = 8, 4, 10, 31, 4000


def guesses(m, r):
    """Every guess: r/2 entries +1, r/2 entries −1, the rest 0."""
    out = []
    for plus in itertools.combinations(range(m), r // 2):
        rest = [j for j in range(m) if j not in plus]
        for minus in itertools.combinations(rest, r // 2):
            g = np.zeros(m, dtype=int)
            g[list(plus)], g[list(minus)] = 1, -1
            out.append(g)
    return np.array(out)


class VertexMechanisms:
    """P(t | s) ∝ e^ε if V(s, t) ≥ v else 1 on S_m × T: ε-LDP, and (S_m's coordinate permutations act
    transitively and keep T) the posterior of every output is two-level on {V ≥ v}: the law of V is p_v."""

    def __init__(self, m, r, eps):
        self.S, T = enumerate_sign_vectors(m), guesses(m, r)
        self.V = np.maximum(self.S[:, None, :] * T[None, :, :], 0).sum(-1)
        prob = np.where(self.V[None] >= np.arange(r + 1)[:, None, None], math.exp(eps), 1.0)
        self.cdf = np.cumsum(prob / prob.sum(axis=2, keepdims=True), axis=2)

    def run(self, v, rng):
        """One run of every repetition: repetition i uses vertex v[i]; returns the overlaps."""
        i = rng.integers(len(self.S), size=v.size)
        cdf = self.cdf[v, i]
        t = np.minimum((rng.random((v.size, 1)) > cdf).sum(axis=1), cdf.shape[1] - 1)
        return self.V[i, t]


@functools.lru_cache(maxsize=1)
def eps_attaining_zeta():
    """ε at which the adaptive p-value of the sum C_STAR is exactly ζ (so the test rejects iff ΣV ≥ C_STAR)."""
    return brentq(lambda e: log_p(C_STAR / L_RUNS, M, R, L_RUNS, e) - math.log(ZETA * (1 - 1e-9)), 0.0, 10.0, xtol=1e-13)


@functools.lru_cache(maxsize=4)
def optimal_policy(eps):
    with np.errstate(divide="ignore"):
        log_laws = np.log(threshold_laws(M, R, eps))
    value, policy = reference_log_dp(log_laws, L_RUNS, C_STAR)
    return math.exp(value), policy


def simulate(kind, eps, rng):
    """The overlaps (REPS, L) of REPS audits of L runs by the mechanism ``kind``, all ε-LDP on S_m."""
    mech = VertexMechanisms(M, R, eps)
    V = np.zeros((REPS, L_RUNS), dtype=int)
    total = np.zeros(REPS, dtype=int)
    _, policy = optimal_policy(eps) if kind == "adaptive-optimal" else (None, None)
    for j in range(L_RUNS):
        if kind.startswith("vertex-"):
            v = np.full(REPS, int(kind.split("-")[1]))
        elif kind == "mixture":
            v = rng.integers(1, R + 1, size=REPS)
        elif kind == "adaptive-optimal":  # the maximising vertex at (run, running sum): attains G_0(0)
            v = policy[j][np.minimum(total, C_STAR - 1)]
        elif kind == "adaptive-pace":  # bold while behind the pace c*/L, cautious when ahead
            v = np.where(total < j * C_STAR / L_RUNS, R, 1)
        elif kind == "rr":  # per-coordinate randomized response, (m·ε_c)-LDP for even m
            s = sample_sign_vectors(M, REPS, rng)
            y = np.where(rng.random(s.shape) < 1 / (1 + math.exp(eps / M)), -s, s).astype(float)
            order = np.argsort(-(y + 1e-9 * rng.random(y.shape)), axis=1)
            g = np.zeros_like(s)
            rows = np.arange(REPS)[:, None]
            g[rows, order[:, : R // 2]], g[rows, order[:, M - R // 2 :]] = 1, -1
            V[:, j] = np.maximum(g * s, 0).sum(axis=1)
            total += V[:, j]
            continue
        V[:, j] = mech.run(v, rng)
        total += V[:, j]
    return V


def rejection_rate(V, eps):
    sums = V.sum(axis=1)
    verdict = {int(c): log_p(c / L_RUNS, M, R, L_RUNS, eps) <= LOG_ZETA for c in np.unique(sums)}
    k = int(sum(verdict[int(c)] for c in sums))
    return k, sums.size


KINDS = ["vertex-2", "vertex-3", "vertex-4", "mixture", "rr", "adaptive-pace", "adaptive-optimal"]


def type_one_table(seed=0):
    """(kind, rejections, repetitions, 95% Clopper–Pearson interval) at the true ε; used by the test."""
    eps = eps_attaining_zeta()
    rows = []
    for n, kind in enumerate(KINDS):
        k, reps = rejection_rate(simulate(kind, eps, np.random.default_rng([seed, n])), eps)
        rows.append((kind, k, reps, clopper_pearson_lower(k, reps, 0.025), clopper_pearson_upper(k, reps, 0.025)))
    return eps, rows


@pytest.mark.parametrize("kind", KINDS)
def test_type_one_error_at_most_zeta(kind):
    eps = eps_attaining_zeta()
    k, reps = rejection_rate(simulate(kind, eps, np.random.default_rng([0, KINDS.index(kind)])), eps)
    # not significantly above ζ (one-sided 0.1 %)
    assert clopper_pearson_lower(k, reps, 0.001) <= ZETA, f"{kind}: {k}/{reps} rejections at the true eps"
    if kind == "adaptive-optimal":  # the bound is attained: its rate is G_0(0) = ζ, within a 99.8 % interval
        attained, _ = optimal_policy(eps)
        assert attained == pytest.approx(ZETA, rel=1e-6)
        assert clopper_pearson_lower(k, reps, 0.001) <= attained <= clopper_pearson_upper(k, reps, 0.001)


def test_rejection_region_is_the_sum_threshold():
    """At the ε of the simulations the test rejects exactly the sums ≥ C_STAR (p-values decrease in c)."""
    eps = eps_attaining_zeta()
    p = [log_p(c / L_RUNS, M, R, L_RUNS, eps) for c in range(L_RUNS * R + 1)]
    assert np.all(np.diff(p) <= 1e-12)
    assert [c for c in range(L_RUNS * R + 1) if p[c] <= LOG_ZETA] == list(range(C_STAR, L_RUNS * R + 1))
