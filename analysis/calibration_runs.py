"""What fewer calibration runs Γ would claim, recomputed from a finished run's own scores (Alg. 2).

    python analysis/calibration_runs.py [RESULTS_DIR] [--gammas 10 20 30]

For every batchwise experiment of the run (its resolved ``config.yaml`` in RESULTS_DIR), fits the
per-example Gaussians on calibration runs 0..Γ'−1 only and audits the same evaluation runs at the
experiment's pre-registered cell and test, for each Γ' ≤ the run's Γ.  Calibration run k's sign
vector, base model and unlearning randomness come from streams named by (design, phase, k) and
(experiment, phase, k) alone, so runs 0..Γ'−1 of a Γ run are exactly the calibration runs of a
Γ' run and the evaluation runs are the same: each column is what the workflow would claim with
``calibration_runs: Γ'`` (up to the metadata column ``sign_index``).  A measurement of the power
that calibration runs buy, not an audit: only the configured Γ's bound is the experiment's claim.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import pandas as pd
import yaml

from unlearn_audit import schemas
from unlearn_audit.auditors.batchwise import fit_table
from unlearn_audit.auditors.tables import audit_tables
from unlearn_audit.io import read_concat, read_parquet
from unlearn_audit.pipeline.plan.paths import finished_run_files
from unlearn_audit.pipeline.plan import preregistered_cell


def claims(results: Path, experiment: str, exp_cfg: dict, design_cfg: dict, fit_options: dict, zeta: float,
           gammas: list[int]) -> dict[int, float]:
    """{Γ': the pre-registered claim ε_LB with calibration runs 0..Γ'−1}; NaN where Γ' runs leave an
    example with fewer than two runs in or out of the forget set (no Gaussian can be fitted)."""
    scores = read_concat([f for phase in ("calib", "eval") for f in finished_run_files(results, experiment, phase, "scores.parquet")], schemas.SCORES)
    signs = read_parquet(results / "designs" / exp_cfg["design"] / "signs.parquet", schemas.SIGNS)
    calib, evaluation = scores[scores.phase == "calib"], scores[scores.phase == "eval"]
    cell = preregistered_cell(exp_cfg)
    out = {}
    for g in gammas:
        try:
            fitted = fit_table(calib[calib.run < g], experiment, **fit_options)
        except ValueError:  # an example never (or once) in or out of the forget set among the Γ' runs
            out[g] = float("nan")
            continue
        _, bounds = audit_tables(fitted, evaluation, signs[signs.phase == "eval"], int(design_cfg["m"]), exp_cfg["r"],
                                 zeta=zeta, primary=cell, selection=exp_cfg.get("selection", "preregistered"))
        reported = bounds[bounds.role.isin(["preregistered", "selected"])].iloc[0]
        out[g] = float(reported.epsilon_lb_test)
    return out


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="?", default="results")
    ap.add_argument("--gammas", type=int, nargs="+", default=[10, 20, 30])
    args = ap.parse_args(argv)
    results = Path(args.results)
    config_path = results / "config.yaml"
    if not config_path.exists():
        print(f"error: {config_path}: no such file; give a finished run's results directory", file=sys.stderr)
        return 2
    cfg = yaml.safe_load(config_path.read_text())
    nn = cfg["nn"]
    rows = []
    for experiment, exp_cfg in nn["experiments"].items():
        design_cfg = nn["designs"][exp_cfg["design"]]
        if design_cfg.get("auditor", "batchwise") != "batchwise" or not (results / experiment / "bounds.parquet").exists():
            continue
        gammas = [g for g in args.gammas if g <= int(design_cfg["calibration_runs"])]
        got = claims(results, experiment, exp_cfg, design_cfg, dict(nn.get("fit", {})), float(cfg["zeta"]), gammas)
        cell = preregistered_cell(exp_cfg)
        rows.append({"experiment": experiment, "cell": f"r={cell.r} {cell.statistic}/{cell.score} {cell.test}",
                     "run's Γ": int(design_cfg["calibration_runs"]), **{f"Γ={g}": v for g, v in got.items()}})
    with pd.option_context("display.width", 250, "display.max_rows", 500, "display.float_format", "{:.2f}".format):
        print(pd.DataFrame(rows).to_string(index=False))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
