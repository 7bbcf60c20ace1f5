"""From score files to bounds: the data-independent steps of an audit (DESIGN §3 steps 2, 6, 7).

* :func:`sign_table` — every sign vector of a design (calibration and evaluation runs), each
  drawn from its own SeedSequence stream (:mod:`unlearn_audit.seeds`);
* :func:`fit_table` — per-example Gaussian fits from calibration runs **only**;
* :func:`audit_tables` — guesses, overlaps for every r and Theorem 4.2 bounds from
  evaluation runs **only**.

The phase of every row is checked, so a calibration run can never leak into evaluation.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .auditors import GaussianFit, batch_scores, batchwise_overlaps, bounds_table, fit_gaussians
from .seeds import check_phase_separation, seed_sequence
from .signs import sample_sign_vectors

__all__ = ["sign_table", "sign_matrix", "fit_table", "audit_tables", "score_matrix", "SCORE_COLUMNS"]

SCORE_COLUMNS = {"logit": "score_logit", "loss": "score_loss"}


def sign_table(design: str, m: int, n_calib: int, n_eval: int, root_seed: int) -> pd.DataFrame:
    """All sign vectors of a design: Γ calibration runs and L evaluation runs (SIGNS schema)."""
    rows = []
    for phase, count in (("calib", n_calib), ("eval", n_eval)):
        for run in range(count):
            seq = seed_sequence(root_seed, design, "signs", phase, run)
            s = sample_sign_vectors(m, 1, np.random.default_rng(seq))[0]
            rows.append(
                {
                    "design": design,
                    "phase": phase,
                    "run": run,
                    "sign_index": len(rows),
                    "seed": int(seq.generate_state(1, dtype=np.uint64)[0]),
                    "signs": s.astype(np.int8),
                }
            )
    table = pd.DataFrame(rows)
    check_phase_separation(table.loc[table.phase == "calib", "seed"], table.loc[table.phase == "eval", "seed"])
    return table


def sign_matrix(signs: pd.DataFrame, phase: str) -> tuple[np.ndarray, np.ndarray]:
    """(runs, sign vectors (runs, m)) of one phase, sorted by run."""
    sub = signs[signs.phase == phase].sort_values("run")
    return sub["run"].to_numpy(), np.stack([np.asarray(s, dtype=np.int8) for s in sub["signs"]])


def score_matrix(scores: pd.DataFrame, score: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pivot long-format scores of one phase to (runs, examples) arrays.

    Returns (runs, examples, values (R, n), in_forget (R, n)); every run must score the same
    examples.
    """
    col = SCORE_COLUMNS[score]
    values = scores.pivot(index="run", columns="example", values=col).sort_index()
    inside = scores.pivot(index="run", columns="example", values="in_forget").sort_index()
    if values.isna().any().any():
        raise ValueError("score files do not cover the same examples in every run")
    return values.index.to_numpy(), values.columns.to_numpy(), values.to_numpy(float), inside.to_numpy(bool)


def _single_phase(scores: pd.DataFrame, phase: str) -> None:
    phases = set(scores["phase"].unique())
    if phases != {phase}:
        raise ValueError(f"expected only {phase!r} runs here, got phases {sorted(phases)}: calibration and evaluation must not mix")


def fit_table(calib_scores: pd.DataFrame, experiment: str, scores: Sequence[str] = ("logit", "loss"), **fit_kwargs) -> pd.DataFrame:
    """Per-example Gaussian fits (FIT schema) from calibration-phase scores only."""
    _single_phase(calib_scores, "calib")
    batch_of = calib_scores.drop_duplicates("example").set_index("example")["batch"]
    frames = []
    for score in scores:
        _, examples, values, inside = score_matrix(calib_scores, score)
        fit = fit_gaussians(values, inside, **fit_kwargs)
        frames.append(
            pd.DataFrame(
                {
                    "experiment": experiment,
                    "score": score,
                    "example": examples,
                    "batch": batch_of.loc[examples].to_numpy(),
                    "mu_in": fit.mu_in,
                    "sd_in": fit.sd_in,
                    "n_in": fit.n_in,
                    "mu_out": fit.mu_out,
                    "sd_out": fit.sd_out,
                    "n_out": fit.n_out,
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def audit_tables(
    fit: pd.DataFrame,
    eval_scores: pd.DataFrame,
    eval_signs: pd.DataFrame,
    m: int,
    r_values: Iterable[int],
    *,
    zeta: float = 0.05,
    statistics: Sequence[str] = ("mean", "median"),
    auditor: str = "batchwise",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(overlaps, bounds) of an experiment from evaluation runs only (OVERLAPS, BOUNDS schemas)."""
    _single_phase(eval_scores, "eval")
    _single_phase(eval_signs, "eval")
    experiment = str(fit["experiment"].iloc[0])
    runs_s, true_signs = sign_matrix(eval_signs, "eval")
    sign_index = eval_signs.sort_values("run")["sign_index"].to_numpy()
    r_values = [int(r) for r in r_values]
    rows = []
    for score, fsub in fit.groupby("score", sort=True):
        fsub = fsub.set_index("example")
        runs, examples, values, _ = score_matrix(eval_scores, score)
        if not np.array_equal(runs, runs_s):
            raise ValueError(f"evaluation score runs {runs.tolist()} do not match the sign table's {runs_s.tolist()}")
        f = fsub.loc[examples]
        gfit = GaussianFit(f.mu_in.to_numpy(), f.sd_in.to_numpy(), f.n_in.to_numpy(), f.mu_out.to_numpy(), f.sd_out.to_numpy(), f.n_out.to_numpy())
        lam = batch_scores(values, gfit, f["batch"].to_numpy(), m)
        for r, v in batchwise_overlaps(lam, true_signs, r_values).items():
            for run, idx, val in zip(runs, sign_index, v):
                rows.append({"experiment": experiment, "auditor": auditor, "score": score, "run": int(run), "sign_index": int(idx), "r": r, "overlap": int(val)})
    overlaps = pd.DataFrame(rows)
    return overlaps, bounds_table(overlaps, m, zeta=zeta, statistics=statistics)
