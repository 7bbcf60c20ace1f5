"""Statistical validity of Theorem 4.2 / Lemma C.1 against mechanisms with known ε.

Randomized response on S_m is exactly ε-LDP; mixed with a δ-probability disclosure it is
(ε, δ)-LDP.  A valid level-ζ bound exceeds the true ε in at most a ζ fraction of
repetitions (up to Monte-Carlo slack); the bound must also have power (be positive often).
"""

import math

import numpy as np
import pytest

from unlearn_audit.stats.bounds import epsilon_lower_bound, log_num_guesses, log_num_sign_vectors, log_overlap_counts
from unlearn_audit.stats.simulation import randomized_response_overlaps

ZETA = 0.05
REPS = 600
SLACK = 3 * math.sqrt(ZETA * (1 - ZETA) / REPS)


def rejection_rate(m, r, L, eps, statistic, delta=0.0, seed=0):
    rng = np.random.default_rng([m, r, L, int(eps * 1000), seed])
    ov = randomized_response_overlaps(m, r, eps, L * REPS, rng, delta=delta).reshape(REPS, L)
    lbs = np.array([epsilon_lower_bound(o, m, r, statistic=statistic, delta=delta).epsilon_ldp for o in ov])
    return float(np.mean(lbs > eps)), lbs


@pytest.mark.parametrize("statistic", ["mean", "median"])
@pytest.mark.parametrize("m,r,L,extra", [(6, 6, 10, 2.0), (10, 4, 20, 2.0), (20, 10, 10, 2.0), (40, 20, 10, 2.0), (40, 20, 5, 1.0)])
def test_rejection_rate_at_most_zeta(m, r, L, extra, statistic):
    eps = log_num_sign_vectors(m) + extra  # strong mechanisms, so that the bound has power
    rate, lbs = rejection_rate(m, r, L, eps, statistic)
    assert rate <= ZETA + SLACK, f"bound exceeded true eps={eps} in {rate:.3f} of repetitions"
    assert np.mean(lbs > 0) > 0.7, "the test should have power against this mechanism"
    assert np.median(lbs) > 0.1 * eps


@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_rejection_rate_with_delta(statistic):
    # m = r = 6: K = M' = 20, so any delta < 1 gives a valid test (Lemma C.1)
    rate, lbs = rejection_rate(6, 6, 10, 4.0, statistic, delta=0.05, seed=1)
    assert rate <= ZETA + SLACK
    assert np.mean(lbs > 0) > 0.7


def pointwise_bound(m, r, eps, delta=0.0):
    """π_ε(u) of Theorem 4.2 / Lemma C.1 for u = 0..r."""
    log_mp = log_num_sign_vectors(m)
    a = (1 - math.exp(-log_mp)) * math.exp(log_num_guesses(m, r)) * delta
    g = (math.exp(eps) + a) / (math.exp(eps) + math.exp(log_mp) - 1)
    return np.exp(log_overlap_counts(m, r)) * g


@pytest.mark.parametrize("m,r,eps,delta", [(6, 6, 2.0, 0.0), (8, 4, 3.0, 0.0), (6, 6, 1.0, 0.3), (12, 12, 6.0, 0.0)])
def test_pointwise_bound_holds_and_is_tight_at_perfect_overlap(m, r, eps, delta):
    """Pr[V = u] ≤ π_ε(u) (Eq. 6 / 11); for randomized response with r = m it is an equality at u = r."""
    n = 40_000
    rng = np.random.default_rng([m, r, n])
    v = randomized_response_overlaps(m, r, eps, n, rng, delta=delta)
    freq = np.bincount(v, minlength=r + 1) / n
    pi = pointwise_bound(m, r, eps, delta)
    se = np.sqrt(np.maximum(pi * (1 - np.minimum(pi, 1)), 1e-12) / n)
    assert np.all(freq <= pi + 4 * se + 1e-12)
    if r == m:
        assert freq[r] == pytest.approx(pi[r], abs=4 * se[r])


def test_pointwise_check_detects_an_understated_epsilon_or_dropped_delta():
    """The same check fails for a claim below the truth, and for δ > 0 treated as δ = 0."""
    n = 40_000
    v = randomized_response_overlaps(6, 6, 2.0, n, np.random.default_rng(3))
    assert np.mean(v == 6) > pointwise_bound(6, 6, 1.5)[6] + 0.02
    w = randomized_response_overlaps(6, 6, 1.0, n, np.random.default_rng(4), delta=0.3)
    assert np.mean(w == 6) > pointwise_bound(6, 6, 1.0, 0.0)[6] + 0.1
