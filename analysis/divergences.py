"""Recompute, from a finished run's outputs, the measured causes behind the claims of
analysis/claims.py that print DIVERGES (docs/results.md, written from a run).

    python analysis/divergences.py [RESULTS_DIR]        (default: results)

Torch-free: it reads the Parquet files the workflow wrote (bounds, overlaps, scores, metrics) and
the run's config snapshot, and prints, per neural-network experiment of Tables 1a, 1b, 4 and 7:

* its ε_LB (the claim: the pre-registered test's, then Theorem 4.2's and the exact test's) beside its design's controls (No unlearning: the
  trained model as is; Retrain: A(D_r)), the guess fraction at that r (mean overlap / r) and the accuracies;
* the membership signal in its evaluation scores: the mean in-minus-out gap of the logit score
  per example, the run-to-run spread of that score, and their ratio d' (median over examples);
* the median logit score φ of the candidate pool (the class-6 logits on the adversarial split);
* for Table 4, the relative difference between the mean and the median claims at every r.

Each DIVERGES cause of analysis/claims.py names the lines of this output it rests on.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from unlearn_audit.auditors import membership_signal
from unlearn_audit.pipeline.plan.paths import finished_run_files
from unlearn_audit.stats.guesses import guess_fraction


def _read(path: Path) -> pd.DataFrame | None:
    return pd.read_parquet(path) if path.exists() else None


def _signal(scores: pd.DataFrame) -> dict[str, float]:
    """In/out gap, run-to-run spread and d' of the logit score over the evaluation runs
    (:func:`unlearn_audit.auditors.membership_signal`), and the median φ."""
    sig = membership_signal(scores[scores.phase == "eval"])
    return {"gap": sig["gap"], "spread": sig["spread"], "d_prime": sig["d_prime"], "median_phi": sig["median_score"]}


def _reported(bounds: pd.DataFrame) -> pd.Series:
    rows = bounds[bounds.role.isin(["preregistered", "selected"])]
    return rows.iloc[0]


def experiment_rows(results: Path) -> pd.DataFrame:
    """One row per batchwise neural-network experiment of the run at ``results``."""
    config = yaml.safe_load((results / "config.yaml").read_text())
    experiments = config.get("nn", {}).get("experiments", {})
    rows = []
    for name, exp in experiments.items():
        bounds = _read(results / name / "bounds.parquet")
        if bounds is None or "r" not in exp:
            continue
        b = _reported(bounds)
        overlaps = _read(results / name / "overlaps.parquet")
        right = np.nan
        if overlaps is not None:
            sub = overlaps[(overlaps.r == b.r) & (overlaps.score == b.score)]
            right = guess_fraction(sub.overlap.to_numpy(), int(b.r))[0] if len(sub) else np.nan
        scores = pd.concat([pd.read_parquet(p) for p in finished_run_files(results, name, "eval", "scores.parquet")], ignore_index=True)
        metrics = pd.concat([pd.read_parquet(p) for p in finished_run_files(results, name, "eval", "metrics.parquet")], ignore_index=True)
        rows.append({"experiment": name, "design": exp["design"], "method": exp.get("label", exp["method"]), "r": int(b.r),
                     "epsilon_lb_claim": float(b.get("epsilon_lb_test", b.epsilon_lb)), "epsilon_lb_theorem42": float(b.epsilon_lb),
                     "epsilon_lb_exact": float(b.epsilon_lb_exact), "guess_fraction": right,
                     **{k: float(metrics[k].mean()) for k in ("retain_acc", "forget_acc", "test_acc")}, **_signal(scores)})
    return pd.DataFrame(rows)


def mean_vs_median(results: Path) -> pd.DataFrame:
    """Table 4's cells: the mean and median claims (logit score, the pre-registered test) at every r, and their relative difference."""
    path = results / "tables" / "table4.csv"
    if not path.exists():
        return pd.DataFrame()
    t = pd.read_csv(path)
    pair = ["epsilon_lb_claim_mean", "epsilon_lb_claim_median"]
    t["relative_difference"] = (t[pair[0]] - t[pair[1]]).abs() / t[pair].max(axis=1)
    return t[["method", "split", "r", "test", *pair, "relative_difference"]]


def main(argv: list[str]) -> int:
    results = Path(argv[1] if len(argv) > 1 else "results")
    if not (results / "config.yaml").exists():
        print(f"error: {results}/config.yaml not found: give the results directory of a finished run", file=sys.stderr)
        return 2
    pd.set_option("display.width", 200, "display.max_columns", 30, "display.max_rows", 200)
    rows = experiment_rows(results)
    print("# Pre-registered bounds beside the controls, signal in the evaluation scores (logit score)")
    print(rows.round(3).to_string(index=False))
    table4 = mean_vs_median(results)
    if len(table4):
        print("\n# Table 4: mean vs median claims")
        print(table4.round(3).to_string(index=False))
        print(f"largest relative difference: {table4.relative_difference.max():.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
