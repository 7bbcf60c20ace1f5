"""OVERLAPS frames of simulated batchwise audits (Algorithm 2): L evaluation runs on m batches,
two scores, every r, with batch scores Λ = signal · S + N(0, 1).  With ``signal = 0`` Λ is
independent of S (no membership signal, a 0-DP mechanism)."""

import numpy as np
import pandas as pd

from unlearn_audit import schemas
from unlearn_audit.auditors.batchwise import batchwise_overlaps
from unlearn_audit.stats.signs import sample_sign_vectors

M, L, R_VALUES = 40, 10, (10, 20, 30, 40)
SCORE_NAMES = ("logit", "loss")


def overlaps_frame(rng, signal: float = 0.0, experiment: str = "x") -> pd.DataFrame:
    """OVERLAPS frame of one simulated audit: L evaluation runs on M batches, two scores, all r.

    The batch scores are Λ = signal · S + N(0, 1), drawn independently for each score.
    """
    signs = sample_sign_vectors(M, L, rng)
    score_col, r_col, overlap_col = [], [], []
    for score in SCORE_NAMES:
        lam = signal * signs + rng.normal(size=(L, M))
        for r, v in batchwise_overlaps(lam, signs, R_VALUES).items():
            score_col += [score] * L
            r_col.append(np.full(L, r, dtype=np.int32))
            overlap_col.append(v.astype(np.int32))
    return frame_of_overlaps(experiment, score_col, np.concatenate(r_col), np.concatenate(overlap_col))


def frame_of_overlaps(experiment, score_col, r_col, overlap_col) -> pd.DataFrame:
    """The OVERLAPS frame of one audit from its columns (runs 0..L−1 within each (score, r))."""
    n = len(score_col)
    runs = np.tile(np.arange(L), n // L)
    frame = pd.DataFrame({"experiment": [experiment] * n, "auditor": ["batchwise"] * n, "score": list(score_col),
                          "run": runs.astype(np.int32), "sign_index": runs.astype(np.int64), "m": np.full(n, M, dtype=np.int32),
                          "r": np.asarray(r_col, dtype=np.int32), "overlap": np.asarray(overlap_col, dtype=np.int32)})
    assert list(frame.columns) == schemas.OVERLAPS.names
    return frame
