"""Statistical validity of Theorem 4.2 / Lemma C.1 (stats/bounds.py, ``epsilon_lower_bound``)
against mechanisms with known ε.

Randomized response on S_m is exactly ε-LDP; mixed with a δ-probability disclosure it is
(ε, δ)-LDP (stats/simulation.py, whose pointwise law is checked in test_simulation.py).  A valid
level-ζ bound exceeds the true ε in at most a ζ fraction of repetitions, up to Monte-Carlo slack:
3,000 repetitions (600 before the bounds were computed once per distinct statistic), limit
ζ + 3·sqrt(ζ(1 − ζ)/3000) = 0.0619 (a binomial 3σ; 0.0767 at 600, so the check is stricter).  The
bound must also have power (be positive often).
"""

import math

import numpy as np
import pytest

from per_statistic import per_distinct_statistic
from unlearn_audit.stats.bounds import epsilon_lower_bound, log_num_sign_vectors
from unlearn_audit.stats.simulation import randomized_response_overlaps

ZETA = 0.05
REPS = 3000
SLACK = 3 * math.sqrt(ZETA * (1 - ZETA) / REPS)


def rejection_rate(m, r, L, eps, statistic, delta=0.0, seed=0):
    """(fraction of the REPS audits whose bound exceeds eps, the bounds).  Every audit's bound is
    ``epsilon_lower_bound`` of its overlaps, evaluated once per distinct statistic (per_statistic)."""
    rng = np.random.default_rng([m, r, L, int(eps * 1000), seed])
    ov = randomized_response_overlaps(m, r, eps, L * REPS, rng, delta=delta).reshape(REPS, L)
    lbs = per_distinct_statistic(ov, statistic, lambda o: epsilon_lower_bound(o, m, r, statistic=statistic, delta=delta).epsilon_ldp)
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


def test_per_statistic_bounds_are_the_bounds_of_each_audit():
    """The shortcut of rejection_rate: each audit's bound is the bound of its own overlaps."""
    rng = np.random.default_rng(5)
    ov = randomized_response_overlaps(20, 10, 5.0, 40 * 10, rng).reshape(40, 10)
    for statistic in ("mean", "median"):
        fast = per_distinct_statistic(ov, statistic, lambda o: epsilon_lower_bound(o, 20, 10, statistic=statistic).epsilon_ldp)
        slow = [epsilon_lower_bound(o, 20, 10, statistic=statistic).epsilon_ldp for o in ov]
        np.testing.assert_array_equal(fast, slow)
