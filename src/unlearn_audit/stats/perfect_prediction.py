"""Maximum attainable bounds under perfect prediction (paper App. F.1 and F.3).

With all L runs at overlap V = r, Theorem 4.2 gives the largest ε_LB any auditor can certify
at (m, r, L, ζ): App. F.1 reports 4.00 at m = r = 6 and 67.84 at m = r = 100 (L = 10,
ζ = 0.05), App. F.3 40.83 at m = 100, r = 60.  A reported bound that equals its cell's ceiling
(:func:`at_ceiling`) says that every guess was right: it is limited by m, r and L, not by the
algorithm audited.  numpy/scipy only.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import Iterable, Mapping

from .bounds import STATISTICS, Bound, unlearning_epsilon_lower_bound

__all__ = ["CEILING_RTOL", "perfect_prediction_bound", "perfect_prediction_epsilon_lb", "at_ceiling", "attainable_bounds"]

#: Relative tolerance within which a bound counts as equal to its cell's ceiling (:func:`at_ceiling`).
CEILING_RTOL = 1e-9


def perfect_prediction_bound(m: int, r: int, L: int, *, zeta: float = 0.05, statistic: str = "mean", delta: float = 0.0) -> Bound:
    """The Theorem 4.2 bound of L perfect runs (every V = r): the ceiling of the cell (m, r, L).

    ``delta`` is the δ of an (ε, δ) unlearning claim audited by Lemma C.1
    (:func:`~.bounds.unlearning_epsilon_lower_bound`); at δ = 0 this is Theorem 4.2 exactly."""
    return unlearning_epsilon_lower_bound([int(r)] * int(L), int(m), int(r), zeta=zeta, statistic=statistic, delta=delta)


@lru_cache(maxsize=4096)
def _ceiling(m: int, r: int, L: int, zeta: float, statistic: str) -> float:
    return perfect_prediction_bound(m, r, L, zeta=zeta, statistic=statistic).epsilon_lb


def perfect_prediction_epsilon_lb(m: int, r: int, L: int, *, zeta: float = 0.05, statistic: str = "mean") -> float:
    """ε_LB of the cell (m, r, L) at level ζ when all L runs guess all r batches right (δ = 0):
    the largest Theorem 4.2 bound the cell can give, whatever the algorithm (cached)."""
    return _ceiling(int(m), int(r), int(L), float(zeta), str(statistic))


def at_ceiling(epsilon_lb: float, ceiling: float, *, rtol: float = CEILING_RTOL) -> bool:
    """Whether a bound equals its cell's perfect-prediction ceiling (to ``rtol`` relative).

    A ceiling of 0 (the cell cannot reject even with every guess right) marks nothing."""
    epsilon_lb, ceiling = float(epsilon_lb), float(ceiling)
    if not (math.isfinite(epsilon_lb) and math.isfinite(ceiling)) or ceiling <= 0.0:
        return False
    return abs(epsilon_lb - ceiling) <= rtol * ceiling


def attainable_bounds(grid: Iterable[Mapping[str, int]], L: int, zeta: float) -> list[dict]:
    """One record per (m, r) of ``grid``: ``m, r, L, zeta`` and ε_ldp / ε_lb for each statistic."""
    rows = []
    for cell in grid:
        m, r = int(cell["m"]), int(cell["r"])
        row: dict = {"m": m, "r": r, "L": int(L), "zeta": float(zeta)}
        for statistic in STATISTICS:
            res = perfect_prediction_bound(m, r, L, zeta=zeta, statistic=statistic)
            row[f"epsilon_ldp_{statistic}"] = res.epsilon_ldp
            row[f"epsilon_lb_{statistic}"] = res.epsilon_lb
        rows.append(row)
    return rows
