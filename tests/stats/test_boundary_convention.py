"""One convention at the boundary p_0 = ζ (docs/bounds.md §5): every test reports
sup{ε ≥ 0 : p_ε ≤ ζ} with rejected = (bound > 0), so at ζ equal to the p-value of ε = 0 (μ = 0)
each returns exactly 0, not rejected, and a slightly larger ζ gives a positive bound."""

from __future__ import annotations

import math

import pytest

from unlearn_audit.stats.bounds import ZERO_BOUND_TOL, as_bound, audit_tail_bound, epsilon_lower_bound
from unlearn_audit.stats.gdp_overlaps import mu_lower_bound, mu_tail_bound
from unlearn_audit.stats.posterior_tests import posterior_tail_bound

OVERLAPS = [6] * 3 + [4] * 7
M = R = 6
L = len(OVERLAPS)
MEAN = sum(OVERLAPS) / L


def p_at_zero(method: str, statistic: str) -> float:
    if method == "theorem4.2":
        return audit_tail_bound(MEAN if statistic == "mean" else 4.0, M, R, L, 0.0, statistic=statistic)
    value = {"mean": MEAN, "median": 4.0, "perfect": 3}[statistic]
    return posterior_tail_bound(value, M, R, L, 0.0, statistic=statistic, method=method)


@pytest.mark.parametrize("method,statistic", [("theorem4.2", "mean"), ("exact", "mean"), ("mgf", "mean"), ("adaptive", "mean"),
                                              ("exact", "perfect")])
def test_epsilon_at_p_equal_zeta_is_zero_and_not_rejected(method, statistic):
    zeta = p_at_zero(method, statistic)
    assert 0 < zeta < 0.5
    at = epsilon_lower_bound(OVERLAPS, M, R, zeta=zeta, statistic=statistic, method=method)
    assert at.epsilon_ldp == 0.0 and at.epsilon_lb == 0.0 and not at.rejected
    above = epsilon_lower_bound(OVERLAPS, M, R, zeta=zeta * 1.01, statistic=statistic, method=method)
    assert above.epsilon_ldp > ZERO_BOUND_TOL and above.rejected


def test_mu_at_p_equal_zeta_is_zero_and_not_rejected():
    zeta = mu_tail_bound(MEAN, M, R, L, 0.0)
    at = mu_lower_bound(OVERLAPS, M, R, zeta=zeta)
    assert at.mu_ldp == 0.0 and not at.rejected
    assert mu_lower_bound(OVERLAPS, M, R, zeta=zeta * 1.01).rejected


def test_as_bound():
    assert as_bound(1e-16) == 0.0 and as_bound(-1.0) == 0.0 and as_bound(math.nan) == 0.0 and as_bound(0.25) == 0.25
