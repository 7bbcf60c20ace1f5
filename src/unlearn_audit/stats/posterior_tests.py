"""Tighter δ = 0 tests from the same overlaps (docs/bounds.md §1–5; paper Section 4, App. B).

Theorem 4.2 bounds every posterior probability by e^ε/(e^ε + M' − 1).  Using the whole
posterior constraint p(s | t) ≤ e^ε p(s' | t) gives, for a guess t and any threshold v,

    P(V ≥ v) ≤ q_ε(v) = e^ε T_v / (e^ε T_v + M' − T_v),   T_v = Σ_{u ≥ v} N_u,

so each run's V is stochastically dominated by the law Q_ε with tail q_ε (docs/bounds.md §1).

* ``"exact"``, mean: the upper tail of the L-fold convolution Q_ε^{*L} at Σ V (§2);
  median: the binomial tail P(Binomial(L, q_ε(⌈median⌉)) ≥ ⌈L/2⌉) (§4);
  perfect-guess count K = #{runs with V = r}: P(Binomial(L, q_ε(r)) ≥ K) (§4a).
* ``"mgf"``, mean: the Chernoff bound with the largest MGF of V over ε-constrained
  posteriors, Ψ_ε(λ) (§3).
* ``"adaptive"``, mean: the exact largest P(Σ V ≥ c) over every sequence of ε-LDP mechanisms,
  each run's chosen after seeing the earlier runs, by backward induction over the two-level
  posterior vertices (§3a); never larger than "exact" or "mgf".

ε_LDP = sup{ε ≥ 0 : p_ε ≤ ζ}; p_ε is non-decreasing in ε (§5).  Everything is in log space.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy.optimize import brentq
from scipy.special import logsumexp

from .theorem42 import (
    _WINDOW_NATS,
    ALL_STATISTICS,
    log_comb,
    log_g_threshold,
    log_g_to_epsilon,
    log_overlap_counts,
)
from .signs import check_m_r

__all__ = [
    "METHODS",
    "log_overlap_blocks",
    "log_sum_tail",
    "log_binom_upper_tail",
    "sum_threshold",
    "log_dominated_p_value",
    "log_pmf_from_tails",
    "largest_rejected",
    "log_dominating_pmf",
    "log_dominating_tail",
    "log_max_mgf",
    "posterior_epsilon_ldp",
    "posterior_log_p_value",
    "posterior_tail_bound",
]

#: Tests of :func:`unlearn_audit.stats.bounds.epsilon_lower_bound` (``method=``).
METHODS = ("theorem4.2", "exact", "mgf", "adaptive")

_NEG_INF = -math.inf


# --------------------------------------------------------------------------------------
# the dominating law Q_ε (docs/bounds.md §1)
# --------------------------------------------------------------------------------------
@lru_cache(maxsize=64)
def log_overlap_blocks(m: int, r: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(log N_u for u = 0..r, log T_v and log B_v = log(M' − T_v) for v = 0..r+1)."""
    log_n = log_overlap_counts(m, r)
    log_t = np.append(np.logaddexp.accumulate(log_n[::-1])[::-1], _NEG_INF)
    log_b = np.concatenate([[_NEG_INF], np.logaddexp.accumulate(log_n)])
    for a in (log_t, log_b):
        a.setflags(write=False)
    return log_n, log_t, log_b


def _log_d(epsilon: float, log_t: np.ndarray, log_b: np.ndarray) -> np.ndarray:
    """log D_v = log(e^ε T_v + M' − T_v), the normaliser of the extreme posterior at threshold v."""
    return np.logaddexp(epsilon + log_t, log_b)


def log_dominating_tail(m: int, r: int, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """(log q_ε(v), log(1 − q_ε(v))) for v = 0..r+1 (docs/bounds.md §1).

    q_ε(v) = e^ε T_v / (e^ε T_v + M' − T_v) is the largest P(V ≥ v) of any ε-LDP mechanism on
    S_m with S uniform; q_ε(0) = 1 and q_ε(r + 1) = 0.
    """
    _, log_t, log_b = log_overlap_blocks(*_check_m_r_eps(m, r, epsilon))
    log_d = _log_d(epsilon, log_t, log_b)
    return epsilon + log_t - log_d, log_b - log_d


def log_dominating_pmf(m: int, r: int, epsilon: float) -> np.ndarray:
    """log Q_ε(u), u = 0..r: the pmf with tail q_ε (docs/bounds.md §1).

    Q_ε(u) = q_ε(u) − q_ε(u + 1) = e^ε N_u M' / (D_u D_{u+1}) (no cancellation).
    """
    log_n, log_t, log_b = log_overlap_blocks(*_check_m_r_eps(m, r, epsilon))
    log_d = _log_d(epsilon, log_t, log_b)
    return epsilon + log_n + log_t[0] - log_d[:-1] - log_d[1:]


def _check_m_r_eps(m, r, epsilon) -> tuple[int, int]:
    check_m_r(m, r)
    if not (isinstance(epsilon, (int, float, np.floating, np.integer)) and epsilon >= 0 and math.isfinite(epsilon)):
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    return int(m), int(r)


# --------------------------------------------------------------------------------------
# exact tail of the L-fold convolution (docs/bounds.md §2)
# --------------------------------------------------------------------------------------
def _tilted_mean(log_w: np.ndarray, theta: float) -> float:
    u = np.arange(log_w.size, dtype=float)
    w = log_w + theta * u
    return float(np.dot(np.exp(w - logsumexp(w)), u))


def _tilt_for_mean(log_w: np.ndarray, target: float) -> float:
    """θ ≥ 0 with mean of the law ∝ w(u) e^{θu} equal to ``target`` (0 if already ≥ target)."""
    if _tilted_mean(log_w, 0.0) >= target:
        return 0.0
    hi = 1.0
    while _tilted_mean(log_w, hi) < target:
        hi *= 2.0
        if hi > 2.0**60:  # pragma: no cover - target within rounding of the support's top
            return hi
    return float(brentq(lambda t: _tilted_mean(log_w, t) - target, 0.0, hi, xtol=1e-12, rtol=1e-12, maxiter=500))


class _Scaled:
    """A non-negative sequence on {offset, …, offset + n − 1} stored as exp(log_scale) · values,
    max(values) = 1, entries below e^{−_WINDOW_NATS} of the maximum trimmed from both ends."""

    __slots__ = ("log_scale", "offset", "values")

    def __init__(self, offset: int, log_scale: float, values: np.ndarray):
        top = float(values.max())
        keep = np.flatnonzero(values >= top * math.exp(-_WINDOW_NATS))
        self.offset = offset + int(keep[0])
        self.log_scale = log_scale + math.log(top)
        self.values = values[keep[0] : keep[-1] + 1] / top

    def __mul__(self, other: _Scaled) -> _Scaled:
        """Convolution (direct, no FFT)."""
        return _Scaled(self.offset + other.offset, self.log_scale + other.log_scale, np.convolve(self.values, other.values))


def _power(base: _Scaled, n: int) -> _Scaled:
    """base^{*n} by binary exponentiation."""
    out = None
    while True:
        if n & 1:
            out = base if out is None else out * base
        n >>= 1
        if not n:
            return out
        base = base * base


def log_sum_tail(log_pmf: np.ndarray, L: int, c: int) -> float:
    """log P(W_1 + … + W_L ≥ c) for W_i iid with log pmf ``log_pmf`` on {0, …, r}.

    Exponential tilting by θ (so that the tilted mean is c/L) puts c at the centre of the tilted
    L-fold law, whose values near c are O(1); that law is computed by scaled direct convolution
    with binary exponentiation over L, trimmed to within e^{−80} of its maximum (a relative error
    < 1e-30).  Then P(ΣW ≥ c) = e^{LΛ(θ) − θc} Σ_{s ≥ c} Q_θ^{*L}(s) e^{−θ(s − c)}, exact in log space
    for tails far below 1e-300.
    """
    support = np.flatnonzero(np.isfinite(log_pmf))
    lo, hi = int(support[0]), int(support[-1])
    if c <= L * lo:
        return 0.0
    if c > L * hi:
        return _NEG_INF
    if c == L * hi:
        return float(L * log_pmf[hi])
    log_w = log_pmf[lo : hi + 1]  # shift the support to start at 0
    cc = c - L * lo
    theta = _tilt_for_mean(log_w, cc / L)
    u = np.arange(log_w.size, dtype=float)
    w = log_w + theta * u
    lam = float(logsumexp(w))
    peak = float(w.max())
    dist = _power(_Scaled(0, peak - lam, np.exp(w - peak)), L)
    s = dist.offset + np.arange(dist.values.size)
    sel = (s >= cc) & (dist.values > 0)
    if not sel.any():  # pragma: no cover - c lies at the tilted centre, inside the window
        return 0.0
    tail = float(logsumexp(np.log(dist.values[sel]) - theta * (s[sel] - cc)))
    return min(0.0, L * lam - theta * cc + dist.log_scale + tail)


# --------------------------------------------------------------------------------------
# max-MGF Chernoff bound (docs/bounds.md §3)
# --------------------------------------------------------------------------------------
def _log_expm1(x: float) -> float:
    """log(e^x − 1) for x ≥ 0 (−inf at 0)."""
    if x == 0.0:
        return _NEG_INF
    return x + math.log(-math.expm1(-x))


def _max_mgf_parts(lam: float, epsilon: float, log_n, log_t, log_d):
    """(log Ψ_ε(λ), its λ-derivative at the maximising block)."""
    u = np.arange(log_n.size, dtype=float)
    a = log_n + lam * u
    log_h_v = np.append(np.logaddexp.accumulate(a[::-1])[::-1], _NEG_INF)  # log H_{T_v}, v = 0..r+1
    log_h = log_h_v[0]
    c1 = _log_expm1(epsilon)
    vals = np.logaddexp(log_h, c1 + log_h_v) - log_d
    j = int(np.argmax(vals[:-1]))
    with np.errstate(divide="ignore"):
        b = a + np.log(u)  # log(N_u u e^{λu})
    d_all = logsumexp(b)
    d_top = logsumexp(b[j:])
    num = np.logaddexp(d_all, c1 + d_top)
    den = np.logaddexp(log_h, c1 + log_h_v[j])
    return float(vals[j]), float(np.exp(num - den))


def log_max_mgf(m: int, r: int, epsilon: float, lam: float) -> float:
    """log Ψ_ε(λ) = log max_k (e^ε H_k + H − H_k)/(k e^ε + M' − k) (docs/bounds.md §3).

    H = Σ_u N_u e^{λu}, H_k = sum of the k largest of these M' terms; the maximum over k is taken
    at the block boundaries k = T_v.  Ψ_ε(λ) ≥ E[e^{λV}] for every ε-LDP mechanism on S_m.
    """
    log_n, log_t, log_b = log_overlap_blocks(*_check_m_r_eps(m, r, epsilon))
    return _max_mgf_parts(float(lam), float(epsilon), log_n, log_t, _log_d(epsilon, log_t, log_b))[0]


def _log_mgf_tail(m: int, r: int, L: int, c: int, epsilon: float) -> float:
    """min_{λ ≥ 0} L log Ψ_ε(λ) − λc (convex in λ: bisection on the subgradient)."""
    log_n, log_t, log_b = log_overlap_blocks(m, r)
    log_d = _log_d(epsilon, log_t, log_b)
    if c >= L * r:  # λ → ∞: Ψ_ε(λ) e^{−λr} → q_ε(r)
        return float(L * (epsilon + log_t[r] - log_d[r])) if c == L * r else _NEG_INF
    return _mgf_chernoff(L, c, epsilon, log_n, log_t, log_d)[0]


def _mgf_chernoff(L: int, c: int, epsilon: float, log_n, log_t, log_d, rtol: float = 1e-11,
                  atol: float = 0.0) -> tuple[float, float]:
    """(min(0, min_{λ ≥ 0} L log Ψ_ε(λ) − λc), the λ where it is taken), for 0 < c < L·r; the bound
    at any λ is valid, ``rtol``/``atol`` (width of the final λ bracket) only affect its tightness."""

    def f(lam):
        val, slope = _max_mgf_parts(lam, epsilon, log_n, log_t, log_d)
        return L * val - lam * c, L * slope - c

    lo, hi = 0.0, 1.0
    while f(hi)[1] < 0:
        lo, hi = hi, 2.0 * hi
        if hi > 2.0**60:  # pragma: no cover - c within rounding of L·r
            break
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi) or hi - lo <= max(rtol * hi, atol):
            break
        if f(mid)[1] < 0:
            lo = mid
        else:
            hi = mid
    f_lo, f_hi = f(lo)[0], f(hi)[0]
    lam, val = (lo, f_lo) if f_lo <= f_hi else (hi, f_hi)
    return float(min(0.0, val)), float(lam)


# --------------------------------------------------------------------------------------
# adaptive worst case of the sum (docs/bounds.md §3a)
# --------------------------------------------------------------------------------------
#: Largest work of one ``"adaptive"`` p-value: cells of the (partial sum) × (vertex) tables, summed
#: over the runs (about 0.5 s); larger problems raise ``ValueError`` (use "exact" or "mgf").
ADAPTIVE_MAX_CELLS = 60_000_000
_PRUNE_NATS = 50.0  # tilted kernel entries below e^{-50} are bounded by their mass (every G̃ ≤ 1)
_CHUNK_NATS = 600.0  # largest log D_v − log D_w inside one suffix frame (no overflow)
_DENSE_MAX = 48  # windows up to this width: one matrix product per run


def _log_adaptive_tail(m: int, r: int, L: int, c: int, epsilon: float, *, dense_max: int = _DENSE_MAX,
                       chunk_nats: float = _CHUNK_NATS) -> float:
    """log G_0(0): the largest P(V^(1) + … + V^(L) ≥ c) over adaptively chosen ε-LDP mechanisms.

    G_L(s) = 1{s ≥ c}, G_{j−1}(s) = max_v Σ_u p_v(u) G_j(s + u) with p_v the law of V under the
    two-level posterior e^ε on {V ≥ v} (docs/bounds.md §3a).  Computed in the frame tilted by the
    max-MGF Chernoff λ: G̃_j(s) = G_j(s) e^{λ(c − s)} Ψ_ε(λ)^{−(L−j)} ≤ 1, with kernels
    p̃_v(u) = p_v(u) e^{λu}/Ψ_ε(λ) of mass ≤ 1, so G_0(0) = Ψ^L e^{−λc} G̃_0(0) and G̃_0(0) is not
    small.  Kernel columns whose largest entry is below e^{−50} are dropped and their mass added
    (G̃ ≤ 1): every approximation and rounding margin makes the result larger, never smaller.
    """
    log_n, log_t, log_b = log_overlap_blocks(m, r)
    log_d = _log_d(epsilon, log_t, log_b)  # v = 0..r+1, non-increasing in v
    if c >= L * r:  # every run must reach r: max_v p_v(r) = q_ε(r) at v = r
        return float(L * (epsilon + log_t[r] - log_d[r])) if c == L * r else _NEG_INF
    log_mgf, lam = _mgf_chernoff(L, c, epsilon, log_n, log_t, log_d, rtol=1e-3, atol=1e-6)  # any λ ≥ 0 is valid
    log_psi = _max_mgf_parts(lam, epsilon, log_n, log_t, log_d)[0]  # ≥ 0
    log_y = log_n + lam * np.arange(r + 1) - log_psi  # p̃_v(u) = y(u) e^{ε·1{u ≥ v}} / D_v
    log_k = log_y + epsilon - log_d[: r + 1]  # the largest entry of column u (at v = u)
    keep = np.flatnonzero(log_k >= -_PRUNE_NATS)
    a, b = int(keep[0]), int(keep[-1])  # the window W = [a, b]; vertices v = a..b+1 suffice
    nw, nv = b - a + 1, b - a + 2

    # work: the reachable partial sums s of level j lie in [max(j·a, c − (L−j)·b), min(c − 1, j·b)]
    lev = np.arange(L + 1)
    lo = np.maximum(lev * a, c - (L - lev) * b)
    hi = np.minimum(c - 1, lev * b)
    cells = int(np.clip(hi - lo + 1, 0, None)[:L].sum()) * nv
    if cells > ADAPTIVE_MAX_CELLS:
        raise ValueError(f"method='adaptive' needs {cells:.3g} table cells at m={m}, r={r}, L={L}, sum={c}, above its "
                         f"limit of {ADAPTIVE_MAX_CELLS:.3g}; use method='exact' or method='mgf'")

    # mass outside W of every vertex (bounded by its mass, G̃ ≤ 1); v ≤ a and v ≥ b+1 are dominated
    # inside W by v = a and v = b+1 respectively, so they only raise the added mass
    out = np.full(r + 1, _NEG_INF)
    out[:a], out[b + 1 :] = log_y[:a], log_y[b + 1 :]
    with np.errstate(invalid="ignore"):
        pre = np.concatenate([[_NEG_INF], np.logaddexp.accumulate(out)])
        suf = np.append(np.logaddexp.accumulate(out[::-1])[::-1], _NEG_INF)
    drop = np.exp(np.logaddexp(pre, epsilon + suf) - log_d)
    dstar = drop[a : b + 2].copy()
    dstar[0], dstar[-1] = drop[: a + 1].max(), drop[b + 1 :].max()
    dstar *= 1.0 + 1e-9
    w = log_y[a : b + 1]
    with np.errstate(invalid="ignore"):
        kpre = np.concatenate([[_NEG_INF], np.logaddexp.accumulate(w)])
        ksuf = np.append(np.logaddexp.accumulate(w[::-1])[::-1], _NEG_INF)
    mass = np.exp(np.logaddexp(kpre, epsilon + ksuf) - log_d[a : b + 2])  # kept mass of v = a..b+1

    ld = log_d[a : b + 2]
    if nw <= dense_max:
        high = np.arange(a, b + 1)[:, None] >= np.arange(a, b + 2)[None, :]
        kernel = np.exp(w[None, :] + np.where(high.T, epsilon, 0.0) - ld[:, None])  # (v, u), entries ≤ 1
        dcol = dstar[:, None]

        def step(ext, rows):  # window (u, s) = ext[s + u]: one product, then the maximum over v
            win = np.ndarray((nw, rows), dtype=float, buffer=ext, strides=(ext.itemsize, ext.itemsize))
            val = kernel @ win
            val += dcol
            return val.max(axis=0)
    else:
        w_pre = np.exp(w - ld[-1])  # the prefix in the frame of v = b+1 (its entries are ≤ 1)
        r_pre = np.exp(ld[-1] - ld)  # ≤ 1
        chunks = []  # suffix frames, right to left: frame of the chunk's last u, log D ratios ≤ chunk_nats
        k1 = nw - 1
        while k1 >= 0:
            k0 = k1
            while k0 > 0 and ld[k0 - 1] - ld[k1] <= chunk_nats:
                k0 -= 1
            seg = slice(k0, k1 + 1)
            chunks.append((k0, k1, np.exp(epsilon + w[seg] - ld[k1]), np.exp(ld[k1] - ld[seg]), np.exp(ld[k1 + 1] - ld[seg])))
            k1 = k0 - 1

        def step(ext, rows):  # window (s, u) = ext[s + u]
            win = np.ndarray((rows, nw), dtype=float, buffer=ext, strides=(ext.itemsize, ext.itemsize))
            val = np.zeros((rows, nv))
            np.cumsum(win * w_pre, axis=1, out=val[:, 1:])
            val *= r_pre
            carry = np.zeros(win.shape[0])
            for k0, k1, w_suf, r_suf, r_carry in chunks:
                part = np.cumsum((win[:, k0 : k1 + 1] * w_suf)[:, ::-1], axis=1)[:, ::-1]
                block = part * r_suf + carry[:, None] * r_carry
                val[:, k0 : k1 + 1] += block
                carry = block[:, 0]
            val += dstar
            return val.max(axis=1)

    g = np.zeros(0)  # G̃_L on [lo_L, hi_L] (empty) and F_L = 0 below it
    floor = 0.0
    dropped = bool(dstar.any())
    for j in range(L, 0, -1):
        lo1, hi1 = int(lo[j - 1]), int(hi[j - 1])
        new_floor = float((mass * floor + dstar).max()) if dropped else 0.0
        if lo1 > hi1:
            g, floor = np.zeros(0), new_floor
            continue
        x0, n = lo1 + a, hi1 - lo1 + nw  # G̃_j on x0 .. x0 + n − 1
        ext = np.empty(n)
        i_tail = min(max(c - x0, 0), n)
        i_band = min(max(int(lo[j]) - x0, 0), i_tail)
        ext[:i_band] = floor
        ext[i_band:i_tail] = g[x0 + i_band - int(lo[j]) : x0 + i_tail - int(lo[j])]
        ext[i_tail:] = np.exp(-(L - j) * log_psi - lam * np.arange(x0 + i_tail - c, x0 + n - c))
        g = step(ext, hi1 - lo1 + 1)
        floor = new_floor
    g0 = float(g[0]) if lo[0] <= 0 else floor

    ulp = 2.0**-52  # rounding margins, all upwards
    mag = float(np.abs(w[np.isfinite(w)]).max()) + epsilon + float(np.abs(log_d).max()) + 1.0
    rel = L * (8.0 * ulp * mag + (nv + 8) * ulp) + 8.0 * ulp * (abs(L * log_psi) + lam * c + 1.0)
    log_p = L * log_psi - lam * c + math.log(g0 + L * (nv + 2) * 2.0**-1074) + rel
    return float(min(0.0, log_mgf, log_p))


# --------------------------------------------------------------------------------------
# exact median (docs/bounds.md §4)
# --------------------------------------------------------------------------------------
def log_binom_upper_tail(L: int, k: int, log_q: float, log_1mq: float) -> float:
    """log P(Binomial(L, q) ≥ k), in log space."""
    j = np.arange(k, L + 1, dtype=float)
    with np.errstate(invalid="ignore"):  # 0 · (−inf) where q or 1 − q is 0
        terms = log_comb(L, j) + np.where(j > 0, j * log_q, 0.0) + np.where(j < L, (L - j) * log_1mq, 0.0)
    return float(min(0.0, logsumexp(terms)))


# --------------------------------------------------------------------------------------
# p-values and the ε solver (docs/bounds.md §5)
# --------------------------------------------------------------------------------------
def _check_method(statistic: str, method: str) -> None:
    if statistic not in ALL_STATISTICS:
        raise ValueError(f"statistic must be one of {ALL_STATISTICS}, got {statistic!r}")
    if method not in METHODS[1:]:
        raise ValueError(f"method must be one of {METHODS[1:]} here (theorem4.2 lives in bounds.py), got {method!r}")
    if method in ("mgf", "adaptive") and statistic != "mean":
        raise ValueError(f"method={method!r} is a bound for statistic='mean' only; use method='exact' for the median "
                         "and the perfect-guess count (exact binomial tails)")


def sum_threshold(value: float, L: int) -> int:
    """Smallest integer sum c with c ≥ L·value (the sum of integer overlaps; rounding-safe)."""
    return int(math.ceil(L * value - 1e-7))


def log_pmf_from_tails(log_tail: np.ndarray, log_comp: np.ndarray) -> np.ndarray:
    """log of the law on {0..r} whose tail is t (``log_tail`` = log t(v), ``log_comp`` = log(1 − t(v)),
    v = 0..r+1): t(u) − t(u + 1), from the tails where t(u) ≤ 1/2 and from the complements above, so
    that neither subtraction cancels (§6a, §6b)."""
    a, b, ca, cb = log_tail[:-1], log_tail[1:], log_comp[:-1], log_comp[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        from_tail = a + np.log1p(-np.exp(b - a))
        from_comp = cb + np.log1p(-np.exp(ca - cb))
    return np.where(a > math.log(0.5), from_comp, from_tail)


def largest_rejected(rejects) -> float:
    """sup{x ≥ 0 : rejects(x)} for a monotone test (rejects(x) ⇒ rejects(x') for x' < x), by doubling
    and bisection to 1e-10 relative; the returned x is rejected (0 if none is, inf past 2^30)."""
    if not rejects(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    while rejects(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 2.0**30:  # pragma: no cover - a test that rejects every parameter
            return math.inf
    while hi - lo > 1e-10 * hi:
        mid = 0.5 * (lo + hi)
        if rejects(mid):
            lo = mid
        else:
            hi = mid
    return lo


def log_dominated_p_value(value: float, r: int, L: int, statistic: str, log_tails, log_pmf) -> float:
    """log P(statistic ≥ value) over L runs each dominated by one law on {0..r} (the mean through the
    integer sum, the median through the binomial tail): ``log_tails()`` gives (log tail, log(1 − tail))
    for v = 0..r+1 and ``log_pmf()`` the law's log pmf, each called only when needed.  The one place
    that turns a dominating law into a p-value (§2, §4, §6a, §6b)."""
    if statistic == "median":
        start = int(math.ceil(value))
        if start <= 0:
            return 0.0
        if start > r:
            return _NEG_INF
        log_q, log_1mq = log_tails()
        return log_binom_upper_tail(L, (L + 1) // 2, float(log_q[start]), float(log_1mq[start]))
    c = sum_threshold(value, L)
    if c <= 0:
        return 0.0
    if c > L * r:
        return _NEG_INF
    return log_sum_tail(log_pmf(), L, c)


def posterior_log_p_value(value: float, m: int, r: int, L: int, epsilon: float, *,
                          statistic: str = "mean", method: str = "exact") -> float:
    """log of an upper bound on P(statistic ≥ value) for every ε-LDP mechanism on S_m (S uniform,
    L independent runs): the log p-value of the claim ε (docs/bounds.md §2–4).

    ``value`` is the mean (compared through the integer sum L·value), the median of the overlaps, or
    for ``statistic="perfect"`` the number K of runs with V = r: P(Binomial(L, q_ε(r)) ≥ K) (§4a).
    """
    m, r = _check_m_r_eps(m, r, epsilon)
    _check_method(statistic, method)
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 1:
        raise ValueError(f"L (number of runs) must be an integer >= 1, got {L!r}")
    L, epsilon, value = int(L), float(epsilon), float(value)
    if statistic == "perfect":
        k = int(math.ceil(value - 1e-9))
        if k <= 0:
            return 0.0
        if k > L:
            return _NEG_INF
        log_q, log_1mq = log_dominating_tail(m, r, epsilon)
        return log_binom_upper_tail(L, k, float(log_q[r]), float(log_1mq[r]))
    if statistic == "median" or method == "exact":
        return log_dominated_p_value(value, r, L, statistic, lambda: log_dominating_tail(m, r, epsilon),
                                     lambda: log_dominating_pmf(m, r, epsilon))
    c = sum_threshold(value, L)
    if c <= 0:
        return 0.0
    if c > L * r:
        return _NEG_INF
    if method == "adaptive":
        return _log_adaptive_tail(m, r, L, c, epsilon)
    return _log_mgf_tail(m, r, L, c, epsilon)


def posterior_tail_bound(value: float, m: int, r: int, L: int, epsilon: float, *,
                         statistic: str = "mean", method: str = "exact") -> float:
    """:func:`posterior_log_p_value`, exponentiated (in [0, 1])."""
    return float(math.exp(posterior_log_p_value(value, m, r, L, epsilon, statistic=statistic, method=method)))


def _solve_epsilon(log_p, log_zeta: float, start: float = 0.0) -> float:
    """sup{ε ≥ 0 : log_p(ε) ≤ log ζ} for a non-decreasing log_p; the result passes the test.

    ``start`` is an ε known to be rejected by a looser test (a lower end for the bracket).
    """
    lo = start if start > 0.0 and log_p(start) <= log_zeta else 0.0
    if lo == 0.0 and log_p(0.0) > log_zeta:
        return 0.0
    step = max(1.0, 0.02 * lo)
    hi = lo + step
    while log_p(hi) <= log_zeta:  # bracket by doubling
        lo, step = hi, 2.0 * step
        hi = lo + step
        if hi > 2.0**40:  # pragma: no cover - p_ε → 1 as ε → ∞ whenever the statistic is ≤ r
            return math.inf
    eps = float(brentq(lambda e: log_p(e) - log_zeta, lo, hi, xtol=1e-10, rtol=1e-12, maxiter=500))
    for i in range(200):  # the returned ε must itself be rejected (rounding at the root)
        if log_p(eps) <= log_zeta:
            return eps
        eps = max(lo, eps - max(1e-12, 1e-13 * eps) * 2.0**i)
    return lo  # pragma: no cover


def posterior_epsilon_ldp(overlaps: np.ndarray, m: int, r: int, *, zeta: float,
                          statistic: str, method: str) -> tuple[float, float]:
    """(statistic value, ε_LDP) with ε_LDP = sup{ε ≥ 0 : p_ε ≤ ζ} (docs/bounds.md §5).

    ``overlaps`` are already validated (integers in [0, r]).  ε_LDP = 0 when the mean or median is
    ≤ r/2 or ε = 0 is not rejected; it is always finite (p_ε → 1 as ε → ∞).
    """
    check_m_r(m, r)
    _check_method(statistic, method)
    v = np.asarray(overlaps, dtype=float)
    L = int(v.size)
    if statistic == "perfect":  # §4a: no Theorem 4.2 start; p_0 may already be ≤ ζ
        count = float(np.count_nonzero(v == r))
        return count, _solve_epsilon(lambda eps: posterior_log_p_value(count, m, r, L, eps, statistic="perfect"),
                                     math.log(zeta))
    stat = float(v.mean()) if statistic == "mean" else float(np.median(v))
    if not stat > r / 2:
        return stat, 0.0
    if statistic == "mean":
        value = float(np.round(v.sum())) / L  # the exact integer sum, through sum_threshold
    else:
        value = stat

    memo: dict[float, float] = {}

    def log_p(eps: float) -> float:
        if eps not in memo:
            memo[eps] = posterior_log_p_value(value, m, r, L, eps, statistic=statistic, method=method)
        return memo[eps]

    # Theorem 4.2's ε is rejected by these tighter tests too: a lower end for the bracket
    _, log_g = log_g_threshold(v, m, r, zeta, statistic)
    start = log_g_to_epsilon(log_g, m, r, 0.0)
    start = start if math.isfinite(start) and start > 0.0 else 0.0
    return stat, _solve_epsilon(log_p, math.log(zeta), start)
