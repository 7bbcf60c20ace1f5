"""Trade-off curves: the hypothesis-testing view of a privacy claim and of an audit's μ bound.

For two distributions P (side 0: the retrained model) and Q (side 1: the unlearned model) the
trade-off function T(P, Q)(α) = inf{β_φ : α_φ ≤ α} is the smallest type II error of any test φ
of P against Q whose type I error is at most α.  A privacy claim is a lower curve f: the claim
holds iff T ≥ f at every α.  Dong, Roth & Su, "Gaussian differential privacy" (2019, arXiv:1905.02383;
JRSS-B 2022), §2:

* μ-GDP (their Def. 2.4): T ≥ G_μ, G_μ(α) = T(N(0, 1), N(μ, 1))(α) = Φ(Φ⁻¹(1 − α) − μ)
  (:func:`gdp_tradeoff`);
* (ε, δ)-DP is f_{ε,δ}-DP with f_{ε,δ}(α) = max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)) (their
  Prop. 2.5, the hypothesis-testing characterisation of Wasserman & Zhou 2010 and of Kairouz,
  Oh & Viswanath 2015) (:func:`dp_tradeoff`);
* μ-GDP ⇔ (ε, δ_μ(ε))-DP for every ε ≥ 0 (their Cor. 2.13): G_μ = sup_ε f_{ε, δ_μ(ε)}, with
  δ_μ(ε) the hockey-stick divergence of :mod:`.gaussian_mechanism`.

G_0(α) = 1 − α (:func:`perfect_privacy_tradeoff`) is perfect privacy: no test beats a coin.

An audit's μ_LB says, at confidence 1 − ζ, that the algorithm is *not* μ-GDP for any μ < μ_LB:
for every such μ its trade-off curve dips below G_μ somewhere.  For a Gaussian shift (the convex
releases, the Gaussian-unlearning pair), whose curve is itself a G_μ, that is: the curve lies on
or below G_{μ_LB}.  The weight-space audits also prove one point: their test's error rates,
bounded above by Clopper–Pearson at ζ/2 each (:func:`confidence_tradeoff_point`), give
T(FP_hi) ≤ FN_hi, the point that G_{μ_LB} passes through.

Numbers only (numpy, scipy.special): the figures of :mod:`unlearn_audit.report.tradeoff_figures`
plot what these functions return.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr, ndtri

from ..checks import check_delta, check_epsilon, check_error_counts, check_zeta
from .bounds import clopper_pearson_upper
from .gaussian_mechanism import gaussian_sigma_ratio

__all__ = ["gdp_tradeoff", "dp_tradeoff", "perfect_privacy_tradeoff", "gaussian_mechanism_mu", "confidence_tradeoff_point"]


def _alpha(alpha) -> np.ndarray:
    a = np.asarray(alpha, dtype=float)
    if np.any(np.isnan(a)) or np.any(a < 0) or np.any(a > 1):
        raise ValueError("alpha (a type I error) must lie in [0, 1]")
    return a


def _out(values: np.ndarray):
    return values if values.ndim else float(values)


def gdp_tradeoff(alpha, mu: float):
    """G_μ(α) = Φ(Φ⁻¹(1 − α) − μ): the trade-off curve of μ-GDP (Dong, Roth & Su 2019, Def. 2.4).

    The smallest type II error at type I error α of any test of N(0, 1) against N(μ, 1).
    Vectorised over ``alpha`` ∈ [0, 1]; μ ≥ 0 finite.  Computed as Φ(−Φ⁻¹(α) − μ), which keeps
    its precision for α far below machine ε (the curve of a large μ lives there).
    G_μ(0) = 1, G_μ(1) = 0, G_0(α) = 1 − α; G_μ is convex, decreasing, and symmetric
    (G_μ(G_μ(α)) = α).
    """
    a = _alpha(alpha)
    mu = check_epsilon(mu, "mu")  # a finite number >= 0, like epsilon
    return _out(np.asarray(ndtr(-ndtri(a) - mu), dtype=float))


def dp_tradeoff(alpha, epsilon: float, delta: float):
    """f_{ε,δ}(α) = max(0, 1 − δ − e^ε α, e^{−ε}(1 − δ − α)): the trade-off curve of (ε, δ)-DP.

    A mechanism is (ε, δ)-DP iff its trade-off curve lies on or above f_{ε,δ} (Dong, Roth & Su
    2019, Prop. 2.5; Wasserman & Zhou 2010).  Vectorised over ``alpha`` ∈ [0, 1]; ε ≥ 0 finite
    (e^ε α is evaluated as exp(ε + log α), so ε = 10⁴ gives 0 for every α > 0 instead of an
    overflow), δ ∈ [0, 1).  Piecewise linear, convex, symmetric, f_{ε,δ}(0) = 1 − δ and
    f_{ε,δ}(α) = 0 for α ≥ 1 − δ.
    """
    a = _alpha(alpha)
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    with np.errstate(divide="ignore", over="ignore"):
        steep = 1.0 - delta - np.exp(epsilon + np.log(a))  # log 0 = −inf: e^ε·0 = 0
    flat = math.exp(-epsilon) * (1.0 - delta - a)
    return _out(np.maximum(np.maximum(steep, flat), 0.0) + 0.0)  # + 0.0: no −0.0 where e^{−ε} underflows


def perfect_privacy_tradeoff(alpha):
    """1 − α = G_0(α) = f_{0,0}(α): no test of the two sides does better than a coin."""
    return _out(1.0 - _alpha(alpha))


def gaussian_mechanism_mu(epsilon: float, delta: float) -> float:
    """The μ of the exact (analytic) Gaussian mechanism calibrated at (ε, δ): μ = Δ/σ.

    σ/Δ is :func:`~.gaussian_mechanism.gaussian_sigma_ratio` (Balle & Wang 2018, Thm 8), so μ is
    the root of δ_μ(ε) = δ: the mechanism is μ-GDP, and f_{ε,δ} touches G_μ (a tangent of the
    convex curve G_μ with slope −e^ε).  ε > 0, δ ∈ (0, 1).
    """
    epsilon = check_epsilon(epsilon)
    if epsilon == 0:
        raise ValueError("epsilon must be > 0 for a calibrated Gaussian mechanism")
    return 1.0 / gaussian_sigma_ratio(epsilon, check_delta(delta, positive=True))


def confidence_tradeoff_point(fp, n_neg, fn, n_pos, *, zeta: float = 0.05) -> tuple[float, float]:
    """(FP_hi, FN_hi): upper ends of one-sided Clopper–Pearson intervals at ζ/2 each.

    With probability ≥ 1 − ζ the test that made the counts has type I error ≤ FP_hi and type II
    error ≤ FN_hi, so the trade-off curve of the two sides satisfies T(FP_hi) ≤ FN_hi: a point the
    audit proves the curve to pass on or below.  ``gdp_mu_lower_bound`` is the μ whose G_μ passes
    through it (μ_LB = Φ⁻¹(1 − FP_hi) − Φ⁻¹(FN_hi), clamped at 0).
    """
    fp, n_neg = check_error_counts(fp, n_neg, "fp", "n_neg")
    fn, n_pos = check_error_counts(fn, n_pos, "fn", "n_pos")
    zeta = check_zeta(zeta)
    return clopper_pearson_upper(fp, n_neg, zeta / 2), clopper_pearson_upper(fn, n_pos, zeta / 2)
