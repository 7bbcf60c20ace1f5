"""What ``unlearn-audit size --scores`` predicts beside what the audits of a finished run claimed
(docs/cli.md, "Sizing an audit before running it").

    python analysis/sizing_check.py [RESULTS_DIR] [--designs digits_uniform digits_adversarial shakespeare]
                                    [--simulations 40] [--seed 0] [--no-raw]

For every experiment of the given designs (the resolved ``config.yaml`` in RESULTS_DIR; the
default's Table 1b and Table 1a designs), the pilot is the experiment's own calibration runs'
scores: their per-example d′ with its sampling noise deconvolved and their batch correlation
(:func:`~unlearn_audit.auditors.signal.pilot_signal`) size the experiment's own audit (m, B, Γ, L
of its design; r, statistic, score and test of its ``preregistered`` bounds row) exactly as ``size
--scores`` does (:func:`~unlearn_audit.auditors.sizing.expected_bound`).  Printed per experiment:
the root mean square of the measured and of the deconvolved d′ (``rms_d_measured``, ``rms_d``), the
batch correlation ``rho``, the simulation's ``redraws``, the predicted median [q10, q90], the
realised claim (that row's ``epsilon_lb_test``), whether the median is within ±30 % or ±0.5 of it,
and ``raw``, the median predicted from the measured d′ as they are and independent examples (ρ = 0):
the noise read as signal, as ``size --scores`` did before it deconvolved the pilot (``--no-raw``
skips it).  One realised claim is one draw of an audit's bound, so even an exact model of the audit
misses the tolerance at times: ``exact_hit`` is the share of the simulated audits within the tolerance
of their own median, what an exact model would score against one audit, and ``pit`` the share of
simulated bounds below the realised claim (ties counted half): near 0 or 1 where the model is off.
The summary sets the experiments within the tolerance beside the count an exact model would give
(the sum of ``exact_hit``, with the 5th-95th percentiles of that count), and the claims within their
[q10, q90] (an exact model: 80 %) and below the predicted median (an exact model: half).  An experiment whose runs have no run-to-run spread (Retrain: every run scores one
retrained model) has no d′ and no prediction.
The pilot is the audit's own calibration runs, so the check tests the simulation's model of the
audit, not how well a pilot of other runs foresees it.  Torch-free.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from unlearn_audit.auditors.signal import pilot_signal
from unlearn_audit.auditors.sizing import expected_bound
from unlearn_audit.pipeline.plan.paths import finished_run_files

DESIGNS = ("digits_uniform", "digits_adversarial", "shakespeare")
#: The tolerance of a prediction: within RELATIVE of the realised claim, or within ABSOLUTE.
RELATIVE, ABSOLUTE = 0.30, 0.5


def within(predicted: float, claim: float) -> bool:
    """The predicted median within ±30 % or ±0.5 of the realised claim."""
    return abs(predicted - claim) <= max(ABSOLUTE, RELATIVE * claim)


def preregistered(results: Path, experiment: str) -> pd.Series:
    """The experiment's ``preregistered`` BOUNDS row: its cell (m, r, L, statistic, score, test) and claim."""
    bounds = pd.read_parquet(results / experiment / "bounds.parquet")
    return bounds[bounds.role == "preregistered"].iloc[0]


def check(results: Path, experiment: str, design: dict, simulations: int, seed: int, raw: bool) -> dict:
    """One experiment's row: its pilot's signal, the predicted and the realised claim."""
    cell = preregistered(results, experiment)
    files = finished_run_files(results, experiment, "calib", "scores.parquet")
    pilot = pilot_signal(pd.concat([pd.read_parquet(f) for f in files], ignore_index=True), str(cell.score))
    row = {"experiment": experiment, "m": int(cell.m), "B": int(design["batch_size"]), "r": int(cell.r), "pilot_runs": len(files),
           "claim": float(cell.epsilon_lb_test)}
    if pilot.d_prime.size == 0:
        return row
    size = dict(m=int(cell.m), r=int(cell.r), calibration_runs=int(design["calibration_runs"]), evaluation_runs=int(cell.L),
                batch_size=int(design["batch_size"]), batch_correlation=pilot.batch_correlation, test=str(cell.test),
                statistic=str(cell.statistic), zeta=float(cell.zeta), simulations=simulations, seed=seed)
    res = expected_bound(pilot.d_prime, **size)
    row |= {"rms_d_measured": float(np.sqrt(np.mean(pilot.measured ** 2))), "rms_d": float(np.sqrt(np.mean(pilot.d_prime ** 2))),
            "rho": pilot.batch_correlation, "median": res.median, "q10": res.q10, "q90": res.q90, "redraws": res.redraws,
            "within": within(res.median, row["claim"]), "exact_hit": float(np.mean([within(res.median, b) for b in res.bounds])),
            "pit": float(np.mean(res.bounds < row["claim"]) + 0.5 * np.mean(res.bounds == row["claim"]))}
    if raw:
        row["raw"] = expected_bound(pilot.measured, **(size | {"batch_correlation": 0.0})).median
    return row


def _git(*args: str) -> str:
    """The output of a git command in this checkout ("" where git fails)."""
    repo = Path(__file__).resolve().parents[1]
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True).stdout.strip()


def _cpu() -> str:
    """The CPU's model name (Linux), else "unknown CPU"."""
    info = Path("/proc/cpuinfo")
    names = [line.split(":", 1)[1].strip() for line in info.read_text().splitlines() if line.startswith("model name")] if info.exists() else []
    return names[0] if names else "unknown CPU"


def header(results: Path, simulations: int, seed: int) -> str:
    """The output's first line: the run checked (its provenance) and the machine and checkout that checked it."""
    provenance = json.loads((results / "provenance.json").read_text()) if (results / "provenance.json").exists() else {}
    run_commit = provenance.get("workflow", {}).get("commit", "unknown")[:7]
    here = (_git("rev-parse", "--short", "HEAD") or "unknown") + (" with uncommitted changes" if _git("status", "--porcelain", "--untracked-files=no") else "")
    cpu = _cpu()
    return (f"# python analysis/sizing_check.py on the results of a run of {run_commit}, checked at {here} on an {cpu} "
            f"({os.cpu_count()} cores); {simulations} simulated audits per experiment, seed {seed}; pilot: each experiment's own calibration runs")


def calibration(judged: pd.DataFrame, seed: int) -> list[str]:
    """How the hits, the [q10, q90] coverage and the side of the median compare with an exact model's (module docstring)."""
    hits = np.random.default_rng(seed).random((10_000, len(judged))) < judged.exact_hit.to_numpy(float)
    lo, hi = np.quantile(hits.sum(axis=1), [0.05, 0.95])
    inside = int(((judged.claim >= judged.q10) & (judged.claim <= judged.q90)).sum())
    below = int((judged.claim < judged["median"]).sum())
    return [f"were the simulation's model exact, {judged.exact_hit.sum():.1f} of {len(judged)} would be within the tolerance "
            f"(5th-95th percentile {lo:.0f}-{hi:.0f}): one audit's bound is one draw",
            f"realised claim within its predicted [q10, q90]: {inside} of {len(judged)} (an exact model: 80 %, {0.8 * len(judged):.0f}); "
            f"below the predicted median: {below} of {len(judged)} (an exact model: half; ties at a ceiling count as not below)"]


def overshoot(table: pd.DataFrame, design_of: dict) -> list[str]:
    """Per design, predicted / realised − 1 over its experiments with a claim above 0.5."""
    lines = []
    for design in dict.fromkeys(design_of.values()):
        sub = table[(table.experiment.map(design_of) == design) & (table.claim > ABSOLUTE) & table["median"].notna()]
        if len(sub):
            ratio = 100 * (sub["median"] / sub.claim - 1)
            lines.append(f"{design}: predicted / realised - 1 over its {len(sub)} experiments with a claim > {ABSOLUTE}: "
                         f"median {ratio.median():+.0f} %, from {ratio.min():+.0f} % to {ratio.max():+.0f} %")
    return lines


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results", nargs="?", default="results")
    ap.add_argument("--designs", nargs="+", default=list(DESIGNS))
    ap.add_argument("--simulations", type=int, default=40)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-raw", dest="raw", action="store_false", help="skip the prediction from the measured d' as they are, rho = 0")
    args = ap.parse_args(argv)
    results = Path(args.results)
    if not (results / "config.yaml").exists():
        print(f"error: {results}/config.yaml not found: give the results directory of a finished run", file=sys.stderr)
        return 2
    nn = yaml.safe_load((results / "config.yaml").read_text())["nn"]
    design_of = {name: e["design"] for name, e in nn["experiments"].items() if e["design"] in args.designs}
    rows = [check(results, name, nn["designs"][design], args.simulations, args.seed, args.raw) for name, design in design_of.items()
            if (results / name / "bounds.parquet").exists()]
    table = pd.DataFrame(rows)
    for col in ("rms_d_measured", "rms_d", "rho", "median", "q10", "q90", "redraws", "within", "exact_hit", "pit", "raw"):
        if col not in table:
            table[col] = np.nan
    table = table.astype({"redraws": "Int64"})
    shown = table.assign(predicted=[f"{m:.2f} [{a:.2f}, {b:.2f}]" if np.isfinite(m) else "no d' (no run-to-run spread)"
                                    for m, a, b in zip(table["median"], table.q10, table.q90)],
                         within=[("yes" if w else "NO") if isinstance(w, (bool, np.bool_)) else "-" for w in table.within])
    cols = ["experiment", "m", "B", "r", "pilot_runs", "rms_d_measured", "rms_d", "rho", "redraws", "predicted", "claim", "within", "exact_hit", "pit"]
    print(header(results, args.simulations, args.seed))
    print(shown[cols + (["raw"] if args.raw else [])].to_string(index=False, float_format=lambda x: f"{x:.2f}", na_rep="-"))
    judged = table[table["median"].notna()]
    print(f"within ±{RELATIVE:.0%} or ±{ABSOLUTE} of the realised claim: {int(judged.within.sum())} of {len(judged)} experiments "
          f"with a prediction" + (f" (raw, the measured d' as they are: {int(sum(map(within, judged.raw, judged.claim)))})" if args.raw else ""))
    for line in calibration(judged, args.seed):
        print(line)
    for line in overshoot(table, design_of):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
