"""μ-GDP lower bounds from the overlaps of the sign-vector audit (docs/bounds.md §6; Lemma C.1).

A μ-GDP mechanism is (ε, δ_μ(ε))-DP for every ε ≥ 0 at once (Dong, Roth & Su 2022,
Cor. 2.13), δ_μ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2).  Lemma C.1 at each (ε, δ_μ(ε)) bounds
the same tail, so its minimum over ε does too:

    p(μ) = min_ε  [Lemma C.1 bound of Eq. 9 (mean) or Eq. 10 (median) at (ε, δ_μ(ε))],

non-decreasing in μ.  ``mu_ldp = sup{μ : p(μ) ≤ ζ}`` bounds the μ of the induced mechanism on
S_m (μ-GDP between every two sign vectors); ``mu_lb = mu_ldp / 2`` bounds a μ-GDP unlearning
claim (both unlearned models μ-GDP-close to the retrained one ⇒ 2μ-GDP apart, docs/bounds.md §6).
"""

from __future__ import annotations

import math
from typing import Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize_scalar

from ..checks import check_epsilon
from ..checks import check_zeta as _check_zeta
from .bounds import (
    STATISTICS,
    as_bound,
    _log_g,
    _log_g_threshold,
    _log_tail_bound,
    _prepare_overlaps,
    log_num_sign_vectors,
)
from .gaussian_mechanism import log_delta_terms
from .signs import check_m_r

__all__ = ["MuBound", "log_gdp_delta", "min_log_g_gdp", "mu_log_p_value", "mu_lower_bound", "mu_tail_bound"]

_NEG_INF = -math.inf
# Beyond ε = log M' + 40, g(ε; δ) ≥ e^ε/(e^ε + M') > 1 − e^{−40}: no useful ε lies there.
_EPS_MARGIN = 40.0


@dataclass(frozen=True)
class MuBound:
    """Result of :func:`mu_lower_bound`.

    ``mu_ldp`` bounds the μ of the induced mechanism on S_m (μ-GDP between any two sign
    vectors); ``mu_lb = mu_ldp / 2`` bounds a μ-GDP unlearning claim (docs/bounds.md §6).
    ``rejected`` is True iff ``mu_ldp > 0``.
    """

    mu_ldp: float
    mu_lb: float
    rejected: bool
    statistic: str
    statistic_value: float
    m: int
    r: int
    L: int
    zeta: float


def log_gdp_delta(mu: float, epsilon) -> np.ndarray | float:
    """log δ_μ(ε), in log space (``log_ndtr``) so that δ far below 1e-300 keeps its precision;
    −inf at μ = 0.  Vectorised over ``epsilon`` (ε ≥ 0)."""
    mu = check_epsilon(mu, "mu")
    eps = np.asarray(epsilon, dtype=float)
    if mu == 0.0:
        out = np.full(eps.shape, _NEG_INF)
    else:
        a, b = log_delta_terms(eps, mu)
        with np.errstate(divide="ignore"):
            out = a + np.log(-np.expm1(np.minimum(b - a, 0.0)))
    return float(out) if out.ndim == 0 else out


def _eps_grid(m: int) -> np.ndarray:
    top = log_num_sign_vectors(m) + _EPS_MARGIN
    return np.unique(np.concatenate([[0.0], np.geomspace(1e-4, top, 256), np.linspace(0.0, top, 769)]))


def min_log_g_gdp(mu: float, m: int, r: int) -> float:
    """min_{ε ≥ 0} log g(ε; δ_μ(ε)), the smallest per-run factor of Lemma C.1 for a μ-GDP mechanism.

    A grid over ε ∈ [0, log M' + 40] refined by a bounded Brent search around its best point;
    any ε gives a valid bound, so the search only affects tightness.  ε with δ_μ(ε) ≥ M'/K give
    log g ≥ 0 (the trivial bound) and are never the minimum of a rejecting test.
    """
    check_m_r(m, r)
    mu = check_epsilon(mu, "mu")
    grid = _eps_grid(m)
    vals = _log_g(grid, m, r, log_gdp_delta(mu, grid))
    i = int(np.argmin(vals))
    best = float(vals[i])
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    if hi > lo:
        res = minimize_scalar(lambda e: _log_g(e, m, r, log_gdp_delta(mu, e)), bounds=(lo, hi), method="bounded",
                              options={"xatol": 1e-10 * max(1.0, hi)})
        best = min(best, float(res.fun))
    return best


def mu_log_p_value(value: float, m: int, r: int, L: int, mu: float, *, statistic: str = "mean") -> float:
    """log p(μ): log of min_ε of Lemma C.1's bound (Eq. 9 mean, Eq. 10 median) at (ε, δ_μ(ε)),
    an upper bound on P(statistic ≥ value) for every μ-GDP induced mechanism (docs/bounds.md §6)."""
    check_m_r(m, r)
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 1:
        raise ValueError(f"L (number of runs) must be an integer >= 1, got {L!r}")
    return _log_tail_bound(value, m, r, int(L), min_log_g_gdp(mu, m, r), statistic)


def mu_tail_bound(value: float, m: int, r: int, L: int, mu: float, *, statistic: str = "mean") -> float:
    """:func:`mu_log_p_value`, exponentiated (in [0, 1])."""
    return float(math.exp(mu_log_p_value(value, m, r, L, mu, statistic=statistic)))


def _largest_rejected_mu(rejects) -> float:
    """sup{μ ≥ 0 : rejects(μ)} for a monotone test (rejects(μ) ⇒ rejects(μ') for μ' < μ), by
    doubling and bisection to 1e-10 relative; the returned μ is rejected (0 if none is)."""
    if not rejects(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    while rejects(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 2.0**30:  # pragma: no cover - δ_μ → 1 makes Lemma C.1 trivial (docs/bounds.md §6)
            return math.inf
    while hi - lo > 1e-10 * hi:
        mid = 0.5 * (lo + hi)
        if rejects(mid):
            lo = mid
        else:
            hi = mid
    return lo


def mu_lower_bound(overlaps: Sequence[float], m: int, r: int, *, zeta: float = 0.05, statistic: str = "mean") -> MuBound:
    """Lower bound on μ from the overlaps of L independent runs (docs/bounds.md §6).

    ``mu_ldp = sup{μ ≥ 0 : p(μ) ≤ ζ}`` with p(μ) = min_ε of Lemma C.1's bound at (ε, δ_μ(ε));
    p(μ) ≤ ζ iff min_ε log g(ε; δ_μ(ε)) ≤ log g*, the threshold of Eq. 1/2 at level ζ.  0 when
    the statistic is ≤ r/2 or μ = 0 is not rejected.  ``mu_lb = mu_ldp / 2``.
    """
    check_m_r(m, r)
    m, r = int(m), int(r)
    zeta = _check_zeta(zeta)
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    v = _prepare_overlaps(overlaps, r)
    stat, log_g_star = _log_g_threshold(v, m, r, zeta, statistic)
    mu = 0.0
    if stat > r / 2:
        mu = as_bound(_largest_rejected_mu(lambda x: min_log_g_gdp(x, m, r) <= log_g_star))
    return MuBound(
        mu_ldp=float(mu),
        mu_lb=float(mu) / 2.0,
        rejected=bool(mu > 0.0),
        statistic=statistic,
        statistic_value=stat,
        m=m,
        r=r,
        L=int(v.size),
        zeta=zeta,
    )
