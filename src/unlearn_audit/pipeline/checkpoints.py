"""Audits of an algorithm stopped at each of its checkpoint steps (Figure 1a, Table 6's first step,
App. F.4 "just after the first step of unlearning").

A run's checkpoint scores at step t are the scores of the model the algorithm would have released
had it stopped at t, so the audit at t is the ordinary audit (joint or batchwise, calibration runs
at t fitted, evaluation runs at t guessed) of another algorithm: each step's bound is a level-ζ
test on its own, and their maximum is not.  Beside each step's bounds the same overlaps are bounded
at ζ/K for the K steps (``epsilon_lb_bonferroni_steps``): the largest of those over the steps is
one level-ζ claim (the union bound).  Torch-free.
"""

from __future__ import annotations

from typing import Callable

import pandas as pd

from .. import schemas
from ..io import empty_frame

__all__ = ["bounds_per_step"]

_CELL_KEYS = ["auditor", "score", "r", "statistic"]


def bounds_per_step(checkpoint_scores: pd.DataFrame, bounds_at: Callable[[pd.DataFrame, float], pd.DataFrame], zeta: float) -> pd.DataFrame:
    """CHECKPOINT_BOUNDS rows: ``bounds_at(scores of one step, level)`` (a BOUNDS frame) at every
    step of ``checkpoint_scores`` (CHECKPOINT_SCORES rows), at level ζ and, in the column
    ``epsilon_lb_bonferroni_steps``, the claim of the same cell at ζ/K."""
    if checkpoint_scores.empty:
        return empty_frame(schemas.CHECKPOINT_BOUNDS)
    n_steps = checkpoint_scores.step.nunique()
    frames = []
    for step, sub in checkpoint_scores.groupby("step", sort=True):
        at_step = sub.drop(columns="step")
        b = bounds_at(at_step, zeta)
        corrected = bounds_at(at_step, zeta / n_steps)
        b = b.merge(corrected[_CELL_KEYS + ["epsilon_lb_test"]].rename(columns={"epsilon_lb_test": "epsilon_lb_bonferroni_steps"}),
                    on=_CELL_KEYS, how="left", validate="one_to_one")
        frames.append(b.assign(step=int(step)))
    return pd.concat(frames, ignore_index=True)[schemas.CHECKPOINT_BOUNDS.names]
