"""The ε of an unlearning claim against its one common reference, the retrained model (docs/bounds.md §6b).

An (ε, δ) unlearning claim makes every unlearned model's guess (ε, δ)-indistinguishable from the
same guess on A(D_r), which does not depend on S.  One run's overlap then has

    P(V ≥ v) ≤ t_{ε,δ}(v) = min{1, δ + e^ε q₀(v), 1 − e^{−ε}(1 − δ − q₀(v))},   q₀(v) = T_v / M',

the argument of §6a with the (ε, δ)-DP trade-off function (convex, so Jensen applies), for the
unlearning ε itself: no Lemma 4.1 halving, and δ paid once per run (not Lemma C.1's K·δ).  Over L
independent runs the mean is tested by the exact tail of the L-fold convolution of the law with
tail t_{ε,δ}, the median by the binomial tail.  The block mechanism of §6b attains t_{ε,δ} at every
v and is (2ε, (1 + e^ε)δ)-LDP on S_m, so every test of the induced mechanism at 2ε bounds its tail,
which is this test's p-value: at δ = 0 this test is never weaker than Theorem 4.2, the exact, the mgf
or the adaptive test read through Lemma 4.1, and at δ > 0 never weaker than Lemma C.1 at
(2ε, (1 + e^ε)δ).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from ..checks import check_delta, check_epsilon, check_zeta
from .bounds import STATISTICS, Bound, as_bound, prepare_overlaps
from .posterior_tests import largest_rejected, log_dominated_p_value, log_overlap_blocks, log_pmf_from_tails
from .signs import check_m_r

__all__ = ["log_reference_tail", "log_reference_pmf", "reference_log_p_value", "reference_epsilon_lower_bound", "reference_bound"]

#: Added to ε inside t_{ε,δ}: rounding can then only make the test conservative.
_EPS_MARGIN = 1e-9


def _log_minus(log_a, log_b) -> np.ndarray:
    """Elementwise log(a − b) where a > b, −inf elsewhere (a, b ≥ 0 given by their logs)."""
    log_a, log_b = np.broadcast_arrays(np.asarray(log_a, dtype=float), np.asarray(log_b, dtype=float))
    with np.errstate(divide="ignore", invalid="ignore"):
        out = log_a + np.log(-np.expm1(np.minimum(log_b - log_a, 0.0)))
    return np.where(log_a > log_b, out, -np.inf)


def _log_tails(m: int, r: int, epsilon: float, delta: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(log t_{ε,δ}(v), log(1 − t_{ε,δ}(v))) for v = 0..r+1, from log q₀ and log(1 − q₀) (no cancellation)."""
    check_m_r(m, r)
    e = check_epsilon(epsilon) + _EPS_MARGIN
    log_delta = math.log(check_delta(delta)) if delta > 0 else -math.inf
    _, log_t, log_b = log_overlap_blocks(int(m), int(r))
    log_q0, log_1mq0 = log_t - log_t[0], log_b - log_t[0]  # q₀(v) and 1 − q₀(v), v = 0..r+1
    log_rest = _log_minus(log_1mq0, log_delta)              # 1 − δ − q₀ (−inf where ≤ 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_low = np.minimum(np.logaddexp(log_delta, e + log_q0), 0.0)   # δ + e^ε q₀ (capped at 1)
        log_high = np.log(-np.expm1(np.minimum(-e + log_rest, 0.0)))     # 1 − e^{−ε}(1 − δ − q₀)
        log_tail = np.minimum(log_low, log_high)
        # 1 − t = max{1 − δ − e^ε q₀, e^{−ε}(1 − δ − q₀)}, 0 where both are ≤ 0
        log_1md = math.log1p(-delta) if delta > 0 else 0.0
        log_comp = np.maximum(_log_minus(np.full_like(log_q0, log_1md), e + log_q0), -e + log_rest)
    # V ≤ r always and V ≥ 0: the tail is 0 beyond r and 1 at 0 whatever δ
    log_tail[-1], log_comp[-1] = -np.inf, 0.0
    log_tail[0], log_comp[0] = 0.0, -np.inf
    return log_tail, log_comp


def log_reference_tail(m: int, r: int, epsilon: float, delta: float = 0.0) -> np.ndarray:
    """log t_{ε,δ}(v), v = 0..r+1 (t(0) = 1, t(r + 1) = 0)."""
    return _log_tails(m, r, epsilon, delta)[0]


def log_reference_pmf(m: int, r: int, epsilon: float, delta: float = 0.0) -> np.ndarray:
    """log of the law with tail t_{ε,δ} on {0..r} (:func:`.posterior_tests.log_pmf_from_tails`)."""
    return log_pmf_from_tails(*_log_tails(m, r, epsilon, delta))


def reference_log_p_value(value: float, m: int, r: int, L: int, epsilon: float, *, statistic: str = "mean", delta: float = 0.0) -> float:
    """log of an upper bound on P(statistic ≥ value) over L runs under an (ε, δ) unlearning claim."""
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    if isinstance(L, bool) or not isinstance(L, (int, np.integer)) or L < 1:
        raise ValueError(f"L (number of runs) must be an integer >= 1, got {L!r}")
    return log_dominated_p_value(float(value), int(r), int(L), statistic, lambda: _log_tails(m, r, epsilon, delta),
                                 lambda: log_reference_pmf(m, r, epsilon, delta))


def reference_epsilon_lower_bound(overlaps: Sequence[float], m: int, r: int, *, zeta: float = 0.05,
                                  statistic: str = "mean", delta: float = 0.0) -> float:
    """ε_LB of an (ε, δ) unlearning claim against the retrained model: sup{ε : p(ε) ≤ ζ} (0 if ε = 0 is
    not rejected).  Monotone: t_{ε,δ}(v) grows with ε for v ≥ 1."""
    check_m_r(m, r)
    zeta = check_zeta(zeta)
    check_delta(delta)
    v = prepare_overlaps(overlaps, r)
    L = int(v.size)
    value = float(np.mean(v)) if statistic == "mean" else float(np.median(v))
    log_zeta = math.log(zeta)
    return as_bound(largest_rejected(lambda eps: reference_log_p_value(value, m, r, L, eps, statistic=statistic, delta=delta) <= log_zeta))


def reference_bound(overlaps: Sequence[float], m: int, r: int, *, zeta: float = 0.05, statistic: str = "mean",
                    delta: float = 0.0) -> Bound:
    """:func:`reference_epsilon_lower_bound` as a :class:`~.bounds.Bound` (method ``"reference"``): its
    ``lb`` bounds the unlearning ε itself; it says nothing of the induced LDP mechanism, whose ``ldp``
    is NaN."""
    v = prepare_overlaps(overlaps, r)
    lb = reference_epsilon_lower_bound(v, m, r, zeta=zeta, statistic=statistic, delta=delta)
    value = float(np.mean(v)) if statistic == "mean" else float(np.median(v))
    return Bound("epsilon", float("nan"), lb, lb > 0, statistic, value, int(m), int(r), int(v.size), float(zeta),
                 delta=float(delta), method="reference")
