"""Two finished runs' pre-registered cells side by side: before → after, experiment by experiment.

    python analysis/compare_runs.py RESULTS_BEFORE RESULTS_AFTER

For every experiment with a ``bounds.parquet`` in either run: its reported row's cell (r, test) and
bounds (the claim ``epsilon_lb_test`` first, Theorem 4.2's ``epsilon_lb`` beside it, ``mu_lb``) in each run, and the
evaluation runs' mean test accuracy.  An experiment of one run only shows empty cells for the other
(a design the other run does not have).  For reading a change of the default, not an audit.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from unlearn_audit.pipeline.plan.paths import finished_run_files


def reported(results: Path) -> pd.DataFrame:
    """experiment → r, test, claim, epsilon_lb_theorem42, mu_lb, test_acc of its reported row."""
    rows = []
    for path in sorted(results.glob("*/bounds.parquet")):
        b = pd.read_parquet(path)
        r = b[b.role.isin(["preregistered", "selected"])]
        if r.empty:
            continue
        r = r.iloc[0]
        metrics = finished_run_files(results, path.parent.name, "eval", "metrics.parquet")
        acc = float(pd.concat([pd.read_parquet(p) for p in metrics]).test_acc.mean()) if metrics else np.nan
        rows.append({"experiment": path.parent.name, "r": int(r.r), "test": str(r.get("test", "theorem4.2")),  # bounds written before the column: Theorem 4.2's
                     "claim": float(r.get("epsilon_lb_test", r.epsilon_lb)), "epsilon_lb_theorem42": float(r.epsilon_lb), "mu_lb": float(r.mu_lb),
                     "test_acc": acc})
    return pd.DataFrame(rows).set_index("experiment")


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print("usage: python analysis/compare_runs.py RESULTS_BEFORE RESULTS_AFTER", file=sys.stderr)
        return 2
    before, after = Path(argv[1]), Path(argv[2])
    for d in (before, after):
        if not (d / "config.yaml").exists():
            print(f"error: {d}/config.yaml not found: give two finished runs' results directories", file=sys.stderr)
            return 2
    table = pd.merge(reported(before), reported(after), left_index=True, right_index=True, how="outer", suffixes=("_before", "_after"))
    cols = [f"{c}_{w}" for c in ("r", "test", "claim", "epsilon_lb_theorem42", "mu_lb", "test_acc") for w in ("before", "after")]
    with pd.option_context("display.width", 300, "display.max_rows", 500, "display.max_columns", 20, "display.float_format", "{:.3f}".format):
        print(table[cols].to_string())
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
