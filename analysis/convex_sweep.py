"""App. H.4's sweeps from the config, and the numbers the config comments quote about them.

    python analysis/convex_sweep.py [CONFIG]      (default: config/config.yaml)

Prints, for each sweep of ``convex.sweep.grids`` (the rows the workflow writes to
``tables/appendix_h4.csv``), its largest ρ = ‖w̄ − ŵ_r‖/γ and the configured point's, and for the cubic
loss also ρ at the paper's text's M = 0.005 (B = 2.5, R = 10, λ0 = 0.2), whose Table 2a σ column only
M = 0.001 reproduces.  Deterministic (the logistic construction's data seed is the config's).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import yaml

from unlearn_audit.convex.experiments import CubicNewtonParams, build_cubic_newton
from unlearn_audit.pipeline.convex import sweep_frame

REPO = Path(__file__).resolve().parents[1]


def main() -> None:
    config = yaml.safe_load(Path(sys.argv[1] if len(sys.argv) > 1 else REPO / "config" / "config.yaml").read_text())
    convex = config["convex"]
    frame = sweep_frame(convex["sweep"]["grids"], convex["mechanisms"])
    pd.set_option("display.width", 200)
    pd.set_option("display.float_format", "{:.4g}".format)
    columns = [c for c in frame.columns if c not in ("mechanism", "distance", "gamma", "reason")]
    for name, rows in frame.groupby("sweep", sort=False):
        shown = (rows if len(rows) <= 10 else rows[rows.largest | rows.configured]).dropna(axis=1, how="all")
        print(f"== {name}: {len(rows)} points, {int(rows.feasible.sum())} feasible")
        print(shown[[c for c in columns if c in shown.columns]].to_string(index=False))
    paper_text = build_cubic_newton(CubicNewtonParams(lam=0.2, M=0.005, B=2.5, R=10.0)).rho
    print(f"cubic at the text's M = 0.005 (B = 2.5, R = 10, lam = 0.2): rho = {paper_text:.4f}")


if __name__ == "__main__":
    main()
