"""The statistics-only rule's step (pipeline/statistics.py): the App. F table it writes."""

from __future__ import annotations

import pandas as pd

from unlearn_audit.pipeline.statistics import attainable_bounds
from unlearn_audit.stats.perfect_prediction import perfect_prediction_bound


def test_attainable_bounds_writes_one_row_per_cell_in_three_formats(tmp_path):
    attainable_bounds([{"m": 6, "r": 6}, {"m": 100, "r": 60}], L=10, zeta=0.05, table_path=tmp_path / "tables" / "attainable_bounds.csv")
    table = pd.read_csv(tmp_path / "tables" / "attainable_bounds.csv")
    assert table[["m", "r"]].values.tolist() == [[6, 6], [100, 60]]
    assert table.epsilon_ldp_mean.round(2).tolist() == [4.00, 40.83]  # the shared test run's numbers (.test/all.yaml)
    assert table.epsilon_ldp_mean.iloc[0] == perfect_prediction_bound(6, 6, 10, zeta=0.05).epsilon_ldp
    for ext in ("md", "tex"):
        assert "L = 10" in (tmp_path / "tables" / f"attainable_bounds.{ext}").read_text()
