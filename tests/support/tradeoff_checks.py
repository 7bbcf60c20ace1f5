"""Checks of a trade-off figure's outputs (pipeline/tradeoff.py): its files, and that every row of
its CSV is the stats curve of its parameters."""

from pathlib import Path

import numpy as np
import pandas as pd

from unlearn_audit.pipeline import tradeoff
from unlearn_audit.stats.tradeoff import dp_tradeoff, gdp_tradeoff


def check_curves(csv: pd.DataFrame) -> None:
    """Every row of a figure's CSV is the stats function of its (μ) or (ε, δ) at its α."""
    for (curve, form, mu, eps, delta), rows in csv.groupby(["curve", "form", "mu", "epsilon", "delta"], dropna=False):
        a, b = rows.alpha.to_numpy(), rows.beta.to_numpy()
        if form == "gdp":
            assert np.allclose(b, gdp_tradeoff(a, mu), rtol=1e-12, atol=1e-15), (curve, mu)
        elif form == "dp":
            assert np.allclose(b, dp_tradeoff(a, eps, delta), rtol=1e-12, atol=1e-15), (curve, eps, delta)
        else:
            assert curve == "audited_point" and len(rows) >= 1


def figure_outputs(stem: Path) -> pd.DataFrame:
    for ext in ("png", "pdf", "csv"):
        assert stem.with_suffix(f".{ext}").stat().st_size > 1000, ext
    csv = pd.read_csv(stem.with_suffix(".csv"))
    assert list(csv.columns) == tradeoff.CURVE_COLUMNS
    check_curves(csv)
    return csv
