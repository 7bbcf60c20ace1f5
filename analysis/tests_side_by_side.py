"""Every test of the overlaps side by side on a finished run's pre-registered cells (docs/bounds.md):
Theorem 4.2, exact, mgf and adaptive for the mean, and the perfect-guess count, each at level ζ on
the same overlaps.

    python analysis/tests_side_by_side.py [RESULTS_DIR]

For each experiment with a ``bounds.parquet``, the reported row's cell (r, statistic, score) and its
overlaps from ``overlaps.parquet``; prints ε_LB (= ε_LDP / 2) of each test and which one the
experiment pre-registered.  This is a comparison of tests, not an audit: only the pre-registered
test's bound is the experiment's claim (README, "One test, one level").  Experiments audited at a
δ > 0 (the certified ones) show Theorem 4.2 with Lemma C.1 only: the other tests hold at δ = 0.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from unlearn_audit import epsilon_lower_bound

TESTS = [("theorem4.2", "mean"), ("exact", "mean"), ("mgf", "mean"), ("adaptive", "mean"), ("exact", "perfect")]


def main(argv: list[str]) -> int:
    results = Path(argv[1] if len(argv) > 1 else "results")
    paths = sorted(results.glob("*/bounds.parquet"))
    if not paths:
        print(f"error: no <experiment>/bounds.parquet under {results}; give a finished run's results directory", file=sys.stderr)
        return 2
    rows = []
    for path in paths:
        bounds = pd.read_parquet(path)
        reported = bounds[bounds.role.isin(["preregistered", "selected"])]
        overlaps_path = path.parent / "overlaps.parquet"
        if reported.empty or not overlaps_path.exists():
            continue
        b = reported.iloc[0]
        ov = pd.read_parquet(overlaps_path)
        v = ov[(ov.r == b.r) & (ov.score == b.score) & (ov.auditor == b.auditor)].sort_values("run").overlap.to_numpy()
        row = {"experiment": path.parent.name, "m": int(b.m), "r": int(b.r), "L": int(v.size), "delta": f"{float(b.delta):g}",
               "preregistered": f"{b.test}/{b.statistic}"}
        for method, statistic in TESTS:
            if float(b.delta) > 0:  # the run's own bound of the (ε, δ) unlearning claim; no other test applies
                row[f"{method}/{statistic}"] = float(b.epsilon_lb) if method == "theorem4.2" else float("nan")
                continue
            row[f"{method}/{statistic}"] = epsilon_lower_bound(v, int(b.m), int(b.r), zeta=float(b.zeta), statistic=statistic,
                                                              method=method).epsilon_lb
        rows.append(row)
    with pd.option_context("display.width", 250, "display.max_rows", 500, "display.float_format", "{:.3f}".format):
        print(pd.DataFrame(rows).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
