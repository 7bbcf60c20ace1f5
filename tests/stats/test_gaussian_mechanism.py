"""The Gaussian hockey-stick divergence and the exact (analytic) Gaussian mechanism
(stats/gaussian_mechanism.py; docs/calibrations.md §1–2; Balle & Wang 2018, Thm 8 and Alg. 1; Dong, Roth &
Su 2022): δ_G(ε; μ) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) against direct evaluation and numerical
integration, its known values and limits, the calibrated σ/Δ against the table of docs/calibrations.md §2 and
against an independent implementation of Balle & Wang's Algorithm 1, and the classic
σ = Δ·sqrt(2 ln(1.25/δ))/ε that is not valid for ε ≥ 1 (docs/calibrations.md §2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.integrate import quad
from scipy.optimize import brentq
from scipy.special import log_ndtr, ndtr
from scipy.stats import norm

from unlearn_audit.stats.gaussian_mechanism import (
    classic_gaussian_sigma,
    gaussian_sigma,
    gaussian_sigma_ratio,
    hockey_stick_delta,
    hockey_stick_delta_scalar,
)


# ---------------------------------------------------------------------------------------------
# δ_G(ε; μ)
# ---------------------------------------------------------------------------------------------
def test_known_values_of_formulas_section_0_and_6():
    assert hockey_stick_delta(1.0, 4.0) == pytest.approx(0.9267112812554804, abs=1e-15)
    assert hockey_stick_delta(1e5, 450) == pytest.approx(0.9972445675475674, abs=1e-14)


def test_hockey_stick_is_the_integral_of_the_positive_part():
    """E_{e^ε}(N(μ, 1) ‖ N(0, 1)) = ∫ (p(x) − e^ε q(x))₊ dx, by quadrature from the likelihood-ratio
    threshold x* = ε/μ + μ/2 on, and Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ) evaluated directly."""
    for eps in (0.0, 0.2, 1.0, 3.0):
        for mu in (0.1, 0.8, 2.0, 5.0):
            x_star = eps / mu + mu / 2
            integral, _ = quad(lambda x: norm.pdf(x, mu, 1) - math.exp(eps) * norm.pdf(x), x_star, np.inf, epsabs=1e-14)
            direct = norm.cdf(mu / 2 - eps / mu) - math.exp(eps) * norm.cdf(-mu / 2 - eps / mu)
            got = hockey_stick_delta(eps, mu)
            assert got == pytest.approx(direct, rel=1e-10, abs=1e-15), (eps, mu)
            assert got == pytest.approx(integral, rel=1e-7, abs=1e-12), (eps, mu)


def test_limits_and_monotonicity():
    mus = np.array([0.01, 0.5, 1.0, 3.0, 10.0])
    np.testing.assert_allclose(hockey_stick_delta(0.0, mus), 2 * ndtr(mus / 2) - 1, rtol=1e-12)  # the TV distance
    assert hockey_stick_delta(2.0, 0.0) == 0.0 and hockey_stick_delta(0.0, 0.0) == 0.0
    assert hockey_stick_delta(5.0, math.inf) == 1.0
    eps = np.linspace(0.0, 30.0, 301)
    d = hockey_stick_delta(eps, 3.0)
    assert np.all(np.diff(d) <= 0) and d[-1] < 1e-12  # decreasing in ε
    d_mu = hockey_stick_delta(1.0, np.linspace(0.0, 20.0, 201))
    assert np.all(np.diff(d_mu) >= 0) and d_mu[-1] > 0.999  # increasing in μ
    assert np.all((d >= 0) & (d <= 1))


def test_far_tails_stay_exact_in_log_space():
    """δ_G(ε; μ) for large ε: the e^ε Φ(·) term is exp(ε + log Φ(·)) (log_ndtr), never inf · 0."""
    for eps, mu in ((700.0, 40.0), (5000.0, 100.0), (1e5, 447.0)):
        a = log_ndtr(mu / 2 - eps / mu)
        b = eps + log_ndtr(-mu / 2 - eps / mu)
        want = math.exp(a) * -math.expm1(b - a)
        assert hockey_stick_delta(eps, mu) == pytest.approx(want, rel=1e-12)
        assert 0 < hockey_stick_delta(eps, mu) < 1


def test_vectorised_over_epsilon_and_mu():
    eps = np.array([[0.0], [1.0], [4.0]])
    mu = np.array([0.5, 1.0, 2.0, 8.0])
    out = hockey_stick_delta(eps, mu)
    assert out.shape == (3, 4)
    for i in range(3):
        for j in range(4):
            assert out[i, j] == hockey_stick_delta(float(eps[i, 0]), float(mu[j]))
    assert isinstance(hockey_stick_delta(1.0, 2.0), float)


def test_scalar_hockey_stick_equals_the_vectorised_one():
    for eps in (0.0, 0.3, 1.0, 10.0, 200.0, 1e4, 1e5, math.inf):
        for mu in (0.0, 1e-3, 0.5, 4.0, 40.0, 450.0, 1e4, math.inf):
            if math.isinf(eps):
                assert hockey_stick_delta_scalar(eps, mu) == (1.0 if math.isinf(mu) else 0.0)
                continue
            assert hockey_stick_delta_scalar(eps, mu) == hockey_stick_delta(eps, mu), (eps, mu)


@pytest.mark.parametrize("eps,mu,message", [(-0.1, 1.0, "epsilon must be finite and >= 0"), (math.inf, 1.0, "epsilon must be finite"),
                                            (math.nan, 1.0, "epsilon must be finite"), (1.0, -1.0, "mu must be >= 0"),
                                            (1.0, math.nan, "mu must be >= 0"), ([1.0, -1.0], 1.0, "epsilon")])
def test_hockey_stick_bad_input(eps, mu, message):
    with pytest.raises(ValueError, match=message):
        hockey_stick_delta(eps, mu)


# ---------------------------------------------------------------------------------------------
# the exact Gaussian mechanism
# ---------------------------------------------------------------------------------------------
def balle_wang_ratio(eps: float, delta: float) -> float:
    """σ/Δ by Balle & Wang (2018) Algorithm 1 (docs/calibrations.md §2), written independently of the library."""

    def e_phi(x):  # e^ε Φ(x), in log space
        return math.exp(eps + float(log_ndtr(x)))

    def b_plus(v):
        return float(ndtr(math.sqrt(eps * v))) - e_phi(-math.sqrt(eps * (v + 2)))

    def b_minus(u):
        return float(ndtr(-math.sqrt(eps * u))) - e_phi(-math.sqrt(eps * (u + 2)))

    delta0 = b_plus(0.0)
    if delta >= delta0:  # B⁺ increases in v: v* = sup{v : B⁺(v) ≤ δ}
        hi = 1.0
        while b_plus(hi) <= delta:
            hi *= 2.0
        v = brentq(lambda x: b_plus(x) - delta, 0.0, hi, xtol=1e-15, rtol=1e-15)
        alpha = math.sqrt(1 + v / 2) - math.sqrt(v / 2)
    else:  # B⁻ decreases in u: u* = inf{u : B⁻(u) ≤ δ}
        hi = 1.0
        while b_minus(hi) > delta:
            hi *= 2.0
        u = brentq(lambda x: b_minus(x) - delta, 0.0, hi, xtol=1e-15, rtol=1e-15)
        alpha = math.sqrt(1 + u / 2) + math.sqrt(u / 2)
    return alpha / math.sqrt(2 * eps)


@pytest.mark.parametrize("eps, delta, ratio", [(0.1, 0.01, 9.5418230888), (1, 1e-5, 3.7306316348), (5, 0.01, 0.5693793788), (800, 0.01, 0.0264792285), (1000, 1e-3, 0.0239467735)])
def test_analytic_gaussian_sigma(eps, delta, ratio):
    sens = 0.37
    sigma = gaussian_sigma(eps, delta, sens)
    assert sigma / sens == pytest.approx(ratio, abs=5.1e-11)  # the table has 10 decimals
    assert hockey_stick_delta(eps, sens / sigma) == pytest.approx(delta, rel=1e-9)


@pytest.mark.parametrize("eps,delta", [(0.1, 0.01), (1.0, 1e-5), (5.0, 0.01), (0.5, 0.3), (2.0, 0.4), (20.0, 1e-8)])
def test_sigma_ratio_agrees_with_balle_wang_algorithm_1(eps, delta):
    """Both branches of Algorithm 1 (δ ≥ δ0 = B⁺(0) at (0.5, 0.3) and (2, 0.4), δ < δ0 otherwise)."""
    assert gaussian_sigma_ratio(eps, delta) == pytest.approx(balle_wang_ratio(eps, delta), rel=1e-8)


def test_sigma_is_linear_in_the_sensitivity_and_decreases_in_epsilon_and_delta():
    t = gaussian_sigma_ratio(1.0, 1e-5)
    for sens in (1e-6, 0.37, 1.0, 250.0):
        assert gaussian_sigma(1.0, 1e-5, sens) == pytest.approx(t * sens, rel=1e-15)
    by_eps = [gaussian_sigma_ratio(e, 1e-5) for e in (0.1, 0.5, 1.0, 4.0, 50.0)]
    by_delta = [gaussian_sigma_ratio(1.0, d) for d in (1e-12, 1e-6, 1e-3, 0.1, 0.5)]
    assert all(a > b for a, b in zip(by_eps, by_eps[1:])) and all(a > b for a, b in zip(by_delta, by_delta[1:]))


def test_sigma_bad_input():
    for delta in (0.0, 1.0, -0.1, 1.5):
        with pytest.raises(ValueError, match="delta must lie in \\(0, 1\\) for the Gaussian mechanism"):
            gaussian_sigma_ratio(1.0, delta)
    with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
        gaussian_sigma_ratio(-1.0, 1e-5)
    for sens in (0.0, -1.0, math.inf, math.nan):
        with pytest.raises(ValueError, match="sensitivity must be a finite number > 0"):
            gaussian_sigma(1.0, 1e-5, sens)


def test_classic_gaussian_sigma_is_the_dwork_roth_formula_and_not_valid_for_large_epsilon():
    assert classic_gaussian_sigma(0.5, 1e-5, 2.0) == pytest.approx(2.0 * math.sqrt(2 * math.log(1.25e5)) / 0.5, rel=1e-15)
    # valid for ε < 1: its δ_G is at most δ (it is conservative there)
    for eps, delta in ((0.1, 1e-5), (0.5, 1e-3), (0.9, 0.01)):
        assert hockey_stick_delta(eps, 1.0 / classic_gaussian_sigma(eps, delta, 1.0)) <= delta
    # ε = 800, δ = 0.01: σ/Δ = 0.0039 instead of the required 0.0265 (docs/calibrations.md §2), far from (ε, δ)-DP
    classic = classic_gaussian_sigma(800, 0.01, 1.0)
    assert round(classic, 4) == 0.0039 and classic < gaussian_sigma_ratio(800, 0.01) / 6
    assert hockey_stick_delta(800, 1.0 / classic) > 0.5
    with pytest.raises(ValueError, match="epsilon must be > 0"):
        classic_gaussian_sigma(0.0, 1e-5, 1.0)
    with pytest.raises(ValueError, match="epsilon must be a finite number >= 0"):
        classic_gaussian_sigma(-1.0, 1e-5, 1.0)
