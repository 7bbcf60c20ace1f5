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

from ..checks import check_epsilon, check_zeta
from .bounds import STATISTICS, as_bound, prepare_overlaps
from .posterior_tests import largest_rejected, log_dominated_p_value, log_overlap_blocks, log_pmf_from_tails
from .signs import check_m_r

__all__ = ["log_reference_tail", "log_reference_pmf", "reference_log_p_value", "reference_epsilon_lower_bound"]

#: Added to ε inside t_ε: rounding can then only make the test conservative.
_EPS_MARGIN = 1e-9


def _log_tails(m: int, r: int, epsilon: float) -> tuple[np.ndarray, np.ndarray]:
    """(log t_ε(v), log(1 − t_ε(v))) for v = 0..r+1, from log q₀ and log(1 − q₀) (no cancellation)."""
    check_m_r(m, r)
    e = check_epsilon(epsilon) + _EPS_MARGIN
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
    """log of the law with tail t_ε on {0..r} (:func:`.posterior_tests.log_pmf_from_tails`)."""
    return log_pmf_from_tails(*_log_tails(m, r, epsilon))


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
    return as_bound(largest_rejected(lambda eps: reference_log_p_value(value, m, r, L, eps, statistic=statistic) <= log_zeta))
