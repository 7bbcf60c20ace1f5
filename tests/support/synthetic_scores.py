"""Synthetic per-run membership scores in the SCORES layout, and the OVERLAPS table the workflow
would compute from them, for the CLI and README tests."""

import numpy as np
import pandas as pd

from unlearn_audit.auditors.batchwise import fit_table
from unlearn_audit.auditors.tables import audit_tables
from unlearn_audit.auditors.runs import sign_matrix, sign_table


def long_scores(signs, phase, experiment, rng, shift=0.6):
    """Synthetic SCORES rows (one example per batch); loss is not a mirror of logit."""
    runs, s = sign_matrix(signs, phase)
    n_runs, m = s.shape
    logit = np.linspace(-1, 1, m) + shift * (s == 1) + rng.normal(0, 0.3, s.shape)
    loss = -np.linspace(-1, 1, m) - shift * (s == 1) + rng.normal(0, 0.3, s.shape)
    return pd.DataFrame({
        "experiment": experiment, "phase": phase, "run": np.repeat(runs, m), "sign_index": 0, "seed": 0,
        "batch": np.tile(np.arange(m), n_runs), "example": np.tile(np.arange(m), n_runs),
        "in_forget": (s == 1).ravel(), "score_logit": logit.ravel(), "score_loss": loss.ravel(),
    })


def pipeline_overlaps(m, r_values, n_eval, experiment="e", n_calib=12, seed=0):
    """An OVERLAPS table as the workflow writes it: both scores, every r, ``n_eval`` evaluation runs."""
    rng = np.random.default_rng(seed)
    signs = sign_table("synthetic", m, n_calib, n_eval, root_seed=seed + 1)
    fit = fit_table(long_scores(signs, "calib", experiment, rng), experiment)
    ev = long_scores(signs, "eval", experiment, rng)
    overlaps, _ = audit_tables(fit, ev, signs[signs.phase == "eval"], m, r_values)
    return overlaps


def split_batch(df: pd.DataFrame) -> pd.DataFrame:
    """A score file made faulty: two examples per batch that disagree on in_forget in calibration
    run 0 (a batch is forgotten or retained as a whole)."""
    df = df.copy()
    df["batch"] = df["example"] // 2
    i = df.index[(df.phase == "calib") & (df.run == 0) & (df.example == 0)][0]
    df.loc[i, "in_forget"] = not df.loc[i, "in_forget"]
    return df
