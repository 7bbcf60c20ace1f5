"""The δ = 0 tests "exact" and "mgf" (stats/posterior_tests.py; docs/bounds.md §1–5, paper
Section 4, App. B): the dominating law Q_ε and the max-MGF Ψ_ε against enumeration of S_m, the
exact convolution tail against enumeration and a log-space reference far below 1e-300, orderings
against Theorem 4.2 (§3), monotonicity in ε (§5), solver edge cases, and type-I error by
simulation on exactly ε-LDP mechanisms on S_m (§7)."""

import itertools
import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.special import logsumexp

from per_statistic import per_distinct_statistic
from ldp_mechanisms import coordinate_rr, exponential_mechanism, extreme_mechanism
from reference_bounds import overlaps_by_enumeration
from unlearn_audit import epsilon_lower_bound
from unlearn_audit.stats import posterior_tests as pt
from unlearn_audit.stats.bounds import (
    log_mgf_min,
    audit_tail_bound,
    log_num_sign_vectors,
    log_overlap_counts,
)
from unlearn_audit.stats.signs import enumerate_sign_vectors, sample_sign_vectors

ZETA = 0.05
LOG_ZETA = math.log(ZETA)


def brute_extremes(m, r, eps, lam):
    """max over two-level posteriors (every subset A of S_m high) of P(V ≥ v) and E e^{λV}."""
    v = overlaps_by_enumeration(m, r)
    n = v.size
    best_tail = np.zeros(r + 2)
    best_mgf = 0.0
    for mask in range(1, 2**n):
        hi = np.array([(mask >> i) & 1 for i in range(n)], dtype=bool)
        w = np.where(hi, math.exp(eps), 1.0)
        p = w / w.sum()
        for k in range(r + 2):
            best_tail[k] = max(best_tail[k], p[v >= k].sum())
        best_mgf = max(best_mgf, float(np.dot(p, np.exp(lam * v))))
    return best_tail, best_mgf


@pytest.mark.parametrize("m,r", [(4, 2), (4, 4), (5, 2)])
@pytest.mark.parametrize("eps", [0.0, 0.7, 3.0])
def test_dominating_tail_and_max_mgf_match_enumeration(m, r, eps):
    tail, mgf = brute_extremes(m, r, eps, lam=0.8)
    log_q, log_1mq = pt.log_dominating_tail(m, r, eps)
    assert np.allclose(np.exp(log_q), tail, atol=1e-12)
    assert np.allclose(np.exp(log_q) + np.exp(log_1mq), 1.0)
    assert math.exp(pt.log_max_mgf(m, r, eps, 0.8)) == pytest.approx(mgf, rel=1e-12)
    q = np.exp(pt.log_dominating_pmf(m, r, eps))
    assert np.allclose(q, tail[:-1] - tail[1:], atol=1e-12) and q.sum() == pytest.approx(1.0, abs=1e-14)


@pytest.mark.parametrize("m,r,L", [(4, 2, 2), (4, 2, 3), (4, 4, 2), (4, 4, 3), (6, 4, 3)])
def test_exact_convolution_matches_enumeration_of_tuples(m, r, L):
    eps = 1.1
    q = np.exp(pt.log_dominating_pmf(m, r, eps))
    tuples = np.array(list(itertools.product(range(r + 1), repeat=L)))
    prob = np.prod(q[tuples], axis=1)
    total = tuples.sum(axis=1)
    for c in range(L * r + 2):
        brute = prob[total >= c].sum()
        got = pt.posterior_tail_bound(c / L, m, r, L, eps, method="exact")
        assert got == pytest.approx(brute, rel=1e-12, abs=1e-300), c


def log_conv_reference(log_pmf, L):
    """L-fold convolution in pure log space (slow, for checking)."""
    out = log_pmf.copy()
    for _ in range(L - 1):
        new = np.full(out.size + log_pmf.size - 1, -np.inf)
        for i, a in enumerate(log_pmf):
            new[i : i + out.size] = np.logaddexp(new[i : i + out.size], out + a)
        out = new
    return out


@pytest.mark.parametrize("m,r,L,eps,c,tiny", [(100, 60, 10, 0.0, 590, False), (100, 60, 10, 5.0, 600, False),
                                              (100, 60, 10, 5.0, 560, False), (60, 40, 20, 30.0, 700, False),
                                              (100, 60, 20, 0.0, 1190, True), (100, 60, 20, 2.0, 1100, False)])
def test_exact_tail_matches_log_space_reference_far_below_1e300(m, r, L, eps, c, tiny):
    log_pmf = pt.log_dominating_pmf(m, r, eps)
    ref = float(logsumexp(log_conv_reference(log_pmf, L)[c:]))
    got = pt.posterior_log_p_value(c / L, m, r, L, eps, method="exact")
    assert got == pytest.approx(ref, rel=1e-10, abs=1e-12)
    assert (got < math.log(1e-300)) == tiny


def thm42_log_p(value, m, r, L, eps):
    """log of Theorem 4.2's Eq. 1 (uncapped)."""
    log_n = log_overlap_counts(m, r)
    log_mp = log_num_sign_vectors(m)
    return L * (eps - np.logaddexp(eps, log_mp + math.log1p(-math.exp(-log_mp))) + log_mgf_min(log_n, value))


GRID = [(m, r, L, frac, eps) for m, r in [(6, 6), (8, 4), (20, 10), (100, 60), (300, 100)] for L in (1, 3, 10, 60)
        for frac in (0.55, 0.75, 0.9, 1.0) for eps in (0.0, 0.5, 2.0, 8.0)]


def test_orderings_on_a_grid():
    mgf_wins = 0
    for m, r, L, frac, eps in GRID:
        c = int(round(frac * L * r))
        v = c / L
        exact = pt.posterior_log_p_value(v, m, r, L, eps, method="exact")
        mgf = pt.posterior_log_p_value(v, m, r, L, eps, method="mgf")
        thm = min(0.0, thm42_log_p(v, m, r, L, eps))
        chernoff_q = min(0.0, L * log_mgf_min(pt.log_dominating_pmf(m, r, eps), v))
        assert mgf <= thm + 1e-9 * max(1.0, -thm), (m, r, L, v, eps)
        assert exact <= chernoff_q + 1e-9 * max(1.0, -chernoff_q), (m, r, L, v, eps)
        assert chernoff_q <= thm + 1e-9 * max(1.0, -thm), (m, r, L, v, eps)
        if L == 1:  # one run: q_ε is the exact worst case, no bound can be smaller
            assert exact <= mgf + 1e-9 * max(1.0, -mgf), (m, r, v, eps)
        mgf_wins += mgf < exact - 1e-6
    # Q_ε is not an admissible law, so for many runs the max-MGF bound can beat it (docs/bounds.md §3)
    assert mgf_wins > 0


def test_exact_median_never_looser_than_theorem42_median():
    for m, r, L, frac, eps in GRID:
        v = math.ceil(frac * r)
        exact = pt.posterior_tail_bound(v, m, r, L, eps, statistic="median", method="exact")
        thm = audit_tail_bound(v, m, r, L, eps, statistic="median")
        assert exact <= thm * (1 + 1e-9) + 1e-300, (m, r, L, v, eps)


@pytest.mark.parametrize("overlaps,m,r", [([4] * 100, 6, 6), ([60] * 10, 100, 60), ([50, 52, 55, 58, 60], 100, 60),
                                          ([7, 8, 6, 8, 5, 7], 20, 10)])
@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_solved_epsilon_never_below_theorem42_and_is_rejected(overlaps, m, r, statistic):
    thm = epsilon_lower_bound(overlaps, m, r, statistic=statistic)
    for method in ("exact", "mgf") if statistic == "mean" else ("exact",):
        res = epsilon_lower_bound(overlaps, m, r, statistic=statistic, method=method)
        assert res.method == method and res.epsilon_lb == res.epsilon_ldp / 2
        assert res.epsilon_ldp >= thm.epsilon_ldp - 1e-9
        L, value = len(overlaps), res.statistic_value
        if res.epsilon_ldp > 0:
            p = pt.posterior_log_p_value(value, m, r, L, res.epsilon_ldp, statistic=statistic, method=method)
            above = pt.posterior_log_p_value(value, m, r, L, res.epsilon_ldp * (1 + 1e-6) + 1e-6,
                                             statistic=statistic, method=method)
            assert p <= LOG_ZETA < above


@pytest.mark.parametrize("method,statistic", [("exact", "mean"), ("mgf", "mean"), ("exact", "median")])
def test_p_value_monotone_in_epsilon(method, statistic):
    eps_grid = np.linspace(0.0, 12.0, 49)
    for m, r, L, v in [(6, 6, 100, 4.0), (20, 10, 10, 8.0), (100, 60, 10, 55.0), (100, 60, 5, 60.0)]:
        p = [pt.posterior_log_p_value(v, m, r, L, e, statistic=statistic, method=method) for e in eps_grid]
        assert np.all(np.diff(p) >= -1e-12), (m, r, L, v)
        assert p[-1] > p[0]


@pytest.mark.parametrize("method,statistic", [("exact", "mean"), ("mgf", "mean"), ("exact", "median")])
def test_zero_not_nan_when_statistic_at_most_half_r(method, statistic):
    for overlaps, m, r in [([3, 3, 3], 6, 6), ([30] * 10, 100, 60), ([0, 1, 2], 10, 4), ([2, 2, 2, 2], 10, 4)]:
        res = epsilon_lower_bound(overlaps, m, r, statistic=statistic, method=method)
        assert res.epsilon_ldp == 0.0 and res.epsilon_lb == 0.0 and not res.rejected


def test_bad_method_arguments_raise_clear_errors():
    with pytest.raises(ValueError, match=r"method='exact' supports delta = 0 only; use method='theorem4.2' \(Lemma C.1\) for delta > 0"):
        epsilon_lower_bound([6, 6], 6, 6, method="exact", delta=0.01)
    with pytest.raises(ValueError, match="method='mgf' supports delta = 0 only"):
        epsilon_lower_bound([6, 6], 6, 6, method="mgf", delta=0.01)
    with pytest.raises(ValueError, match="statistic='mean' only; use method='exact' for the median"):
        epsilon_lower_bound([6, 6], 6, 6, method="mgf", statistic="median")
    with pytest.raises(ValueError, match="method must be one of"):
        epsilon_lower_bound([6, 6], 6, 6, method="chernoff")


def test_large_case_is_fast_and_tighter():
    import time

    ov = [1985] * 5 + [1986] * 5
    thm = epsilon_lower_bound(ov, 4500, 3000).epsilon_ldp
    for method in ("exact", "mgf"):
        t0 = time.perf_counter()
        eps = epsilon_lower_bound(ov, 4500, 3000, method=method).epsilon_ldp
        assert time.perf_counter() - t0 < 5.0
        assert thm < eps < thm + 10


# --------------------------------------------------------------------------------------
# type-I error by simulation (docs/bounds.md §7)
# --------------------------------------------------------------------------------------
REPS = 400
SLACK = 3 * math.sqrt(ZETA * (1 - ZETA) / REPS)


def rejection_rates(V, m, r, eps, names=None):
    """Fraction of repetitions (rows of V) in which each test (or each of ``names``) rejects
    H0: ε_true ≤ eps; each test runs once per distinct value of its statistic."""
    L = V.shape[1]
    tests = {
        "theorem4.2": lambda x: audit_tail_bound(x, m, r, L, eps) <= ZETA,
        "exact": lambda x: pt.posterior_log_p_value(x, m, r, L, eps, method="exact") <= LOG_ZETA,
        "mgf": lambda x: pt.posterior_log_p_value(x, m, r, L, eps, method="mgf") <= LOG_ZETA,
        "theorem4.2/median": lambda x: audit_tail_bound(x, m, r, L, eps, statistic="median") <= ZETA,
        "exact/median": lambda x: pt.posterior_log_p_value(x, m, r, L, eps, statistic="median") <= LOG_ZETA,
    }
    stats = {"mean": V.sum(axis=1) / L, "median": np.median(V, axis=1)}
    out = {}
    for name, test in tests.items():
        if names is not None and name not in names:
            continue
        values = stats["median" if name.endswith("median") else "mean"]
        verdict = {x: test(x) for x in np.unique(values)}
        out[name] = float(np.mean([verdict[x] for x in values]))
    return out


CASES = [("rr", 6, 6, 100, 1.0), ("rr", 6, 6, 10, 1.5), ("rr", 10, 4, 20, 1.0), ("rr", 20, 10, 10, 1.0),
         ("expo", 6, 6, 100, 0.3), ("expo", 8, 4, 20, 0.5), ("expo", 8, 8, 10, 0.6)]


@pytest.mark.parametrize("kind,m,r,L,param", CASES)
def test_type_one_error_at_most_zeta(kind, m, r, L, param):
    rng = np.random.default_rng([m, r, L, 7])
    mech = coordinate_rr if kind == "rr" else exponential_mechanism
    V = mech(m, r, REPS * L, param, rng).reshape(REPS, L)
    eps_true = m * param
    rates = rejection_rates(V, m, r, eps_true)
    for name, rate in rates.items():
        assert rate <= ZETA + SLACK, f"{name} rejected the true eps={eps_true} in {rate:.3f} of repetitions"
    # the tests do reject claims well below the truth (they are not vacuous)
    low = rejection_rates(V, m, r, eps_true / 10, names=("exact", "theorem4.2"))  # the two compared below
    assert low["exact"] > 0.3 and low["exact"] >= low["theorem4.2"]


def test_extreme_mechanism_attains_zeta_one_run():
    """m = r = 12, v* = 10: at the ε with q_ε(10) = ζ the exact test rejects w.p. ζ; Theorem 4.2 rarely."""
    m, vstar, n = 12, 10, 3000
    eps = brentq(lambda e: pt.log_dominating_tail(m, m, e)[0][vstar] - math.log(ZETA * (1 - 1e-9)), 0.0, 20.0)
    V = extreme_mechanism(m, vstar, eps, n, np.random.default_rng(3)).reshape(n, 1)
    rates = rejection_rates(V, m, m, eps)
    sd = math.sqrt(ZETA * (1 - ZETA) / n)
    assert abs(rates["exact"] - ZETA) < 3 * sd  # tight: the exact test uses all of its level
    assert rates["mgf"] <= rates["exact"] and rates["theorem4.2"] < ZETA / 5


def test_extreme_mechanism_attains_zeta_exact_median():
    """L = 25: P(median ≥ v*) = P(Binomial(25, q_ε(v*)) ≥ 13) exactly; set to ζ."""
    m, vstar, L, reps = 8, 8, 25, 1000
    q_star = brentq(lambda q: pt.log_binom_upper_tail(L, 13, math.log(q), math.log1p(-q)) - math.log(ZETA * (1 - 1e-9)),
                    1e-6, 1 - 1e-6)
    eps = brentq(lambda e: pt.log_dominating_tail(m, m, e)[0][vstar] - math.log(q_star), 0.0, 20.0)
    V = extreme_mechanism(m, vstar, eps, reps * L, np.random.default_rng(4)).reshape(reps, L)
    rates = rejection_rates(V, m, m, eps)
    assert abs(rates["exact/median"] - ZETA) < 3 * math.sqrt(ZETA * (1 - ZETA) / reps)
    assert rates["theorem4.2/median"] < ZETA / 5
    assert all(rate <= ZETA + SLACK for rate in rates.values())


@pytest.mark.parametrize("L,vstar", [(10, 6), (100, 8)])
def test_extreme_mechanism_type_one_error_many_runs(L, vstar):
    m, eps = 8, 3.0
    V = extreme_mechanism(m, vstar, eps, REPS * L, np.random.default_rng([L, vstar])).reshape(REPS, L)
    for name, rate in rejection_rates(V, m, m, eps).items():
        assert rate <= ZETA + SLACK, name


def test_solver_agrees_with_p_value_on_simulated_runs():
    """ε_LB > ε_true only where the p-value at ε_true is ≤ ζ (the ε solver inverts the same test).

    30 simulated audits as before; the bound and the p-values are functions of the sum of the
    overlaps, so each is computed once per distinct sum (tests/support/per_statistic.py) and the
    assertions are checked for every audit."""
    rng = np.random.default_rng(11)
    m, r, L, eps_c = 6, 6, 10, 1.5
    V = coordinate_rr(m, r, 30 * L, eps_c, rng).reshape(30, L)
    for method in ("exact", "mgf"):
        lbs = per_distinct_statistic(V, "mean", lambda row: epsilon_lower_bound(row, m, r, method=method).epsilon_ldp)
        for eps in (2.0, 4.0):
            ps = per_distinct_statistic(V, "mean", lambda row: pt.posterior_log_p_value(row.mean(), m, r, L, eps, method=method))
            for row, lb, p in zip(V, lbs, ps):
                assert (lb > eps) <= (p <= LOG_ZETA)
                if row.mean() > r / 2:
                    assert (lb >= eps) == (p <= LOG_ZETA) or abs(lb - eps) < 1e-6


def test_posterior_epsilon_ldp_is_the_solver_of_epsilon_lower_bound():
    for overlaps, m, r in (([4] * 100, 6, 6), ([50, 52, 55, 58, 60], 100, 60), ([3, 3, 3], 6, 6)):
        v = np.asarray(overlaps, dtype=float)
        for method, statistic in (("exact", "mean"), ("mgf", "mean"), ("exact", "median")):
            stat, eps = pt.posterior_epsilon_ldp(v, m, r, zeta=ZETA, statistic=statistic, method=method)
            res = epsilon_lower_bound(overlaps, m, r, statistic=statistic, method=method)
            assert (stat, eps) == (res.statistic_value, res.epsilon_ldp)
            assert stat == (v.mean() if statistic == "mean" else np.median(v))
            assert math.isfinite(eps) and eps >= 0


def test_posterior_p_value_argument_checks():
    with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
        pt.posterior_log_p_value(5.0, 6, 6, 3, -1.0)
    with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
        pt.log_dominating_tail(6, 6, math.inf)
    with pytest.raises(ValueError, match=r"L \(number of runs\) must be an integer >= 1"):
        pt.posterior_log_p_value(5.0, 6, 6, 0, 1.0)
    with pytest.raises(ValueError, match=r"method must be one of \('exact', 'mgf', 'adaptive'\) here"):
        pt.posterior_log_p_value(5.0, 6, 6, 3, 1.0, method="theorem4.2")
    with pytest.raises(ValueError, match=r"r \(guess budget\) must be even"):
        pt.log_dominating_pmf(6, 3, 1.0)
    assert pt.METHODS == ("theorem4.2", "exact", "mgf", "adaptive")
    # trivial thresholds: every statistic ≥ 0, none above r
    assert pt.posterior_log_p_value(0.0, 6, 6, 3, 1.0) == 0.0 and pt.posterior_log_p_value(7.0, 6, 6, 3, 1.0) == -math.inf
    assert pt.posterior_tail_bound(0.0, 6, 6, 3, 1.0, statistic="median") == 1.0
