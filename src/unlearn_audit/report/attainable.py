"""Maximum attainable bounds under perfect prediction (paper App. F.1 and F.3)."""

from __future__ import annotations

from typing import Iterable, Mapping

import pandas as pd

from ..bounds import epsilon_lower_bound

__all__ = ["attainable_bounds_table"]


def attainable_bounds_table(grid: Iterable[Mapping[str, int]], L: int, zeta: float) -> pd.DataFrame:
    """ε bounds when all L runs have overlap V = r, for each (m, r) in ``grid``.

    App. F.1: 4.00 at m = r = 6 and 67.84 at m = r = 100 (L = 10, ζ = 0.05); App. F.3: 40.83
    at m = 100, r = 60.  These are the ceilings of Theorem 4.2 at the given (m, r, L).
    """
    rows = []
    for cell in grid:
        m, r = int(cell["m"]), int(cell["r"])
        row = {"m": m, "r": r, "L": int(L), "zeta": float(zeta)}
        for statistic in ("mean", "median"):
            res = epsilon_lower_bound([r] * L, m, r, zeta=zeta, statistic=statistic)
            row[f"epsilon_ldp_{statistic}"] = res.epsilon_ldp
            row[f"epsilon_lb_{statistic}"] = res.epsilon_lb
        rows.append(row)
    return pd.DataFrame(rows)
