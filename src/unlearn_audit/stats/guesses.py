"""Scale-free readings of an audit's overlaps, printed beside its ε (README, "Reading a table").

An ε_LB depends on the audit's size (m, r, L) as much as on the algorithm: the same guesses give a
larger bound at a larger r, and every size has its ceiling (App. F).  Two numbers read the same
overlaps V (one per evaluation run) without that dependence:

* :func:`guess_fraction` — the mean share V / r of the r guesses that were right, with a t-interval
  over the L runs: 1/2 is what a guess independent of S scores on average (Section 4), 1 is
  perfect prediction;
* :func:`theorem42_at_size` — an extrapolation, not a bound of this audit: Theorem 4.2's ε_LB
  (Eq. 1, mean) had the same fraction of guesses been right in an audit of the paper's size
  (m, r), V' = round(V / r · r'), at the same ζ and L.

numpy and scipy only.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from scipy.special import stdtrit

from ..checks import check_int
from .bounds import epsilon_lower_bound, prepare_overlaps

__all__ = ["guess_fraction", "theorem42_at_size"]


def guess_fraction(overlaps: Sequence[float], r: int, level: float = 0.95) -> tuple[float, float, float]:
    """(mean, low, high) of V / r over the runs: the mean fraction of right guesses and its two-sided
    ``level`` t-interval over the L runs, clipped to [0, 1] (low and high NaN for one run)."""
    r = check_int(r, "r", 1)
    fractions = prepare_overlaps(overlaps, r) / r
    mean = float(fractions.mean())
    if fractions.size < 2:
        return mean, math.nan, math.nan
    half = float(stdtrit(fractions.size - 1, 0.5 + level / 2)) * float(fractions.std(ddof=1)) / math.sqrt(fractions.size)
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def theorem42_at_size(overlaps: Sequence[float], r: int, m_target: int, r_target: int, zeta: float, statistic: str = "mean") -> float:
    """Theorem 4.2's ε_LB (halved, Lemma 4.1) of the overlaps rescaled to guess budget ``r_target`` at
    ``m_target`` candidates, V' = round(V / r · r_target), at level ``zeta`` over the same L runs: the
    bound the observed fractions of right guesses would give at that size (an extrapolation)."""
    v = prepare_overlaps(overlaps, int(r))
    rescaled = np.rint(v / int(r) * int(r_target))
    return epsilon_lower_bound(rescaled, int(m_target), int(r_target), zeta=zeta, statistic=statistic).epsilon_lb
