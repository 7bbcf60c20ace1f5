"""The ε of an unlearning claim against its one common reference, the retrained model (docs/bounds.md §6b).

An (ε, 0) unlearning claim makes every unlearned model's guess ε-indistinguishable from the same
guess on A(D_r), which does not depend on S.  One run's overlap then has

    P(V ≥ v) ≤ t_ε(v) = min{1, e^ε q₀(v), 1 − e^{−ε}(1 − q₀(v))},   q₀(v) = T_v / M',

the argument of §6a with the ε-DP trade-off function (convex, so Jensen applies), for the unlearning
ε itself: no Lemma 4.1 halving.  Over L independent runs the mean is tested by the exact tail of the
L-fold convolution of the law with tail t_ε, the median by the binomial tail.  Both this and the
sign-vector route (ε_LDP / 2) bound the same tail under the claim, so the larger ε_LB is valid.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..checks import check_zeta
from .bounds import STATISTICS, as_bound, prepare_overlaps
from .posterior_tests import log_dominated_p_value, log_overlap_blocks
from .signs import check_m_r

__all__ = ["log_reference_tail", "log_reference_pmf", "reference_log_p_value", "reference_epsilon_lower_bound"]

#: Added to ε inside t_ε: rounding can then only make the test conservative.
_EPS_MARGIN = 1e-9


def _log_tails(m: int, r: int, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """(log t_ε(v), log(1 − t_ε(v))) for v = 0..r+1, from log q₀ and log(1 − q₀) (no cancellation)."""
    check_m_r(m, r)
    if not (math.isfinite(epsilon) and epsilon >= 0):
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    e = float(epsilon) + _EPS_MARGIN
    _, log_t, log_b = log_overlap_blocks(int(m), int(r))
    log_q0, log_1mq0 = log_t - log_t[0], log_b - log_t[0]  # q₀(v) and 1 − q₀(v), v = 0..r+1
    with np.errstate(divide="ignore", invalid="ignore"):
        log_low = np.minimum(e + log_q0, 0.0)                          # e^ε q₀ (capped at 1)
        log_high = np.log(-np.expm1(np.minimum(-e + log_1mq0, 0.0)))   # 1 − e^{−ε}(1 − q₀)
        log_tail = np.minimum(log_low, log_high)
        # 1 − t = max{1 − e^ε q₀, e^{−ε}(1 − q₀)}
        comp_low = np.log(-np.expm1(np.minimum(e + log_q0, 0.0)))
        log_comp = np.maximum(comp_low, -e + log_1mq0)
    return log_tail, log_comp


def log_reference_tail(m: int, r: int, epsilon: float) -> np.ndarray:
    """log t_ε(v), v = 0..r+1 (t_ε(0) = 1, t_ε(r + 1) = 0)."""
    return _log_tails(m, r, epsilon)[0]


def log_reference_pmf(m: int, r: int, epsilon: float) -> np.ndarray:
    """log of the law with tail t_ε on {0..r}: t_ε(u) − t_ε(u + 1), from the tails where t_ε(u) ≤ 1/2
    and from the complements 1 − t_ε above."""
    log_t, log_c = _log_tails(m, r, epsilon)
    a, b, ca, cb = log_t[:-1], log_t[1:], log_c[:-1], log_c[1:]
    with np.errstate(divide="ignore", invalid="ignore"):
        from_tail = a + np.log1p(-np.exp(b - a))
        from_comp = cb + np.log1p(-np.exp(ca - cb))
    return np.where(a > math.log(0.5), from_comp, from_tail)


def reference_log_p_value(value: float, m: int, r: int, L: int, epsilon: float, *, statistic: str = "mean") -> float:
    """log of an upper bound on P(statistic ≥ value) over L runs under an (ε, 0) unlearning claim."""
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 1:
        raise ValueError(f"L (number of runs) must be an integer >= 1, got {L!r}")
    return log_dominated_p_value(float(value), int(r), int(L), statistic, lambda: _log_tails(m, r, epsilon),
                                 lambda: log_reference_pmf(m, r, epsilon))


def reference_epsilon_lower_bound(overlaps: Sequence[float], m: int, r: int, *, zeta: float = 0.05,
                                  statistic: str = "mean") -> float:
    """ε_LB of an (ε, 0) unlearning claim against the retrained model: sup{ε : p(ε) ≤ ζ} (0 if ε = 0 is
    not rejected).  Monotone: t_ε(v) grows with ε for v ≥ 1."""
    check_m_r(m, r)
    zeta = check_zeta(zeta)
    v = prepare_overlaps(overlaps, r)
    L = int(v.size)
    value = float(np.mean(v)) if statistic == "mean" else float(np.median(v))
    log_zeta = math.log(zeta)

    def rejects(eps: float) -> bool:
        return reference_log_p_value(value, m, r, L, eps, statistic=statistic) <= log_zeta

    if not rejects(0.0):
        return 0.0
    lo, hi = 0.0, 1.0
    while rejects(hi):
        lo, hi = hi, 2.0 * hi
        if hi > 2.0**20:  # pragma: no cover - every guess right in every run: no finite ε is rejected away
            return math.inf
    while hi - lo > 1e-10 * hi:
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if rejects(mid) else (lo, mid)
    return as_bound(lo)
