"""Workflow steps computed from the statistics alone; one function per rule.

* :func:`attainable_bounds` (rule ``attainable_bounds``) — App. F.1/F.3 ceilings.
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable, Mapping

import pandas as pd

from ..report import write_table
from ..stats.perfect_prediction import attainable_bounds as attainable_records

__all__ = ["attainable_bounds"]


def attainable_bounds(grid: Iterable[Mapping[str, int]], L: int, zeta: float, table_path) -> None:
    """Rule ``attainable_bounds``: the App. F table of bounds under perfect prediction."""
    frame = pd.DataFrame(attainable_records(grid, L, zeta))
    write_table(frame, Path(table_path).with_suffix(""), caption=f"Bounds from perfect prediction (all L = {L} runs with V = r), zeta = {zeta}")
