"""Synthetic designs of the sign-vector auditors that fit one Gaussian per candidate sign vector
(Algorithm 3, App. A.4, and the pairwise baseline of App. A.3, which is Algorithm 3 with m = 2):
Γ calibration runs of every S̃ ∈ S_m, planted per-batch signals, and the SCORES / SIGNS frames
of one phase built from arrays."""

import numpy as np
import pandas as pd

from unlearn_audit.stats.signs import enumerate_sign_vectors, sign_vector_rank


def calib_signs(m: int, gamma: int) -> np.ndarray:
    """Γ runs of every S̃ ∈ S_m (Algorithm 3's calibration loop), in rank order."""
    return np.repeat(enumerate_sign_vectors(m), gamma, axis=0)


def planted_scores(signs: np.ndarray, batch: np.ndarray, offsets: np.ndarray, rng, shift=1.5) -> np.ndarray:
    """Scores N(shift·S_batch + offset(S̃), 1): a per-batch signal plus a cross-batch, class-specific mean."""
    ranks = np.array([sign_vector_rank(s) for s in signs])
    mean = shift * signs[:, batch] + offsets[ranks]
    return mean + rng.standard_normal(mean.shape)


def design_frames(experiment, phase, signs, batch, logit, loss, run0=0):
    """SCORES and SIGNS frames of one phase from arrays (run ids from ``run0``, seeds 1000 + run)."""
    rows, srows = [], []
    for i, s in enumerate(signs):
        run = run0 + i
        srows.append({"design": experiment, "phase": phase, "run": run, "sign_index": run, "seed": 1000 + run, "signs": s.astype(np.int8)})
        for ex, b in enumerate(batch):
            rows.append({"experiment": experiment, "phase": phase, "run": run, "sign_index": run, "seed": 1000 + run, "batch": int(b),
                         "example": ex, "in_forget": bool(s[b] == 1), "score_logit": logit[i, ex], "score_loss": loss[i, ex]})
    return pd.DataFrame(rows), pd.DataFrame(srows)
