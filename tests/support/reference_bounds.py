"""An independent, deliberately naive implementation of Theorem 4.2 / Lemma C.1 for tests.

It shares no code with ``unlearn_audit.stats.bounds``: N_u is summed over the full (α1, α2)
grid, the λ-infimum is found by a bounded scalar minimiser on every call, and ε is found
by root-finding on the full bound, without the closed form of the factorisation.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import gammaln, logsumexp


def lcomb(n, k):
    n = np.asarray(n, float)
    k = np.asarray(k, float)
    ok = (k >= 0) & (k <= n)
    kk = np.where(ok, k, 0)
    return np.where(ok, gammaln(n + 1) - gammaln(kk + 1) - gammaln(n - kk + 1), -np.inf)


def log_nu_full_grid(m: int, r: int) -> np.ndarray:
    h = r // 2
    a1, a2 = np.meshgrid(np.arange(h + 1), np.arange(h + 1), indexing="ij")
    terms = lcomb(m - r, math.ceil((m - r) / 2) - (a1 - a2)) + lcomb(h, a1) + lcomb(h, a2)
    u = (a1 + a2).ravel()
    t = terms.ravel()
    out = np.full(r + 1, -np.inf)
    for val in range(r + 1):
        sel = t[u == val]
        out[val] = logsumexp(sel) if sel.size else -np.inf
    return out


def log_bound(eps: float, v: float, m: int, r: int, L: int, statistic: str, delta: float, log_nu) -> float:
    log_mp = float(lcomb(m, m // 2))
    mp = math.exp(log_mp) if log_mp < 700 else math.inf
    log_k = float(gammaln(m + 1) - 2 * gammaln(r // 2 + 1) - gammaln(m - r + 1))
    if delta > 0:
        a_term = math.log((mp - 1) / mp) + log_k + math.log(delta)
        log_num = np.logaddexp(eps, a_term)
    else:
        log_num = eps
    log_den = np.logaddexp(eps, log_mp + math.log1p(-math.exp(-log_mp)))
    log_pi = log_nu + log_num - log_den
    u = np.arange(r + 1)
    if statistic == "median":
        k = math.ceil(L / 2)
        return float(lcomb(L, k)) + k * float(logsumexp(log_pi[int(math.ceil(v)):]))

    def f(x):  # x = log(1 + λ)
        lam = math.expm1(x)
        return L * float(logsumexp(lam * u + log_pi)) - lam * L * v

    best = min(f(0.0), minimize_scalar(f, bounds=(0.0, 12.0), method="bounded", options={"xatol": 1e-12}).fun)
    if v >= r:
        best = min(best, L * float(log_pi[r]))
    return best


def reference_epsilon(overlaps, m, r, zeta=0.05, statistic="mean", delta=0.0) -> float:
    v = np.asarray(overlaps, float)
    stat = float(v.mean() if statistic == "mean" else np.median(v))
    if stat <= r / 2:
        return 0.0
    log_nu = log_nu_full_grid(m, r)
    L = v.size
    g = lambda e: log_bound(e, stat, m, r, L, statistic, delta, log_nu) - math.log(zeta)  # noqa: E731
    if g(0.0) > 0:
        return 0.0
    hi = 1.0
    while g(hi) < 0:
        hi *= 2
    return brentq(g, 0.0, hi, xtol=1e-10)


def overlaps_by_enumeration(m: int, r: int) -> np.ndarray:
    """V(s, t) for every s ∈ S_m and one fixed guess t with r/2 entries +1 and r/2 entries −1, by
    enumeration (the law of V does not depend on t)."""
    from unlearn_audit.stats.signs import enumerate_sign_vectors

    s = enumerate_sign_vectors(m)
    t = np.zeros(m, dtype=int)
    t[: r // 2], t[r // 2 : r] = 1, -1
    return np.maximum(s * t, 0).sum(axis=1)
