"""Theorem 4.2, Lemma C.1, Eq. 3 and the μ-GDP view (stats/bounds.py; paper Section 4, App. A.3,
B, C; docs/bounds.md §0): the overlap counts N_u against enumeration and exact integers, ε_LB against an
independent naive implementation (tests/support/reference_bounds.py) up to paper scale
(m = 4500, r = 3000), the perfect-prediction values of App. F, monotonicity, the limit δ < M'/K,
the errors of bad input; Clopper–Pearson and Eq. 3 (Table 2's saturation), and the μ-GDP
conversions (Dong, Roth & Su 2022).  Validity by simulation is in test_bounds_validity.py, the
bounds on an (ε, δ) unlearning claim in test_bounds_delta.py."""

import functools
import itertools
import math
import time

import numpy as np
import pytest
from scipy.stats import beta

import reference_bounds
from reference_bounds import reference_epsilon
from unlearn_audit.stats import bounds, signs


@pytest.fixture(scope="module", autouse=True)
def one_full_grid_per_shape():
    """The naive reference sums N_u over the full (r/2 + 1)² grid (≈ 4.5 s at m = 4500, r = 3000);
    the paper-scale tests of this module share one evaluation per (m, r) (the function is pure)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(reference_bounds, "log_nu_full_grid", functools.lru_cache(maxsize=None)(reference_bounds.log_nu_full_grid))
        yield


def brute_force_counts(m: int, r: int) -> np.ndarray:
    """N_u by enumerating S_m against one fixed guess t (and checking another t agrees)."""
    all_s = signs.enumerate_sign_vectors(m)
    counts = []
    for t in (
        np.array([1] * (r // 2) + [-1] * (r // 2) + [0] * (m - r)),
        np.array([0] * (m - r) + [-1] * (r // 2) + [1] * (r // 2)),
    ):
        v = np.maximum(all_s * t, 0).sum(axis=1)
        counts.append(np.bincount(v, minlength=r + 1))
    np.testing.assert_array_equal(counts[0], counts[1])
    return counts[0]


@pytest.mark.parametrize("m,r", [(m, r) for m in range(2, 11) for r in range(2, m + 1, 2)])
def test_overlap_counts_match_enumeration(m, r):
    expected = brute_force_counts(m, r)
    got = np.exp(bounds.log_overlap_counts(m, r))
    np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12)
    assert math.isclose(got.sum(), math.comb(m, m // 2), rel_tol=1e-12)


@pytest.mark.parametrize("m,r", [(301, 120), (400, 400), (1000, 998), (2000, 40)])
def test_overlap_counts_exact_integers(m, r):
    """Windowed log-space sum against exact big-integer arithmetic."""
    h, n0 = r // 2, m - r
    c = (n0 + 1) // 2
    exact = [0] * (r + 1)
    combs_h = [math.comb(h, a) for a in range(h + 1)]
    for a1, a2 in itertools.product(range(h + 1), repeat=2):
        k = c - (a1 - a2)
        if 0 <= k <= n0:
            exact[a1 + a2] += math.comb(n0, k) * combs_h[a1] * combs_h[a2]
    got = bounds.log_overlap_counts(m, r)
    for u, n_u in enumerate(exact):
        if n_u == 0:
            assert got[u] == -np.inf
        else:
            # log of a big integer without overflow
            log_exact = math.log(n_u >> max(n_u.bit_length() - 60, 0)) + max(n_u.bit_length() - 60, 0) * math.log(2)
            assert got[u] == pytest.approx(log_exact, rel=1e-12, abs=1e-9)


def test_windowed_counts_match_full_grid_at_paper_scale():
    np.testing.assert_allclose(bounds.log_overlap_counts(4500, 3000), reference_bounds.log_nu_full_grid(4500, 3000), rtol=1e-11)


@pytest.mark.parametrize(
    "m,r,expected",
    [(6, 6, 4.00), (100, 100, 67.84), (100, 60, 40.83)],
)
def test_perfect_prediction_values_of_appendix_f(m, r, expected):
    res = bounds.epsilon_lower_bound([r] * 10, m, r)
    assert round(res.epsilon_ldp, 2) == expected
    assert res.rejected and res.epsilon_lb == pytest.approx(res.epsilon_ldp / 2)
    assert res.L == 10 and res.statistic == "mean"


@pytest.mark.parametrize("statistic", ["mean", "median"])
@pytest.mark.parametrize(
    "overlaps,m,r,delta",
    [
        ([4, 6, 5, 6, 6, 5, 4, 6, 6, 6], 6, 6, 0.0),
        ([40, 45, 38, 50, 41, 44, 47, 39, 43, 46, 45], 100, 60, 0.0),
        ([60, 55, 58, 57], 200, 80, 0.0),
        ([6, 6, 4, 6, 6], 6, 6, 0.05),
        ([9, 10, 8, 10, 9, 10], 30, 10, 1e-9),
    ],
)
def test_agrees_with_independent_implementation(overlaps, m, r, statistic, delta):
    ours = bounds.epsilon_lower_bound(overlaps, m, r, statistic=statistic, delta=delta).epsilon_ldp
    ref = reference_epsilon(overlaps, m, r, statistic=statistic, delta=delta)
    assert ours == pytest.approx(ref, abs=1e-4)


@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_paper_scale_agrees_with_independent_implementation_and_is_fast(statistic):
    rng = np.random.default_rng(3)
    overlaps = rng.integers(1900, 2300, size=10)
    bounds.epsilon_lower_bound([1600], 4500, 3000)  # warm the per-(m, r) cache
    t0 = time.perf_counter()
    ours = bounds.epsilon_lower_bound(overlaps, 4500, 3000, statistic=statistic)
    elapsed = time.perf_counter() - t0
    ref = reference_epsilon(overlaps, 4500, 3000, statistic=statistic)
    assert ours.epsilon_ldp == pytest.approx(ref, abs=1e-4)
    assert ours.epsilon_ldp > 10
    assert elapsed < 1.0


def test_tail_bound_is_monotone_in_epsilon_and_equals_zeta_at_solution():
    for statistic in ("mean", "median"):
        ov = [70, 72, 69, 75, 71, 70, 74, 73, 70, 72]
        res = bounds.epsilon_lower_bound(ov, 200, 100, statistic=statistic)
        value = res.statistic_value
        ps = [bounds.audit_tail_bound(value, 200, 100, 10, e, statistic=statistic) for e in np.linspace(0, 60, 61)]
        assert all(b >= a - 1e-15 for a, b in zip(ps, ps[1:]))
        assert bounds.audit_tail_bound(value, 200, 100, 10, res.epsilon_ldp, statistic=statistic) == pytest.approx(0.05, rel=1e-6)


def test_bound_monotone_in_overlap_and_zeta():
    eps = [bounds.epsilon_lower_bound([v] * 10, 100, 60).epsilon_ldp for v in range(30, 61, 3)]
    assert all(b >= a for a, b in zip(eps, eps[1:])) and eps[0] == 0 and eps[-1] > 40
    loose = bounds.epsilon_lower_bound([50] * 10, 100, 60, zeta=0.2).epsilon_ldp
    strict = bounds.epsilon_lower_bound([50] * 10, 100, 60, zeta=0.01).epsilon_ldp
    assert loose > strict > 0


def test_delta_positive_lowers_the_bound():
    ov = [9, 10, 8, 10, 9, 10]
    e0 = bounds.epsilon_lower_bound(ov, 30, 10).epsilon_ldp
    e1 = bounds.epsilon_lower_bound(ov, 30, 10, delta=1e-9).epsilon_ldp
    assert 0 < e1 < e0


def test_delta_above_m_prime_over_k_is_refused():
    assert bounds.max_delta(4500, 3000) < 1e-300
    with pytest.raises(ValueError, match="delta = 1e-10 is too large.*M'/K"):
        bounds.epsilon_lower_bound([2000], 4500, 3000, delta=1e-10)
    # r <= ~0.227 m: M' >= K, any delta < 1 is fine
    assert bounds.max_delta(4500, 1000) == 1.0
    bounds.epsilon_lower_bound([600], 4500, 1000, delta=0.5)


@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_no_rejection_gives_zero_not_none_or_negative(statistic):
    for ov in ([30] * 10, [0] * 10, [31, 29, 30], [1]):
        res = bounds.epsilon_lower_bound(ov, 100, 60, statistic=statistic)
        assert res.epsilon_ldp == 0.0 and res.epsilon_lb == 0.0 and res.rejected is False
    # slightly above r/2 but far from significant
    res = bounds.epsilon_lower_bound([31], 100, 60, statistic=statistic)
    assert res.epsilon_ldp == 0.0 and not res.rejected


def test_median_of_even_number_of_runs():
    res = bounds.epsilon_lower_bound([6, 6, 5, 5], 6, 6, statistic="median")
    assert res.statistic_value == 5.5
    # median 5.5 has the same tail as overlaps >= 6
    same = bounds.epsilon_lower_bound([6, 6, 6, 6], 6, 6, statistic="median")
    assert res.epsilon_ldp == pytest.approx(same.epsilon_ldp)


def test_large_m_is_finite_and_consistent():
    res = bounds.epsilon_lower_bound([30000] * 10, 100000, 50000)
    assert math.isfinite(res.epsilon_ldp) and res.epsilon_ldp > 100
    res2 = bounds.epsilon_lower_bound([30100] * 10, 100000, 50000)
    assert res2.epsilon_ldp > res.epsilon_ldp


@pytest.mark.parametrize(
    "kwargs,name",
    [
        (dict(overlaps=[3], m=6, r=5), "r \\(guess budget\\)"),
        (dict(overlaps=[3], m=6, r=8), "r \\(guess budget\\)"),
        (dict(overlaps=[3], m=6, r=0), "r \\(guess budget\\)"),
        (dict(overlaps=[3], m=0, r=2), "m \\(number"),
        (dict(overlaps=[7], m=6, r=6), "overlaps must lie in \\[0, r\\]"),
        (dict(overlaps=[-1], m=6, r=6), "overlaps must lie"),
        (dict(overlaps=[2.5], m=6, r=6), "overlaps must be integers"),
        (dict(overlaps=[], m=6, r=6), "overlaps is empty"),
        (dict(overlaps=[3], m=6, r=6, zeta=0.0), "zeta"),
        (dict(overlaps=[3], m=6, r=6, zeta=1.0), "zeta"),
        (dict(overlaps=[3], m=6, r=6, delta=1.0), "delta"),
        (dict(overlaps=[3], m=6, r=6, delta=-0.1), "delta"),
        (dict(overlaps=[3], m=6, r=6, statistic="mode"), "statistic"),
    ],
)
def test_invalid_inputs_name_the_argument(kwargs, name):
    with pytest.raises(ValueError, match=name):
        bounds.epsilon_lower_bound(**kwargs)


# ---------------------------------------------------------------- pairwise / GDP
def test_pairwise_saturation_of_table_2():
    """2L = 200,000 error-free test points at δ = 0.01 saturate at 10.1983 (Table 2)."""
    res = bounds.pairwise_epsilon_lower_bound(0, 100_000, 0, 100_000, delta=0.01)
    assert round(res.epsilon_lb, 4) == 10.1975 or abs(res.epsilon_lb - 10.1983) < 1e-3
    assert bounds.pairwise_error_limits(0, 100_000, 0, 100_000)[0] == pytest.approx(1 - 0.025 ** (1 / 100_000), rel=1e-9)
    assert res.method == "eq3" and res.epsilon_ldp == res.epsilon_lb and (res.m, res.r, res.L) == (2, 2, 200_000)


def test_pairwise_known_values_and_clamping():
    # Perfect separation with L = 10 (5 per side) gives 0 (Section 7.3).
    assert bounds.pairwise_epsilon_lower_bound(0, 5, 0, 5).epsilon_lb == 0.0
    # Random guessing never gives a positive bound.
    assert bounds.pairwise_epsilon_lower_bound(500, 1000, 500, 1000).epsilon_lb == 0.0
    # Hand computation with scipy's beta quantiles.
    from scipy.stats import beta

    fp_hi = beta.ppf(0.975, 11, 990)
    fn_hi = beta.ppf(0.975, 101, 900)
    expected = max(math.log((1 - fp_hi) / fn_hi), math.log((1 - fn_hi) / fp_hi))
    assert bounds.pairwise_epsilon_lower_bound(10, 1000, 100, 1000).epsilon_lb == pytest.approx(expected, rel=1e-9)


def test_pairwise_validity_for_randomized_response():
    """Binary randomized response with known ε: the bound exceeds ε in at most ~ζ of repetitions."""
    rng = np.random.default_rng(11)
    eps, n, reps = 1.5, 2000, 400
    p_err = 1 / (1 + math.exp(eps))
    fps = rng.binomial(n, p_err, reps)
    fns = rng.binomial(n, p_err, reps)
    lbs = np.array([bounds.pairwise_epsilon_lower_bound(a, n, b, n).epsilon_lb for a, b in zip(fps, fns)])
    assert np.mean(lbs > eps) <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)
    assert np.median(lbs) > 0.7 * eps  # and it has power


def test_gdp_bounds_for_gaussian_pair():
    """Errors of the optimal test between N(0,1) and N(μ,1): μ_LB stays below μ and gets close."""
    from scipy.stats import norm

    rng = np.random.default_rng(5)
    mu, n = 2.0, 200_000
    thr = mu / 2
    neg = rng.normal(0, 1, n)
    pos = rng.normal(mu, 1, n)
    fp, fn = int((neg > thr).sum()), int((pos <= thr).sum())
    lb = bounds.gdp_mu_lower_bound(fp, n, fn, n)
    assert 0.95 * mu < lb < mu
    correct = int((neg <= thr).sum() + (pos > thr).sum())
    lb_acc = bounds.gdp_mu_lower_bound_from_accuracy(correct, 2 * n)
    assert 0.95 * mu < lb_acc < mu
    assert norm.cdf(lb_acc / 2) < correct / (2 * n)
    assert bounds.gdp_mu_lower_bound_from_accuracy(40, 100) == 0.0


def test_gdp_conversions_roundtrip_and_known_value():
    assert bounds.gdp_delta(4.0, 1.0) == pytest.approx(0.9267112812554804, abs=1e-15)
    for mu in (0.3, 1.0, 3.0):
        for delta in (1e-5, 1e-2):
            eps = bounds.gdp_epsilon(mu, delta)
            assert bounds.gdp_delta(mu, eps) == pytest.approx(delta, rel=1e-7)
    assert bounds.gdp_epsilon(0.0, 1e-5) == 0.0
    with pytest.raises(ValueError, match="delta"):
        bounds.gdp_epsilon(1.0, 0.0)
    with pytest.raises(ValueError, match="mu"):
        bounds.gdp_delta(-1.0, 1.0)


@pytest.mark.parametrize(
    "args,name",
    [((11, 10, 0, 10), "fp"), ((0, 0, 0, 10), "n_neg"), ((0, 10, -1, 10), "fn"), ((0, 10, 0, 2.5), "n_pos")],
)
def test_pairwise_invalid_inputs(args, name):
    with pytest.raises(ValueError, match=name):
        bounds.pairwise_epsilon_lower_bound(*args)
    with pytest.raises(ValueError, match="zeta"):
        bounds.pairwise_epsilon_lower_bound(0, 10, 0, 10, zeta=1.5)


def test_default_method_is_theorem42():
    a = bounds.epsilon_lower_bound([60] * 10, 100, 60)
    b = bounds.epsilon_lower_bound([60] * 10, 100, 60, method="theorem4.2")
    assert a == b and a.method == "theorem4.2" and round(a.epsilon_ldp, 2) == 40.83
    assert a.parameter == "epsilon" and (a.ldp, a.lb) == (a.epsilon_ldp, a.epsilon_lb)


def test_one_bound_type_reads_its_own_parameter_only():
    """ε and μ bounds are one dataclass; a bound answers under its own parameter's names only."""
    from unlearn_audit.stats.gdp_overlaps import mu_lower_bound
    from unlearn_audit.stats.selection import Cell

    eps = bounds.epsilon_lower_bound([5] * 10, 6, 6)
    mu = mu_lower_bound([5] * 10, 6, 6)
    assert type(eps) is type(mu) is bounds.Bound
    assert mu.parameter == "mu" and mu.mu_lb == mu.lb and mu.mu_ldp == mu.ldp > 0
    with pytest.raises(AttributeError, match="bound on mu has no epsilon"):
        mu.epsilon_lb
    with pytest.raises(AttributeError, match="bound on epsilon has no mu"):
        eps.mu_ldp
    with pytest.raises(ValueError, match="parameter must be one of"):
        bounds.Bound("delta", 1.0, 0.5, True, "mean", 5.0, 6, 6, 10, 0.05)
    cell = Cell(6, "mean", "logit", "theorem4.2")
    tagged = eps.answering(cell, ceiling=eps.lb)
    assert tagged.cell == cell and tagged.ceiling == eps.lb and tagged.ldp == eps.ldp and eps.cell is None


# ---------------------------------------------------------------- counting and Clopper–Pearson
@pytest.mark.parametrize("m,r", [(1, None), (2, 2), (7, 4), (30, 10), (100, 60), (301, 120)])
def test_log_counts_are_the_binomial_and_multinomial_coefficients(m, r):
    """M' = C(m, ⌊m/2⌋) and K = m!/((r/2)!² (m − r)!), exactly with Python integers."""
    assert bounds.log_num_sign_vectors(m) == pytest.approx(math.log(math.comb(m, m // 2)), rel=1e-13, abs=1e-13)
    if r is None:
        return
    k = math.factorial(m) // (math.factorial(r // 2) ** 2 * math.factorial(m - r))
    assert bounds.log_num_guesses(m, r) == pytest.approx(math.log(k), rel=1e-12)
    assert bounds.max_delta(m, r) == pytest.approx(min(1.0, math.comb(m, m // 2) / k), rel=1e-10)
    assert bounds.log_overlap_counts(m, r).flags.writeable is False  # the cache cannot be corrupted


def test_clopper_pearson_ends_are_beta_quantiles():
    for k, n, alpha in ((0, 10, 0.025), (3, 100, 0.025), (50, 100, 0.05), (99, 100, 0.01), (100, 100, 0.05)):
        upper = bounds.clopper_pearson_upper(k, n, alpha)
        lower = bounds.clopper_pearson_lower(k, n, alpha)
        assert upper == (1.0 if k == n else pytest.approx(beta.ppf(1 - alpha, k + 1, n - k), rel=1e-10))
        assert lower == (0.0 if k == 0 else pytest.approx(beta.ppf(alpha, k, n - k + 1), rel=1e-10))
        assert lower <= k / n <= upper
    # zero errors: the upper end solves (1 − p)^n = α
    assert bounds.clopper_pearson_upper(0, 1000, 0.025) == pytest.approx(1 - 0.025 ** (1 / 1000), rel=1e-12)


def test_audit_tail_bound_argument_checks():
    with pytest.raises(ValueError, match="L must be >= 1"):
        bounds.audit_tail_bound(5.0, 6, 6, 0, 1.0)
    with pytest.raises(ValueError, match="L must be a non-negative integer"):
        bounds.audit_tail_bound(5.0, 6, 6, 2.5, 1.0)
    with pytest.raises(ValueError, match="epsilon must be >= 0"):
        bounds.audit_tail_bound(5.0, 6, 6, 3, -1.0)
    with pytest.raises(ValueError, match="statistic must be one of"):
        bounds.audit_tail_bound(5.0, 6, 6, 3, 1.0, statistic="mode")
    with pytest.raises(ValueError, match="too large"):
        bounds.audit_tail_bound(2000.0, 4500, 3000, 3, 1.0, delta=1e-10)
    assert bounds.audit_tail_bound(3.0, 6, 6, 5, 0.0) == pytest.approx(1.0, abs=1e-12)  # V̄ = r/2 = E[V] at ε = 0: no evidence
    assert bounds.audit_tail_bound(2.0, 6, 6, 5, 2.0) == 1.0  # the Chernoff bound exceeds 1 here: capped at 1
    assert bounds.audit_tail_bound(7.0, 6, 6, 5, 1.0, statistic="median") == 0.0  # a median above r is impossible
