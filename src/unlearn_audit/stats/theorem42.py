"""Theorem 4.2's counting and thresholds (paper Section 4, App. B; docs/bounds.md): N_u, the number of
s ∈ S_m at overlap u with a guess (:func:`log_overlap_counts`), the threshold log g* at which Eq. 1
(mean) or Eq. 2 (median) equals ζ, and its inversion to ε.

The shared base of :mod:`.bounds` (the public bounds) and :mod:`.posterior_tests` (the δ = 0 tests,
which start their search at Theorem 4.2's ε), so that neither imports the other's internals in a
circle.  numpy and scipy only.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.optimize import brentq
from scipy.special import gammaln, logsumexp, polygamma, psi

from .signs import check_m_r

__all__ = ["ALL_STATISTICS", "STATISTICS", "log_num_guesses", "log_num_sign_vectors", "log_overlap_counts", "max_delta",
           "log_comb", "log_g_threshold", "log_g_to_epsilon", "log_mgf_min"]

STATISTICS = ("mean", "median")
#: Statistics of :func:`epsilon_lower_bound`: Theorem 4.2's two, and the perfect-guess count
#: (runs with V = r, docs/bounds.md §4a), which only ``method="exact"`` tests.
ALL_STATISTICS = (*STATISTICS, "perfect")


# Terms more than this many nats below the largest summand of a log-concave sum are
# dropped: their total is < 1e-30 of the sum, far below float64 resolution.
_WINDOW_NATS = 80.0


# --------------------------------------------------------------------------------------
# counting (Theorem 4.2)
# --------------------------------------------------------------------------------------
def log_comb(n, k):
    """log C(n, k) elementwise; −inf where k < 0 or k > n."""
    n = np.asarray(n, dtype=float)
    k = np.asarray(k, dtype=float)
    valid = (k >= 0) & (k <= n)
    kk = np.where(valid, k, 0.0)
    out = gammaln(n + 1) - gammaln(kk + 1) - gammaln(n - kk + 1)
    return np.where(valid, out, -np.inf)


def log_num_sign_vectors(m: int) -> float:
    """log M' = log C(m, ⌊m/2⌋)."""
    check_m_r(m)
    return float(log_comb(m, m // 2))


def log_num_guesses(m: int, r: int) -> float:
    """log K = log( m! / ((r/2)! (r/2)! (m−r)!) ), the number of admissible guesses."""
    check_m_r(m, r)
    return float(gammaln(m + 1) - 2 * gammaln(r // 2 + 1) - gammaln(m - r + 1))


def max_delta(m: int, r: int) -> float:
    """M'/K: Lemma C.1's bound is monotone in ε (a valid test) only for δ below this."""
    return float(np.exp(min(log_num_sign_vectors(m) - log_num_guesses(m, r), 0.0)))


@lru_cache(maxsize=256)
def _log_overlap_counts_cached(m: int, r: int) -> np.ndarray:
    h = r // 2
    n0 = m - r
    c = (n0 + 1) // 2  # ⌈(m − r)/2⌉
    u = np.arange(r + 1, dtype=float)
    # The summand of N_u, indexed by a = α1 (α2 = u − a), is
    #   f_u(a) = log C(n0, c + u − 2a) + log C(h, a) + log C(h, u − a),
    # concave in a.  Feasible a: max(0, u−h, ⌈(c+u−n0)/2⌉) ≤ a ≤ min(h, u, ⌊(c+u)/2⌋).
    lo = np.maximum.reduce([np.zeros_like(u), u - h, np.ceil((c + u - n0) / 2)])
    hi = np.minimum.reduce([np.full_like(u, h), u, np.floor((c + u) / 2)])
    feasible = lo <= hi

    # Continuous maximiser of f_u by bisection on f_u' (digamma), vectorised over u.
    a_lo, a_hi = lo.copy(), hi.copy()
    for _ in range(64):
        mid = 0.5 * (a_lo + a_hi)
        k = c + u - 2 * mid
        d = (
            -psi(mid + 1) + psi(h - mid + 1)
            + psi(u - mid + 1) - psi(h - u + mid + 1)
            + 2 * psi(k + 1) - 2 * psi(n0 - k + 1)
        )
        d = np.nan_to_num(d, nan=0.0)
        a_lo = np.where(d > 0, mid, a_lo)
        a_hi = np.where(d > 0, a_hi, mid)
    peak = np.clip(np.round(0.5 * (a_lo + a_hi)), lo, hi)
    k = c + u - 2 * peak
    curv = (
        polygamma(1, peak + 1) + polygamma(1, h - peak + 1)
        + polygamma(1, u - peak + 1) + polygamma(1, h - u + peak + 1)
        + 4 * polygamma(1, k + 1) + 4 * polygamma(1, n0 - k + 1)
    )
    curv = np.nan_to_num(curv, nan=1.0, posinf=1.0)
    log_fact = gammaln(np.arange(max(n0, h) + 2, dtype=float) + 1)  # log k!, exact table lookups
    width = int(np.ceil(np.max(np.sqrt(2 * _WINDOW_NATS / np.maximum(curv, 1e-300))[feasible]))) + 2
    while True:
        width = min(width, h + 1)
        offsets = np.arange(-width, width + 1, dtype=float)
        result = np.full(r + 1, -np.inf)
        edge_ok = True
        chunk = max(1, 4_000_000 // offsets.size)
        for start in range(0, r + 1, chunk):
            sl = slice(start, start + chunk)
            a = peak[sl, None] + offsets[None, :]
            inside = (a >= lo[sl, None]) & (a <= hi[sl, None])
            ai = np.where(inside, a, lo[sl, None]).astype(np.int64)
            ui = np.arange(start, min(start + chunk, r + 1), dtype=np.int64)[:, None]
            ki = c + ui - 2 * ai
            vals = (
                log_fact[n0] - log_fact[ki] - log_fact[n0 - ki]
                + 2 * log_fact[h] - log_fact[ai] - log_fact[h - ai]
                - log_fact[ui - ai] - log_fact[h - ui + ai]
            )
            vals = np.where(inside, vals, -np.inf)
            result[sl] = logsumexp(vals, axis=1)
            # Concavity: if both window edges are far below the maximum, so is everything outside.
            top = np.max(vals, axis=1)
            for edge in (0, -1):
                cut = inside[:, edge] & (vals[:, edge] > top - _WINDOW_NATS)
                if np.any(cut & feasible[sl]):
                    edge_ok = False
        if edge_ok or width >= h + 1:
            break
        width *= 2
    result[~feasible] = -np.inf
    result.setflags(write=False)
    return result


def log_overlap_counts(m: int, r: int) -> np.ndarray:
    """log N_u for u = 0..r (Theorem 4.2): the number of s ∈ S_m at overlap u with any fixed guess.

    N_u = Σ_{α1+α2=u} C(m−r, ⌈(m−r)/2⌉ − (α1−α2)) C(r/2, α1) C(r/2, α2); Σ_u N_u = M'.
    Entries with N_u = 0 are −inf.  Cached per (m, r); the returned array is read-only.
    """
    check_m_r(m, r)
    return _log_overlap_counts_cached(int(m), int(r))


# --------------------------------------------------------------------------------------
# Theorem 4.2 / Lemma C.1
# --------------------------------------------------------------------------------------


def log_g_to_epsilon(log_g: float, m: int, r: int, delta: float) -> float:
    """Invert g(ε) = (e^ε + a)/(e^ε + M' − 1) = exp(log_g) for ε; −inf if no ε ≥ −∞ fits."""
    if log_g >= 0:
        return math.inf
    log_mp = log_num_sign_vectors(m)
    log_b = log_mp + math.log1p(-math.exp(-log_mp))  # log(M' − 1)
    log_one_minus_g = math.log(-math.expm1(log_g))
    if delta == 0.0:
        return log_g + log_b - log_one_minus_g
    log_a = log_b - log_mp + log_num_guesses(m, r) + math.log(delta)
    x = log_g + log_b  # log(g · b)
    if log_a >= x:
        return -math.inf
    return x + math.log1p(-math.exp(log_a - x)) - log_one_minus_g


def log_mgf_min(log_n: np.ndarray, v: float) -> float:
    """min_{λ≥0} [ log Σ_u e^{λu} N_u − λ v ]  (the ε-free part of Eq. 1)."""
    u = np.arange(log_n.size, dtype=float)
    support = np.isfinite(log_n)
    u_max = float(u[support].max())

    def h(lam: float) -> float:
        return float(logsumexp(lam * u + log_n) - lam * v)

    def mean_u(lam: float) -> float:
        w = lam * u + log_n
        p = np.exp(w - logsumexp(w))
        return float(np.dot(p, u))

    if mean_u(0.0) >= v:
        return h(0.0)
    if v >= u_max:
        return float(log_n[int(u_max)]) + 0.0 * v  # λ → ∞: only u_max survives and v = u_max
    lam_hi = 1.0
    while mean_u(lam_hi) < v:
        lam_hi *= 2.0
        if lam_hi > 1e12:  # pragma: no cover - v within rounding of u_max
            return h(lam_hi)
    lam = brentq(lambda x: mean_u(x) - v, 0.0, lam_hi, xtol=1e-14, rtol=1e-14, maxiter=500)
    return h(lam)


def log_g_threshold(v: np.ndarray, m: int, r: int, zeta: float, statistic: str) -> tuple[float, float]:
    """(statistic value, log g*) such that the bound of Eq. 1/2 (or 9/10) equals ζ at g = g*."""
    log_n = log_overlap_counts(m, r)
    L = v.size
    if statistic == "mean":
        stat = float(v.mean())
        return stat, math.log(zeta) / L - log_mgf_min(log_n, stat)
    stat = float(np.median(v))
    k = (L + 1) // 2  # ⌈L/2⌉
    log_binom = float(log_comb(L, k))
    log_tail = float(logsumexp(log_n[int(math.ceil(stat)):]))
    return stat, (math.log(zeta) - log_binom) / k - log_tail
