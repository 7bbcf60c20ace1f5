"""Trade-off curves (stats/tradeoff.py, docs/bounds.md §8): curve properties against independent
formulas (tests/pipeline/test_tradeoff.py checks the figures drawn from them)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from scipy.special import ndtr

from unlearn_audit.stats.bounds import gdp_mu_lower_bound
from unlearn_audit.stats.gaussian_mechanism import gaussian_sigma, hockey_stick_delta
from unlearn_audit.stats.tradeoff import (
    confidence_tradeoff_point,
    dp_tradeoff,
    gaussian_mechanism_mu,
    gdp_tradeoff,
    perfect_privacy_tradeoff,
)

GRID = np.linspace(0.0, 1.0, 2001)


# ---------------------------------------------------------------------------------------- curves
def test_zero_privacy_loss_is_the_diagonal():
    assert np.allclose(gdp_tradeoff(GRID, 0.0), 1 - GRID, atol=1e-15)
    assert np.allclose(dp_tradeoff(GRID, 0.0, 0.0), 1 - GRID, atol=1e-15)
    assert np.array_equal(perfect_privacy_tradeoff(GRID), 1 - GRID)
    assert gdp_tradeoff(0.25, 0.0) == pytest.approx(0.75)


def test_gdp_curve_is_the_neyman_pearson_curve_of_two_unit_gaussians():
    # the threshold test "reject N(0, 1) iff x > t" has α = Φ(−t), β = Φ(t − μ), and is optimal
    t = np.linspace(-6, 6, 241)
    for mu in (0.3, 1.0, 2.5, 6.0):
        assert np.allclose(gdp_tradeoff(ndtr(-t), mu), ndtr(t - mu), rtol=1e-9, atol=1e-13), mu
    assert gdp_tradeoff(0.0, 3.0) == 1.0 and gdp_tradeoff(1.0, 3.0) == 0.0
    # precise far below machine epsilon, where a large μ's curve lives: Φ⁻¹(1 − 1e-30) ≈ 11.46
    assert gdp_tradeoff(1e-30, 8.0) == pytest.approx(float(ndtr(11.464 - 8.0)), rel=1e-3)


@pytest.mark.parametrize("curve", [lambda a: gdp_tradeoff(a, 0.7), lambda a: gdp_tradeoff(a, 3.0),
                                   lambda a: dp_tradeoff(a, 1.0, 0.05), lambda a: dp_tradeoff(a, 2.5, 0.0)])
def test_curves_are_convex_decreasing_below_the_diagonal(curve):
    beta = curve(GRID)
    assert np.all(np.diff(beta) <= 1e-15)
    assert np.all(np.diff(beta, 2) >= -1e-12)  # convex
    assert np.all(beta <= 1 - GRID + 1e-15) and np.all(beta >= 0)


@pytest.mark.parametrize("mu", [0.2, 1.0, 3.0])
def test_gdp_curve_is_symmetric(mu):
    a = np.linspace(0.0, 1.0, 401)
    assert np.allclose(gdp_tradeoff(gdp_tradeoff(a, mu), mu), a, atol=1e-12)


@pytest.mark.parametrize("epsilon,delta", [(0.5, 0.0), (1.0, 0.05), (3.0, 0.2)])
def test_dp_curve_is_symmetric_and_piecewise_linear(epsilon, delta):
    a = np.linspace(0.0, 1 - delta, 401)
    f = dp_tradeoff(a, epsilon, delta)
    assert np.allclose(dp_tradeoff(f, epsilon, delta), a, atol=1e-12)
    assert dp_tradeoff(0.0, epsilon, delta) == pytest.approx(1 - delta)
    assert np.all(dp_tradeoff(np.linspace(1 - delta, 1, 11), epsilon, delta) == 0)
    # the fixed point α* = (1 − δ)/(1 + e^ε) joins the slopes −e^ε and −e^−ε
    star = (1 - delta) / (1 + math.exp(epsilon))
    assert dp_tradeoff(star, epsilon, delta) == pytest.approx(star)
    assert dp_tradeoff(star / 2, epsilon, delta) == pytest.approx(1 - delta - math.exp(epsilon) * star / 2)


def test_dp_curve_of_a_huge_epsilon_neither_overflows_nor_warns():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        f = dp_tradeoff(GRID, 1e4, 1e-3)
    assert f[0] == pytest.approx(1 - 1e-3) and np.all(f[1:] == 0) and not np.any(np.signbit(f))


@pytest.mark.parametrize("mu", [0.5, 1.0, 2.5])
def test_gdp_curve_is_the_envelope_of_its_epsilon_delta_curves(mu):
    """μ-GDP ⇔ (ε, δ_μ(ε))-DP for all ε (Dong, Roth & Su, Cor. 2.13): G_μ ≥ f_{ε, δ_μ(ε)} for
    every ε, with equality in the supremum over ε."""
    a = np.linspace(0.0, 1.0, 501)
    g = gdp_tradeoff(a, mu)
    envelope = np.zeros_like(a)
    for eps in np.linspace(0.0, 4 * mu + mu * mu, 2001):
        f = dp_tradeoff(a, eps, float(hockey_stick_delta(eps, mu)))
        assert np.all(g >= f - 1e-12), eps
        envelope = np.maximum(envelope, f)
    assert np.max(g - envelope) < 2e-3
    # and not for a larger μ: its curve lies below some f_{ε, δ_μ(ε)}
    assert np.min(gdp_tradeoff(a, 1.2 * mu) - envelope) < -1e-3


@pytest.mark.parametrize("epsilon,delta", [(0.1, 0.01), (1.0, 1e-3), (50.0, 0.01), (1e4, 1e-3)])
def test_gaussian_mechanism_mu_is_sensitivity_over_sigma_and_touches_its_claim(epsilon, delta):
    mu = gaussian_mechanism_mu(epsilon, delta)
    assert mu == pytest.approx(0.37 / gaussian_sigma(epsilon, delta, 0.37), rel=1e-9)
    assert float(hockey_stick_delta(epsilon, mu)) == pytest.approx(delta, rel=1e-6)
    a = np.concatenate([np.linspace(0, 1, 20001), np.geomspace(1e-300, 1e-3, 2000)])
    gap = gdp_tradeoff(a, mu) - dp_tradeoff(a, epsilon, delta)
    assert gap.min() >= -1e-9 and gap.min() < 1e-3  # f_{ε,δ} lies below G_μ and touches it


def test_confidence_point_lies_on_the_proven_curve():
    for fp, n_neg, fn, n_pos in [(40, 1000, 30, 1000), (3, 100_000, 5, 99_000), (200, 1000, 260, 1000)]:
        fp_hi, fn_hi = confidence_tradeoff_point(fp, n_neg, fn, n_pos, zeta=0.05)
        assert fp_hi > fp / n_neg and fn_hi > fn / n_pos
        mu = gdp_mu_lower_bound(fp, n_neg, fn, n_pos, zeta=0.05)
        assert mu > 0
        assert gdp_tradeoff(fp_hi, mu) == pytest.approx(fn_hi, rel=1e-9)


def test_curve_arguments_are_checked():
    with pytest.raises(ValueError, match="alpha"):
        gdp_tradeoff([0.2, 1.5], 1.0)
    with pytest.raises(ValueError, match="mu"):
        gdp_tradeoff(0.2, -1.0)
    with pytest.raises(ValueError, match="delta"):
        dp_tradeoff(0.2, 1.0, 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        dp_tradeoff(0.2, math.inf, 0.0)
    with pytest.raises(ValueError, match="epsilon"):
        gaussian_mechanism_mu(0.0, 1e-5)


def test_confidence_point_is_two_clopper_pearson_upper_ends_and_checks_counts():
    from scipy.stats import beta

    fp_hi, fn_hi = confidence_tradeoff_point(3, 100, 0, 50, zeta=0.1)
    assert fp_hi == pytest.approx(beta.ppf(0.95, 4, 97), rel=1e-10)
    assert fn_hi == pytest.approx(1 - 0.05 ** (1 / 50), rel=1e-10)  # zero errors: (1 − p)^n = ζ/2
    assert confidence_tradeoff_point(10, 10, 0, 10)[0] == 1.0
    with pytest.raises(ValueError, match="fp = 11 exceeds n_neg = 10"):
        confidence_tradeoff_point(11, 10, 0, 10)
    with pytest.raises(ValueError, match="n_pos must be > 0"):
        confidence_tradeoff_point(0, 10, 0, 0)
    with pytest.raises(ValueError, match="zeta"):
        confidence_tradeoff_point(0, 10, 0, 10, zeta=0.0)
