"""μ-GDP lower bounds from the overlaps of the sign-vector audit (docs/bounds.md §6 and §6a).

Two tests of H0(μ), chosen by ``method``: ``"tradeoff"`` (§6a), the dominating law of one run's
overlap under G_μ itself, t_μ(v) = Φ(Φ⁻¹(q₀(v)) + μ) ≥ P(V ≥ v), with the exact tail of the mean
(or the median's binomial tail) over L runs; and ``"lemma_c1"`` (§6, below), the (ε, δ) route.

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

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import log_ndtr, ndtri_exp

from ..checks import check_epsilon
from ..checks import check_zeta as _check_zeta
from .bounds import (
    STATISTICS,
    Bound,
    as_bound,
    log_g_factor,
    log_g_threshold,
    log_tail_bound,
    prepare_overlaps,
    log_num_sign_vectors,
)
from .gaussian_mechanism import log_delta_terms
from .posterior_tests import largest_rejected, log_dominated_p_value, log_overlap_blocks, log_pmf_from_tails
from .signs import check_m_r

__all__ = ["MU_METHODS", "log_gdp_delta", "min_log_g_gdp", "log_gdp_dominating_tail", "log_gdp_dominating_pmf",
           "mu_log_p_value", "mu_lower_bound", "mu_tail_bound", "mu_group_composition"]

#: The tests of H0(μ): the trade-off-function test (docs/bounds.md §6a) and Lemma C.1's (§6).
MU_METHODS = ("tradeoff", "lemma_c1")
#: Added to μ in the trade-off test's Φ(Φ⁻¹(q₀) + μ): an upward margin far above the rounding of
#: ``ndtri_exp``/``log_ndtr`` (~1e-15 relative), so that rounding can only make the test conservative.
_MU_MARGIN = 1e-9

_NEG_INF = -math.inf
# Beyond ε = log M' + 40, g(ε; δ) ≥ e^ε/(e^ε + M') > 1 − e^{−40}: no useful ε lies there.
_EPS_MARGIN = 40.0


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
    vals = log_g_factor(grid, m, r, log_gdp_delta(mu, grid))
    i = int(np.argmin(vals))
    best = float(vals[i])
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    if hi > lo:
        res = minimize_scalar(lambda e: log_g_factor(e, m, r, log_gdp_delta(mu, e)), bounds=(lo, hi), method="bounded",
                              options={"xatol": 1e-10 * max(1.0, hi)})
        best = min(best, float(res.fun))
    return best


def _gdp_shift(m: int, r: int, mu: float) -> np.ndarray:
    """Φ⁻¹(q₀(v)) + μ (+ the margin), v = 0..r+1: q₀(v) = T_v / M' is the tail of the overlap of a
    random guess (+inf at v = 0, −inf at v = r + 1)."""
    check_m_r(m, r)
    mu = check_epsilon(mu, "mu")
    _, log_t, _ = log_overlap_blocks(int(m), int(r))
    return ndtri_exp(log_t - log_t[0]) + (mu + _MU_MARGIN)


def log_gdp_dominating_tail(m: int, r: int, mu: float) -> tuple[np.ndarray, np.ndarray]:
    """(log t_μ(v), log(1 − t_μ(v))) for v = 0..r+1, t_μ(v) = Φ(Φ⁻¹(q₀(v)) + μ): the largest P(V ≥ v)
    of one run of a μ-GDP induced mechanism on S_m with S uniform (docs/bounds.md §6a)."""
    w = _gdp_shift(m, r, mu)
    return log_ndtr(w), log_ndtr(-w)


def log_gdp_dominating_pmf(m: int, r: int, mu: float) -> np.ndarray:
    """log D_μ(u), u = 0..r, the law with tail t_μ (docs/bounds.md §6a; :func:`.posterior_tests.log_pmf_from_tails`)."""
    return log_pmf_from_tails(*log_gdp_dominating_tail(m, r, mu))


def _check_mu_args(m: int, r: int, L: int, statistic: str, method: str) -> None:
    check_m_r(m, r)
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    if method not in MU_METHODS:
        raise ValueError(f"method must be one of {MU_METHODS} for a μ-GDP bound, got {method!r}")
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 1:
        raise ValueError(f"L (number of runs) must be an integer >= 1, got {L!r}")


def _tradeoff_log_p(value: float, m: int, r: int, L: int, mu: float, statistic: str) -> float:
    return log_dominated_p_value(float(value), r, L, statistic, lambda: log_gdp_dominating_tail(m, r, mu),
                                 lambda: log_gdp_dominating_pmf(m, r, mu))


def mu_log_p_value(value: float, m: int, r: int, L: int, mu: float, *, statistic: str = "mean", method: str = "lemma_c1") -> float:
    """log p(μ), an upper bound on P(statistic ≥ value) over L runs of every μ-GDP induced mechanism:
    ``"lemma_c1"``, min_ε of Lemma C.1's bound (Eq. 9 mean, Eq. 10 median) at (ε, δ_μ(ε)) (§6);
    ``"tradeoff"``, the smaller of that and the exact tail of the sum (mean) or the binomial tail
    (median) under the dominating law D_μ (docs/bounds.md §6a)."""
    _check_mu_args(m, r, L, statistic, method)
    lemma = log_tail_bound(value, m, r, int(L), min_log_g_gdp(mu, m, r), statistic)
    if method == "tradeoff":
        return min(lemma, _tradeoff_log_p(value, int(m), int(r), int(L), float(mu), statistic))
    return lemma


def mu_tail_bound(value: float, m: int, r: int, L: int, mu: float, *, statistic: str = "mean", method: str = "lemma_c1") -> float:
    """:func:`mu_log_p_value`, exponentiated (in [0, 1])."""
    return float(math.exp(mu_log_p_value(value, m, r, L, mu, statistic=statistic, method=method)))


def mu_lower_bound(overlaps: Sequence[float], m: int, r: int, *, zeta: float = 0.05, statistic: str = "mean",
                   method: str = "lemma_c1") -> Bound:
    """Lower bound on μ from the overlaps of L independent runs (docs/bounds.md §6, §6a).

    ``mu_ldp = sup{μ ≥ 0 : p(μ) ≤ ζ}``.  ``method="lemma_c1"``: p(μ) = min_ε of Lemma C.1's bound at
    (ε, δ_μ(ε)); p(μ) ≤ ζ iff min_ε log g(ε; δ_μ(ε)) ≤ log g*, the threshold of Eq. 1/2 at level ζ.
    ``method="tradeoff"``: p(μ) the smaller of that and the exact tail under the dominating law D_μ
    of §6a (both bound the same probability, so their minimum does), hence never below
    ``"lemma_c1"``'s μ (at m = r = 6, L = 100, every V = 4: 0.642 against 0.132).  0 when the
    statistic is ≤ r/2 or μ = 0 is not rejected.  ``mu_lb`` bounds a μ-GDP unlearning claim:
    ``mu_ldp / 2`` (Lemma C.1, through the 2μ-GDP induced mechanism) and, with ``"tradeoff"``, also
    §6a's μ itself, whose argument needs only one common reference, the retrained model.
    """
    m, r = int(m), int(r)
    zeta = _check_zeta(zeta)
    v = prepare_overlaps(overlaps, r)
    _check_mu_args(m, r, int(v.size), statistic, method)
    stat, log_g_star = log_g_threshold(v, m, r, zeta, statistic)
    mu = mu_lb = 0.0
    if stat > r / 2:
        mu = as_bound(largest_rejected(lambda x: min_log_g_gdp(x, m, r) <= log_g_star))
        mu_lb = mu / 2.0
        if method == "tradeoff":  # both p-values bound the same tail: the smaller is valid (§6a)
            log_zeta = math.log(zeta)
            common = as_bound(largest_rejected(lambda x: _tradeoff_log_p(stat, m, r, int(v.size), x, statistic) <= log_zeta))
            # §6a's bound holds against one common reference: any P_s for the induced mechanism's μ,
            # and the retrained model A(D_r) itself for the unlearning claim, which needs no halving
            mu, mu_lb = max(mu, common), max(mu_lb, common)
    return Bound("mu", float(mu), float(mu_lb), bool(mu > 0.0), statistic, stat, m, r, int(v.size), zeta, method=method)


def mu_group_composition(overlaps: Sequence[float], m: int, r: int, *, zeta: float = 0.05, statistic: str = "mean") -> float:
    """μ_LB of a μ-GDP unlearning claim by group privacy and composition, the closed form
    (Φ⁻¹(ζ) − Φ⁻¹(q)) / (2√L) (docs/bounds.md §6a): the L runs' guesses
    composed (√L μ per unlearned model against A(D_r)), the two sign vectors' models 2√L μ apart,
    so the one test "statistic ≥ observed", whose size under a blind guess is q (the null tail of
    the L-run statistic), has power at most Φ(Φ⁻¹(q) + 2√L μ); reject μ where that is ≤ ζ.  Valid,
    and never above the trade-off test's μ (:func:`mu_lower_bound` with ``method="tradeoff"``),
    which uses the per-run trade-off function and no group privacy.  0 when nothing is rejected."""
    m, r = int(m), int(r)
    zeta = _check_zeta(zeta)
    v = prepare_overlaps(overlaps, r)
    L = int(v.size)
    _check_mu_args(m, r, L, statistic, "tradeoff")
    value = float(np.mean(v)) if statistic == "mean" else float(np.median(v))
    log_q = _tradeoff_log_p(value, m, r, L, 0.0, statistic)  # the null tail: μ = 0 is the blind guess
    mu = (ndtri_exp(math.log(zeta)) - ndtri_exp(min(log_q, 0.0))) / (2.0 * math.sqrt(L))
    return as_bound(mu)
