"""Accountants of the certified algorithms (stats/accountants.py): model clipping's noisy-step
accountant (Koloskova et al. 2025, Thm 4.2; docs/calibrations.md §4, Table 6) and
rewind-to-delete's h(K) and sensitivity (Mu & Klabjan 2025, Thm 3.1; docs/calibrations.md §6), with
the worked numbers of docs/calibrations.md §5 and §8.  The hockey-stick function θ_ε(r) = δ_G(ε; r) and the σ of the exact Gaussian
mechanism are tested in test_gaussian_mechanism.py."""

from __future__ import annotations

import math

import numpy as np
import pytest

from unlearn_audit.stats.accountants import (
    epsilon_tilde,
    model_clipping_deltas,
    model_clipping_noisy_steps,
    r2d_h,
    r2d_sensitivity,
    theta,
)
from unlearn_audit.stats.gaussian_mechanism import gaussian_sigma, hockey_stick_delta


def test_theta_vectors():
    assert theta(1, 4) == pytest.approx(0.9267112812554804, abs=1e-12)
    assert theta(1e5, 450) == pytest.approx(0.9972445675475674, abs=1e-12)
    assert theta(1e5, 450, compat_table6_truncation=True) == pytest.approx(0.9972633982, abs=1e-10)
    assert theta(1, 4, compat_table6_truncation=True) == theta(1, 4)  # truncation only for ε > 700
    assert theta(3.0, 0.0) == 0.0 and theta(0.0, math.inf) == 1.0
    assert theta(0.0, 2.0) == pytest.approx(2 * 0.8413447460685429 - 1, abs=1e-12)  # TV distance 2Φ(r/2) − 1


def test_theta_is_the_hockey_stick_function():
    for eps in (0.0, 0.3, 1.0, 10.0, 200.0, 1e4, 1e5):
        for r in (1e-3, 0.5, 4.0, 40.0, 450.0, 1e4):
            assert theta(eps, r) == pytest.approx(hockey_stick_delta(eps, r), rel=1e-12, abs=1e-300)


def test_epsilon_tilde():
    assert epsilon_tilde(1.0, 1.0) == pytest.approx(1.0, abs=1e-15)  # not the log(1 + e^ε/δ) = 1.3133 form
    assert epsilon_tilde(2.0, 0.5) == pytest.approx(math.log(1 + (math.e**2 - 1) / 0.5), rel=1e-14)
    assert epsilon_tilde(0.0, 0.1) == 0.0
    assert epsilon_tilde(1e5, 1e-5) == pytest.approx(1e5 + math.log(1e5), rel=1e-14)  # e^ε overflows naively
    for bad in ((1.0, 0.0), (1.0, 1.5), (-1.0, 0.5)):
        with pytest.raises(ValueError):
            epsilon_tilde(*bad)


def test_row1_trajectory():
    d = model_clipping_deltas(1, 0.2, 0.1, 40)
    assert len(d) == 41 and d[0] == 1.0
    assert d[1] == pytest.approx(0.926711, rel=1e-5) and d[2] == pytest.approx(0.857279, rel=1e-5)
    assert d[10] == pytest.approx(0.4238, rel=1e-3) and d[30] == pytest.approx(0.01268, rel=1e-3)
    assert d[39] == pytest.approx(1.4952e-5, rel=1e-3) and d[40] == pytest.approx(1.9301e-6, rel=1e-3)
    assert np.all(np.diff(d) < 0)
    assert model_clipping_noisy_steps(1, 1e-5, 0.2, 0.1) == 40
    assert model_clipping_noisy_steps(1, 1e-5, 0.2, 0.1, max_steps=40) == 40
    assert model_clipping_noisy_steps(1, 1e-5, 0.2, 0.1, max_steps=39) is None


def test_table6_rows():
    assert model_clipping_noisy_steps(1e5, 1e-5, 0.225, 1e-3) == 4013
    assert model_clipping_noisy_steps(1e5, 1e-5, 0.225, 1e-3, compat_table6_truncation=True) == 4041
    assert model_clipping_noisy_steps(10, 1e-5, 0.1, 0.02) == 48004
    # the 50-epoch budget (15,850 steps) is not enough: δ is still 0.355 ("N/A" in Table 6)
    assert model_clipping_noisy_steps(10, 1e-5, 0.1, 0.02, max_steps=15850) is None
    assert model_clipping_deltas(10, 0.1, 0.02, 15850)[-1] == pytest.approx(0.355, abs=1e-3)


def test_uncertified_variant_never_reaches_the_target():
    d = model_clipping_deltas(1, 5, 1e-4, 3170)
    assert d[-1] == pytest.approx(1.0, abs=5e-7)
    assert model_clipping_noisy_steps(1, 1e-5, 5, 1e-4, max_steps=3170) is None
    assert model_clipping_noisy_steps(1, 1e-5, 5, 1e-4) is None  # stops: θ rounds to 1


def test_initial_noise():
    d0 = theta(1, 2 * 1.0 / 1.0)  # δ_0 = θ_ε(2·C0/σ0)
    d = model_clipping_deltas(1, 0.2, 0.1, 60, delta0=d0)
    want = int(np.argmax(d[1:] <= 1e-5)) + 1
    got = model_clipping_noisy_steps(1, 1e-5, 0.2, 0.1, C0=1.0, sigma0=1.0)
    assert got == want and got < 40
    with pytest.raises(ValueError, match="C0"):
        model_clipping_noisy_steps(1, 1e-5, 0.2, 0.1, sigma0=1.0)


@pytest.mark.parametrize(
    "kwargs",
    [dict(epsilon=-1), dict(delta_target=0.0), dict(delta_target=1.0), dict(C2=0.0), dict(sigma=-0.1), dict(max_steps=-1), dict(sigma0=-1.0)],
)
def test_accountant_argument_checks(kwargs):
    args = dict(epsilon=1.0, delta_target=1e-5, C2=0.2, sigma=0.1) | kwargs
    with pytest.raises(ValueError):
        model_clipping_noisy_steps(args.pop("epsilon"), args.pop("delta_target"), args.pop("C2"), args.pop("sigma"), **args)


def test_r2d_examples():
    ex = dict(K=5, eta=0.01, n=42750, m_f=2250, T=40)
    assert r2d_h(L=1, **ex) == pytest.approx(0.4667868, rel=1e-6)
    d1 = r2d_sensitivity(L=1, G=1, **ex)
    assert d1 == pytest.approx(0.0491355, rel=1e-6)
    assert gaussian_sigma(1, 1e-3, d1) == pytest.approx(0.1265069, rel=1e-6)
    assert r2d_h(L=5, **ex) == pytest.approx(6.445745, rel=1e-6)
    d5 = r2d_sensitivity(L=5, G=1, **ex)
    assert d5 == pytest.approx(0.135700, rel=1e-5)
    assert gaussian_sigma(1, 1e-3, d5) == pytest.approx(0.349381, rel=1e-5)
    assert gaussian_sigma(10, 1e-3, d5) == pytest.approx(0.055102, rel=1e-5)
    assert r2d_sensitivity(L=1, G=3, **ex) == pytest.approx(3 * d1, rel=1e-12)  # Δ linear in G
    assert r2d_h(5, 0.01, 1.0, 100, 0, 5) == 0.0 and r2d_sensitivity(5, 0.01, 1.0, 1.0, 100, 0, 40) == 0.0


@pytest.mark.parametrize("args", [(6, 0.01, 1, 100, 3, 5), (1, 0.01, 0, 100, 3, 5), (1, 0.01, 1, 100, 100, 5), (1, -0.1, 1, 100, 3, 5), (1.5, 0.01, 1, 100, 3, 5)])
def test_r2d_argument_checks(args):
    with pytest.raises(ValueError):
        r2d_h(*args)


def test_r2d_h_and_sensitivity_are_the_formulas_of_theorem_3_1():
    """h(K) = [(1 + ηLn/(n − m_f))^{T−K} − 1]·(1 + ηL)^K and Δ = 2·m_f·G·h(K)/(L·n), directly."""
    for K, eta, L, n, m_f, T, G in ((5, 0.01, 1.0, 42750, 2250, 40, 1.0), (0, 0.05, 2.0, 1000, 10, 20, 0.5), (10, 0.001, 3.0, 500, 499, 10, 2.0)):
        h = ((1 + eta * L * n / (n - m_f)) ** (T - K) - 1) * (1 + eta * L) ** K
        assert r2d_h(K, eta, L, n, m_f, T) == pytest.approx(h, rel=1e-12)
        assert r2d_sensitivity(K, eta, L, G, n, m_f, T) == pytest.approx(2 * m_f * G * h / (L * n), rel=1e-12)
    assert r2d_h(5, 1.0, 1.0, 100, 50, 5000) == math.inf  # overflow is inf, not an error


def test_model_clipping_recursion_step_by_step():
    """δ_{t+1} = δ_t · θ_{ε̃_t}(2·C2/σ) with ε̃_t = log(1 + (e^ε − 1)/δ_t), θ evaluated directly."""
    from scipy.stats import norm

    eps, c2, sigma = 0.5, 0.3, 0.2
    r = 2 * c2 / sigma
    d = [1.0]
    for _ in range(12):
        et = math.log(1 + (math.exp(eps) - 1) / d[-1])
        d.append(d[-1] * (norm.cdf(r / 2 - et / r) - math.exp(et) * norm.cdf(-r / 2 - et / r)))
    np.testing.assert_allclose(model_clipping_deltas(eps, c2, sigma, 12), d, rtol=1e-10)
    np.testing.assert_allclose(model_clipping_deltas(eps, c2, sigma, 3, delta0=0.5)[0], 0.5)
    target = d[7] * 1.0000001  # reached first at t = 7
    assert model_clipping_noisy_steps(eps, target, c2, sigma) == 7
