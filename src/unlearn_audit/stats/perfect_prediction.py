"""Maximum attainable bounds under perfect prediction (paper App. F.1 and F.3).

With all L runs at overlap V = r, Theorem 4.2 gives the largest ε_LB any auditor can certify
at (m, r, L, ζ): App. F.1 reports 4.00 at m = r = 6 and 67.84 at m = r = 100 (L = 10,
ζ = 0.05), App. F.3 40.83 at m = 100, r = 60.  numpy/scipy only.
"""

from __future__ import annotations

from typing import Iterable, Mapping

from .bounds import STATISTICS, EpsilonBound, unlearning_epsilon_lower_bound

__all__ = ["perfect_prediction_bound", "attainable_bounds"]


def perfect_prediction_bound(m: int, r: int, L: int, *, zeta: float = 0.05, statistic: str = "mean", delta: float = 0.0) -> EpsilonBound:
    """The Theorem 4.2 bound of L perfect runs (every V = r): the ceiling of the cell (m, r, L).

    ``delta`` is the δ of an (ε, δ) unlearning claim audited by Lemma C.1
    (:func:`~.bounds.unlearning_epsilon_lower_bound`); at δ = 0 this is Theorem 4.2 exactly."""
    return unlearning_epsilon_lower_bound([int(r)] * int(L), int(m), int(r), zeta=zeta, statistic=statistic, delta=delta)


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
