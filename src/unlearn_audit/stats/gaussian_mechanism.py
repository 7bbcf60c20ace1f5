"""The Gaussian hockey-stick divergence and the exact (analytic) Gaussian mechanism.

``hockey_stick_delta(eps, mu)`` is the tight δ(ε) of the Gaussian pair N(0,1) vs N(μ,1):

    δ_G(ε; μ) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)

(Balle & Wang 2018, Thm 8; Dong, Roth & Su 2022, μ-GDP ⇒ (ε, δ(ε))).  It is the
left-hand side of the analytic Gaussian mechanism condition used by the paper's
Section 8 / App. H–I and App. G.2, and of Koloskova et al.'s θ_ε(r).  Everything is
evaluated in log space (``log_ndtr``) so that ε up to 1e5 is exact.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import log_ndtr

from ..checks import check_epsilon as _check_epsilon

__all__ = ["log_delta_terms", "hockey_stick_delta", "hockey_stick_delta_scalar", "gaussian_sigma", "gaussian_sigma_ratio", "classic_gaussian_sigma"]


def log_delta_terms(epsilon, mu):
    """(a, b) with δ_G(ε; μ) = e^a − e^b: a = log Φ(μ/2 − ε/μ), b = ε + log Φ(−μ/2 − ε/μ) (Dong, Roth &
    Su 2022, Cor. 2.13), for μ > 0, in log space (``log_ndtr``) so that tiny δ keep their precision.
    The one copy of the formula: :func:`hockey_stick_delta`, :func:`hockey_stick_delta_scalar` and
    :func:`~unlearn_audit.stats.gdp_overlaps.log_gdp_delta` combine it.  Floats or arrays."""
    return log_ndtr(mu / 2 - epsilon / mu), epsilon + log_ndtr(-mu / 2 - epsilon / mu)


def hockey_stick_delta(epsilon, mu):
    """δ_G(ε; μ), the hockey-stick divergence E_{e^ε}(N(0,1) ‖ N(μ,1)).

    Vectorised over ``epsilon`` and ``mu`` (broadcast).  Exact for large ε via
    ``log_ndtr``; returns 0 for μ = 0 and values clamped to [0, 1].
    """
    eps = np.asarray(epsilon, dtype=float)
    mu = np.asarray(mu, dtype=float)
    if np.any(eps < 0) or np.any(~np.isfinite(eps)):
        raise ValueError("epsilon must be finite and >= 0")
    if np.any(mu < 0) or np.any(np.isnan(mu)):
        raise ValueError("mu must be >= 0")
    eps, mu = np.broadcast_arrays(eps, mu)
    out = np.zeros(eps.shape, dtype=float)
    pos = mu > 0
    inf = pos & np.isinf(mu)
    out[inf] = 1.0
    fin = pos & ~np.isinf(mu)
    a, b = log_delta_terms(eps[fin], mu[fin])
    diff = b - a
    with np.errstate(divide="ignore"):  # diff = 0 gives log1p(-1) = -inf, masked to 0 below
        val = np.where(diff < 0, np.exp(a + np.log1p(-np.exp(np.minimum(diff, 0.0)))), 0.0)
    out[fin] = val
    out = np.clip(out, 0.0, 1.0)
    return out if out.ndim else float(out)


def hockey_stick_delta_scalar(epsilon: float, mu: float) -> float:
    """:func:`hockey_stick_delta` for one pair of plain, already checked floats (ε ≥ 0, μ ≥ 0), the
    same log-space formula without numpy's per-call cost (about 45× faster), for loops such as
    the model-clipping accountant's."""
    if mu == 0.0:
        return 0.0
    if math.isinf(mu):
        return 1.0
    if math.isinf(epsilon):
        return 0.0
    a, b = (float(t) for t in log_delta_terms(epsilon, mu))
    if not b < a:
        return 0.0
    return min(1.0, max(0.0, math.exp(a + math.log1p(-math.exp(b - a)))))


def gaussian_sigma_ratio(epsilon: float, delta: float) -> float:
    """σ/Δ of the exact Gaussian mechanism: the root t of δ_G(ε; 1/t) = δ.

    The calibrated σ for sensitivity Δ is ``t * Δ`` (σ scales linearly with Δ).
    Balle & Wang (2018), Thm 8; docs/calibrations.md §2.
    """
    epsilon = _check_epsilon(epsilon)
    delta = float(delta)
    if not (0.0 < delta < 1.0):
        raise ValueError(f"delta must lie in (0, 1) for the Gaussian mechanism, got {delta!r}")

    def f(t: float) -> float:
        return hockey_stick_delta(epsilon, 1.0 / t) - delta

    hi = 1.0
    while f(hi) > 0:
        hi *= 2.0
    lo = min(hi / 2.0, 1e-6)
    while f(lo) < 0:
        lo /= 2.0
        if lo < 1e-300:  # pragma: no cover - only for absurd (ε, δ)
            raise ValueError(f"could not bracket sigma for epsilon={epsilon}, delta={delta}")
    return float(brentq(f, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500))


def gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Smallest σ such that adding N(0, σ²I) to an ℓ2-sensitivity-Δ query is (ε, δ)-DP.

    Solves Φ(Δ/(2σ) − εσ/Δ) − e^ε Φ(−Δ/(2σ) − εσ/Δ) = δ exactly (App. G.2, H.4, I.1).
    """
    sensitivity = float(sensitivity)
    if not math.isfinite(sensitivity) or sensitivity <= 0:
        raise ValueError(f"sensitivity must be a finite number > 0, got {sensitivity!r}")
    return gaussian_sigma_ratio(epsilon, delta) * sensitivity


def classic_gaussian_sigma(epsilon: float, delta: float, sensitivity: float) -> float:
    """Classic σ = Δ·sqrt(2 ln(1.25/δ))/ε (Dwork & Roth, Thm A.1); valid only for ε < 1.

    Provided for comparison only; every calibration in this project uses :func:`gaussian_sigma`.
    """
    epsilon = _check_epsilon(epsilon)
    if epsilon == 0:
        raise ValueError("epsilon must be > 0")
    return float(sensitivity) * math.sqrt(2.0 * math.log(1.25 / float(delta))) / epsilon
