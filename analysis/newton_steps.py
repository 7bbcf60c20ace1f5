"""Seed 2's one- against two-step Newton removal, from a run's Gaussian-unlearning files.

    python analysis/newton_steps.py [RESULTS]      (default: results)

Prints (1) the GED-vs-p slopes of both removals with each noise (the rows of
``tables/gaussian_unlearning_slopes.csv`` with ``newton_steps``), the paper's one-step numbers and
Zou et al.'s claim beside them; (2) the GED-vs-m slopes of both removals (the primary analysis: the
unclipped log-loss) beside the paper's ≈ 1.4 (Gaussian) and ≈ 0.24 (ℓ2-Laplace); (3) for every m of
the GED-vs-m grid, κ·r₁ = r₂/r₁ (the factor by
which the second step shrinks the noise radius; the bound r₂ = κr₁² contracts only where it is
below 1), the Newton errors ‖β̂⁽ᵀ⁾ − β̂_{\\M}‖ of both removals and the ratio of their mean GEDs.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from unlearn_audit.gaussian_unlearning.experiments import slopes_table, with_variants

PAPER = {"gaussian": "-0.47 / -0.54 / -0.51 (m = 1, 5, 10)", "laplace": "0.03 / -0.03 / -0.01 (one step; two suffice)"}
PAPER_M = {"gaussian": "~1.4", "laplace": "~0.24"}


def main() -> None:
    results = Path(sys.argv[1] if len(sys.argv) > 1 else "results") / "gaussian_unlearning"
    raw = {name: with_variants(pd.read_parquet(results / f"{name}.parquet")) for name in ("ged_vs_p", "ged_vs_m")}
    raw = {k: v[v["prob_clip"].isna()] if "prob_clip" in v.columns else v for k, v in raw.items()}
    pd.set_option("display.width", 200)
    table = slopes_table(raw)
    slopes = table[(table["experiment"] == "ged_vs_p") & (table["n_over_p"] == 1.0)]
    print("== GED vs p at n = p: log-log slope (standard error across replications)")
    for (steps, noise), rows in slopes.groupby(["newton_steps", "noise"]):
        cells = ", ".join(f"m = {m}: {s:.3f} ({se:.3f})" for m, s, se in zip(rows["m"], rows["slope"], rows["slope_se"]))
        print(f"  {steps} step(s), {noise:8s} {cells}   paper: {PAPER[noise] if steps == 1 else '-'}")
    by_m = table[(table["experiment"] == "ged_vs_m") & (table["n_over_p"] == 1.0)]
    print("== GED vs m at n = p (unclipped log-loss): log-log slope (standard error)")
    for (steps, noise), rows in by_m.groupby(["newton_steps", "noise"]):
        cells = ", ".join(f"p = {p}: {s:.3f} ({se:.3f})" for p, s, se in zip(rows["p"], rows["slope"], rows["slope_se"]))
        print(f"  {steps} step(s), {noise:8s} {cells}   paper: {PAPER_M[noise] if steps == 1 else '-'}")
    m_grid = raw["ged_vs_m"]
    m_grid = m_grid[m_grid["n_over_p"] == 1.0]
    keys = ["noise", "p", "m"]
    one = m_grid[m_grid["newton_steps"] == 1].groupby(keys)[["ged", "r", "newton_error"]].mean()
    two = m_grid[m_grid["newton_steps"] == 2].groupby(keys)[["ged", "r", "newton_error"]].mean()
    frame = pd.DataFrame({
        "kappa_r1": two["r"] / one["r"],
        "error_1": one["newton_error"],
        "error_2": two["newton_error"],
        "ged_1": one["ged"],
        "ged_2": two["ged"],
        "ged_2_over_1": two["ged"] / one["ged"],
    }).reset_index()
    print("== GED vs m at n = p: where the second step pays (kappa r1 < 1)")
    print(frame.to_string(index=False, float_format="{:.4g}".format))


if __name__ == "__main__":
    main()
