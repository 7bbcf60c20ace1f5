"""μ-GDP lower bounds from overlaps (stats/gdp_overlaps.py; docs/bounds.md §6, Lemma C.1, Dong,
Roth & Su 2022 Cor. 2.13): the log-space δ_μ(ε), the ε-minimisation against Lemma C.1, monotonicity
in μ, edge cases and type-I error on Gaussian mechanisms (μ = 2√m/σ)."""

import math

import numpy as np
import pytest

import unlearn_audit
import unlearn_audit.stats
from unlearn_audit.stats import gdp_overlaps as go
from unlearn_audit.stats.bounds import audit_tail_bound, gdp_delta, max_delta
from unlearn_audit.stats.gaussian_mechanism import hockey_stick_delta
from unlearn_audit.stats.signs import sample_sign_vectors

ZETA = 0.05
LOG_ZETA = math.log(ZETA)


def test_importable_from_package_and_stats():
    assert unlearn_audit.mu_lower_bound is unlearn_audit.stats.mu_lower_bound is go.mu_lower_bound
    assert unlearn_audit.Bound is unlearn_audit.stats.Bound
    assert {"mu_lower_bound", "Bound"} <= set(unlearn_audit.__all__) & set(unlearn_audit.stats.__all__)


@pytest.mark.parametrize("mu", [0.3, 1.0, 3.0, 8.0])
def test_log_delta_matches_gdp_delta_and_stays_finite_below_underflow(mu):
    for eps in (0.0, 0.5, 2.0, 10.0):
        d = gdp_delta(mu, eps)
        if d > 1e-300:
            assert go.log_gdp_delta(mu, eps) == pytest.approx(math.log(d), rel=1e-8, abs=1e-12)
    far = go.log_gdp_delta(mu, 200.0 * mu)
    assert math.isfinite(far) and far < -700
    assert go.log_gdp_delta(0.0, 1.0) == -math.inf


@pytest.mark.parametrize("m,r,L,value,statistic", [(6, 6, 100, 4.4, "mean"), (10, 4, 20, 3.0, "mean"),
                                                    (6, 6, 25, 6.0, "median"), (100, 60, 10, 55.0, "mean")])
def test_p_value_is_at_most_lemma_c1_at_every_epsilon(m, r, L, value, statistic):
    """The minimum over ε is no larger than Lemma C.1 at any single (ε, δ_μ(ε)) it can evaluate."""
    for mu in (0.5, 1.5, 4.0):
        p = go.mu_tail_bound(value, m, r, L, mu, statistic=statistic)
        for eps in np.linspace(0.0, 15.0, 31):
            delta = gdp_delta(mu, eps)
            if delta < max_delta(m, r) * (1 - 1e-9) and delta < 1:
                assert p <= audit_tail_bound(value, m, r, L, eps, statistic=statistic, delta=delta) * (1 + 1e-7) + 1e-300


def test_mu_zero_is_theorem42_at_epsilon_zero():
    for m, r, L, v in [(6, 6, 100, 4.4), (100, 60, 10, 50.0)]:
        assert go.mu_tail_bound(v, m, r, L, 0.0) == pytest.approx(audit_tail_bound(v, m, r, L, 0.0), rel=1e-12)


@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_p_value_monotone_in_mu(statistic):
    for m, r, L, v in [(6, 6, 100, 4.4), (100, 60, 10, 58.0), (4500, 3000, 10, 1985.5)]:
        p = [go.mu_log_p_value(v, m, r, L, mu, statistic=statistic) for mu in np.linspace(0.0, 6.0, 41)]
        assert np.all(np.diff(p) >= -1e-9), (m, r, L)
        assert p[-1] > p[0]


@pytest.mark.parametrize("overlaps,m,r", [([4] * 100, 6, 6), ([60] * 10, 100, 60), ([1985] * 5 + [1986] * 5, 4500, 3000)])
@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_mu_lb_is_the_edge_of_the_rejected_set(overlaps, m, r, statistic):
    res = go.mu_lower_bound(overlaps, m, r, statistic=statistic)
    assert res.mu_lb == res.mu_ldp / 2 and res.rejected == (res.mu_ldp > 0)
    assert (res.m, res.r, res.L, res.zeta, res.statistic) == (m, r, len(overlaps), ZETA, statistic)
    if res.mu_ldp > 0:
        value = res.statistic_value
        assert go.mu_log_p_value(value, m, r, len(overlaps), res.mu_ldp, statistic=statistic) <= LOG_ZETA + 1e-9
        above = res.mu_ldp * (1 + 1e-6) + 1e-9
        assert go.mu_log_p_value(value, m, r, len(overlaps), above, statistic=statistic) > LOG_ZETA


def test_mu_zero_not_nan_when_statistic_at_most_half_r():
    for overlaps, m, r in [([3, 3, 3], 6, 6), ([30] * 10, 100, 60), ([0, 1, 2], 10, 4)]:
        for statistic in ("mean", "median"):
            res = go.mu_lower_bound(overlaps, m, r, statistic=statistic)
            assert res.mu_ldp == 0.0 and res.mu_lb == 0.0 and not res.rejected


def test_bad_input():
    with pytest.raises(ValueError, match="statistic must be one of"):
        go.mu_lower_bound([6], 6, 6, statistic="mode")
    with pytest.raises(ValueError, match="overlaps must lie in"):
        go.mu_lower_bound([7], 6, 6)
    with pytest.raises(ValueError, match="mu must be a finite number"):
        go.mu_tail_bound(5.0, 6, 6, 1, -1.0)


# --------------------------------------------------------------------------------------
# type-I error: output s + N(0, σ² I) is μ-GDP with μ = ||s − s'||_max / σ = 2√m/σ (even m)
# --------------------------------------------------------------------------------------
REPS = 400
SLACK = 3 * math.sqrt(ZETA * (1 - ZETA) / REPS)


def gaussian_overlaps(m, r, n, sigma, rng):
    s = sample_sign_vectors(m, n, rng)
    y = s + sigma * rng.normal(size=s.shape)
    order = np.argsort(-y, axis=1)
    g = np.zeros(s.shape, dtype=np.int64)
    rows = np.arange(n)[:, None]
    g[rows, order[:, : r // 2]] = 1
    g[rows, order[:, m - r // 2 :]] = -1
    return np.maximum(g * s, 0).sum(axis=1)


def mu_rejection_rate(V, m, r, mu, statistic):
    L = V.shape[1]
    values = V.mean(axis=1) if statistic == "mean" else np.median(V, axis=1)
    verdict = {x: go.mu_log_p_value(x, m, r, L, mu, statistic=statistic) <= LOG_ZETA for x in np.unique(values)}
    return float(np.mean([verdict[x] for x in values]))


@pytest.mark.parametrize("m,r,L,sigma", [(6, 6, 100, 1.0), (6, 6, 100, 0.5), (8, 8, 25, 0.4), (10, 4, 20, 0.5)])
@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_type_one_error_at_most_zeta(m, r, L, sigma, statistic):
    mu_true = 2 * math.sqrt(m) / sigma
    V = gaussian_overlaps(m, r, REPS * L, sigma, np.random.default_rng([m, r, L, int(100 * sigma)])).reshape(REPS, L)
    rate = mu_rejection_rate(V, m, r, mu_true, statistic)
    assert rate <= ZETA + SLACK, f"rejected the true mu={mu_true:.3f} in {rate:.3f} of repetitions"
    if (m, r) != (10, 4) and statistic == "mean":  # power against claims far below the truth
        assert mu_rejection_rate(V, m, r, mu_true / 10, statistic) > 0.9


def test_mu_lb_of_simulated_runs_below_truth():
    m, r, L, sigma = 6, 6, 100, 0.5
    V = gaussian_overlaps(m, r, 20 * L, sigma, np.random.default_rng(5)).reshape(20, L)
    lbs = np.array([go.mu_lower_bound(row, m, r).mu_ldp for row in V])
    assert np.all(lbs < 2 * math.sqrt(m) / sigma) and np.all(lbs > 0)


def test_min_log_g_is_the_minimum_over_epsilon_of_lemma_c1s_factor():
    """min_ε log g(ε; δ_μ(ε)), g = (e^ε + (M' − 1)/M'·K·δ)/(e^ε + M' − 1) written out with M', K as
    Python integers: never above a fine grid's minimum, and −log M' at μ = 0 (δ = 0, best ε = 0)."""
    for m, r in ((6, 6), (10, 4), (20, 10)):
        m_prime = math.comb(m, m // 2)
        k = math.factorial(m) // (math.factorial(r // 2) ** 2 * math.factorial(m - r))
        assert go.min_log_g_gdp(0.0, m, r) == pytest.approx(-math.log(m_prime), rel=1e-12)
        for mu in (0.5, 2.0, 5.0):
            grid = np.linspace(0.0, math.log(m_prime) + 10, 4001)
            g = (np.exp(grid) + (m_prime - 1) / m_prime * k * hockey_stick_delta(grid, mu)) / (np.exp(grid) + m_prime - 1)
            best = math.log(g.min())
            got = go.min_log_g_gdp(mu, m, r)
            assert got <= best + 1e-9 and got >= best - 1e-3, (m, r, mu, got, best)
        assert go.min_log_g_gdp(0.5, m, r) < go.min_log_g_gdp(2.0, m, r)  # larger μ, weaker test


def test_mu_p_value_argument_checks():
    with pytest.raises(ValueError, match=r"L \(number of runs\) must be an integer >= 1"):
        go.mu_log_p_value(5.0, 6, 6, 0, 1.0)
    with pytest.raises(ValueError, match=r"L \(number of runs\)"):
        go.mu_log_p_value(5.0, 6, 6, True, 1.0)
    with pytest.raises(ValueError, match="statistic must be one of"):
        go.mu_log_p_value(5.0, 6, 6, 3, 1.0, statistic="mode")
    with pytest.raises(ValueError, match="zeta"):
        go.mu_lower_bound([6], 6, 6, zeta=1.0)
    assert go.mu_tail_bound(7.0, 6, 6, 3, 1.0, statistic="median") == 0.0  # a median above r cannot happen
    assert go.log_gdp_delta(1.0, np.array([0.0, 1.0])).shape == (2,)
