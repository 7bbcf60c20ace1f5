"""Noise accountants of the certified unlearning algorithms (App. G.1, G.2; docs/calibrations.md §3–8).

* Model clipping (Koloskova et al. 2025, Thm 4.2; docs/calibrations.md §4–5): the number of noisy
  projected steps T after which the iterate is (ε, δ)-indistinguishable,

      δ_0 = θ_ε(2·C0/σ0) if σ0 > 0 else 1,
      ε̃_t = log(1 + (e^ε − 1)/δ_t),   δ_{t+1} = δ_t · θ_{ε̃_t}(2·C2/σ),
      T   = min{t ≥ 1 : δ_t ≤ δ_target},

  where θ_ε(r) = Q(ε/r − r/2) − e^ε Q(ε/r + r/2) is exactly the Gaussian hockey-stick function
  δ_G(ε; r) of docs/calibrations.md §1 (:func:`~unlearn_audit.stats.gaussian_mechanism.hockey_stick_delta`).
* Rewind-to-delete (Mu & Klabjan 2025, Thm 3.1; docs/calibrations.md §6): h(K) (R1) and the sensitivity
  Δ = 2·m_f·G·h(K)/(L·n) (R2); σ then comes from the exact Gaussian mechanism (docs/calibrations.md §2,
  :func:`~unlearn_audit.stats.gaussian_mechanism.gaussian_sigma`).

The recursion of δ_t is sequential, so it runs in plain Python floats (a few µs per step:
T ≈ 50,000 takes well under a second).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr

from ..checks import check_count, check_delta, check_epsilon, check_int, check_nonneg, check_positive, check_probability
from .gaussian_mechanism import hockey_stick_delta_scalar

__all__ = [
    "theta",
    "epsilon_tilde",
    "model_clipping_deltas",
    "model_clipping_noisy_steps",
    "r2d_h",
    "r2d_sensitivity",
]

_COMPAT_EPS = 700.0  # above this ε̃ the authors' θ drops the e^ε̃·Q(·) term when Q(·) < 1e-100 (docs/calibrations.md §5 (a))
_COMPAT_TINY = 1e-100


def _theta(eps: float, r: float, compat: bool) -> float:
    """θ_ε(r) = δ_G(ε; r) for checked floats (docs/calibrations.md §1), or the authors' truncation (``compat``)."""
    if compat and 0.0 < r < math.inf and eps > _COMPAT_EPS and float(ndtr(-(eps / r + r / 2.0))) < _COMPAT_TINY:
        return float(ndtr(r / 2.0 - eps / r))  # the audit repository's truncation: the e^ε̃·Q(v) term is dropped
    return hockey_stick_delta_scalar(eps, r)


def _eps_tilde(eps: float, delta: float) -> float:
    """ε̃ = logaddexp(0, ε + log(1 − e^{−ε}) − log δ) for checked floats (docs/calibrations.md §4)."""
    if delta <= 0.0:
        return math.inf
    if eps == 0.0:
        return 0.0
    x = eps + math.log(-math.expm1(-eps)) - math.log(delta)
    return x + math.log1p(math.exp(-x)) if x > 0 else math.log1p(math.exp(x))


def theta(epsilon: float, r: float, *, compat_table6_truncation: bool = False) -> float:
    """Koloskova's θ_ε(r) = Q(ε/r − r/2) − e^ε Q(ε/r + r/2) = δ_G(ε; r) (docs/calibrations.md §1, §4).

    ``compat_table6_truncation=True`` reproduces the audit repository's truncation
    (docs/calibrations.md §5 (a)): for ε > 700, if Q(ε/r + r/2) < 1e-100 in float64, it returns
    Q(ε/r − r/2) alone (conservative: θ too large).  θ_1(4) = 0.9267112812554804.
    """
    eps = check_epsilon(epsilon)
    rr = float(r) if not isinstance(r, bool) else math.nan
    if not rr >= 0:
        raise ValueError(f"r must be a number >= 0, got {r!r}")
    return _theta(eps, rr, bool(compat_table6_truncation))


def epsilon_tilde(epsilon: float, delta: float) -> float:
    """ε̃ = log(1 + (e^ε − 1)/δ) in the stable form of docs/calibrations.md §4 (exact for ε up to 1e5).

    ``delta`` ∈ (0, 1].  Never the anti-conservative log(1 + e^ε/δ) of docs/calibrations.md §5 (b).
    """
    eps = check_epsilon(epsilon)
    d = check_probability(delta, "delta")
    return _eps_tilde(eps, d)


def _check_clipping(epsilon, C2, sigma):
    eps = check_epsilon(epsilon)
    c2 = check_positive(C2, "C2")
    s = check_positive(sigma, "sigma")
    return eps, 2.0 * c2 / s


def model_clipping_deltas(
    epsilon: float, C2: float, sigma: float, steps: int, *, delta0: float = 1.0, compat_table6_truncation: bool = False
) -> np.ndarray:
    """δ_0, δ_1, …, δ_steps of the model-clipping accountant (docs/calibrations.md §4; Koloskova Thm 4.2).

    δ_{t+1} = δ_t · θ_{ε̃_t}(2·C2/σ) with ε̃_t = log(1 + (e^ε − 1)/δ_t); ``delta0`` = δ_0 (1 when
    no initial noise, σ0 = 0).  (ε=1, C2=0.2, σ=0.1): δ_39 = 1.4952e-5, δ_40 = 1.9301e-6.
    """
    eps, r = _check_clipping(epsilon, C2, sigma)
    n = check_count(steps, "steps")
    d = check_probability(delta0, "delta0")
    compat = bool(compat_table6_truncation)
    out = np.empty(n + 1)
    out[0] = d
    for t in range(1, n + 1):
        if d > 0.0:
            d = d * _theta(_eps_tilde(eps, d), r, compat)
        out[t] = d
    return out


def model_clipping_noisy_steps(
    epsilon: float,
    delta_target: float,
    C2: float,
    sigma: float,
    *,
    C0: float | None = None,
    sigma0: float = 0.0,
    max_steps: int | None = None,
    compat_table6_truncation: bool = False,
) -> int | None:
    """T = min{t ≥ 1 : δ_t ≤ δ_target} of the model-clipping accountant (docs/calibrations.md §4; Koloskova Thm 4.2).

    δ_0 = θ_ε(2·C0/σ0) when ``sigma0`` > 0 (``C0`` then required), else 1 (the audit: σ0 = 0, C0
    plays no role).  Returns ``None`` when δ_target is not reached within ``max_steps`` steps, or
    (``max_steps=None``) when δ_t stops decreasing in float64 (θ rounds to 1, e.g. the uncertified
    C2 = 5, σ = 1e-4 of G.1.3).  Table 6 (docs/calibrations.md §5): (1, 0.2, 0.1) → 40; (1e5, 0.225, 1e-3)
    → 4013 (4041 with ``compat_table6_truncation``); (10, 0.1, 0.02) → 48004.
    """
    eps, r = _check_clipping(epsilon, C2, sigma)
    target = check_delta(delta_target, "delta_target", positive=True)
    s0 = check_nonneg(sigma0, "sigma0")
    limit = None if max_steps is None else check_count(max_steps, "max_steps")
    compat = bool(compat_table6_truncation)
    if s0 > 0:
        if C0 is None:
            raise ValueError("C0 is required when sigma0 > 0 (delta_0 = theta_eps(2*C0/sigma0))")
        d = _theta(eps, 2.0 * check_positive(C0, "C0") / s0, compat)
    else:
        if C0 is not None:
            check_positive(C0, "C0")
        d = 1.0
    t = 0
    while limit is None or t < limit:
        t += 1
        new = d * _theta(_eps_tilde(eps, d), r, compat) if d > 0.0 else 0.0
        if new <= target:
            return t
        if new >= d:  # θ rounds to 1: δ_t can never decrease again
            return None
        d = new
    return None


def r2d_h(K: int, eta: float, L: float, n: int, m_f: int, T: int) -> float:
    """h(K) = [(1 + η·L·n/(n − m_f))^{T−K} − 1] · (1 + η·L)^K (docs/calibrations.md §6 (R1); Mu & Klabjan Thm 3.1).

    ``T`` GD steps in all, of which the last ``K`` are rewound; n = |D| (retain + forget) and
    m_f = |D_f| < n.  (η=0.01, T=40, K=5, n=42750, m_f=2250, L=1): h = 0.4667868.  ``inf`` on overflow.
    """
    k = check_count(K, "K")
    t = check_int(T, "T", k)
    e = check_positive(eta, "eta")
    lip = check_positive(L, "L")
    nn = check_int(n, "n", 1)
    m = check_count(m_f, "m_f")
    if m >= nn:
        raise ValueError(f"m_f must be smaller than n, got m_f={m_f!r}, n={n!r}")
    try:
        grow = math.expm1((t - k) * math.log1p(e * lip * nn / (nn - m)))
        return grow * math.exp(k * math.log1p(e * lip)) if grow else 0.0
    except OverflowError:
        return math.inf


def r2d_sensitivity(K: int, eta: float, L: float, G: float, n: int, m_f: int, T: int) -> float:
    """Δ = 2·m_f·G·h(K)/(L·n) (docs/calibrations.md §6 (R2)), the ℓ2 sensitivity of R2D's release (G.2).

    G bounds the gradient norm, L the smoothness (both estimated per run, docs/calibrations.md §7).
    (L=1, G=1, the example of :func:`r2d_h`): Δ = 0.0491355.
    """
    h = r2d_h(K, eta, L, n, m_f, T)
    g = check_nonneg(G, "G")
    if g == 0.0 or h == 0.0:
        return 0.0
    return 2.0 * int(m_f) * g * h / (float(L) * int(n))
