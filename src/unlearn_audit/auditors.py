"""Membership-inference auditors turned into overlaps and ε bounds.

Batchwise inclusion/exclusion prediction (Algorithm 2, Section 5 Instantiation I):
per-example Gaussians are fitted to the scores of the calibration runs only, separately
for runs where the example's batch was in the forget set (S_j = +1, "in") and where it
was not (S_j = −1, "out"); at evaluation the batch score is

    Λ_j = Σ_{(x,y) ∈ D_f,j} log N(s; μ⁺, σ⁺) − log N(s; μ⁻, σ⁻),

including the log σ terms; the guess is +1 for the top r/2 batches and −1 for the bottom
r/2 (:func:`unlearn_audit.signs.guess_from_scores`), and the overlaps are turned into
bounds by Theorem 4.2 (:func:`unlearn_audit.bounds.epsilon_lower_bound`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

import numpy as np
import pandas as pd

from .bounds import epsilon_lower_bound
from .signs import guess_from_scores, overlap

__all__ = [
    "GaussianFit",
    "fit_gaussians",
    "batch_scores",
    "batchwise_overlaps",
    "bounds_table",
    "DEFAULT_VAR_FLOOR",
]

# Variances below this are raised to it: with deterministic training a score can repeat
# exactly across calibration runs, and a zero variance would give infinite likelihoods.
DEFAULT_VAR_FLOOR = 1e-8


@dataclass(frozen=True)
class GaussianFit:
    """Per-example in/out Gaussian parameters fitted on calibration runs (Algorithm 2, step 7)."""

    mu_in: np.ndarray
    sd_in: np.ndarray
    n_in: np.ndarray
    mu_out: np.ndarray
    sd_out: np.ndarray
    n_out: np.ndarray


def fit_gaussians(
    scores: np.ndarray,
    in_forget: np.ndarray,
    *,
    var_floor: float = DEFAULT_VAR_FLOOR,
    pooled_variance: bool = False,
) -> GaussianFit:
    """Fit N(μ⁺, σ⁺²) and N(μ⁻, σ⁻²) per example from calibration scores.

    Parameters
    ----------
    scores : (Γ, n) scores of n candidate examples in Γ calibration runs.
    in_forget : (Γ, n) bool, True where the example's batch was in the forget set (S_j = +1).
    var_floor : lower limit on every variance (documented above).
    pooled_variance : use one variance per side pooled over all examples (LiRA's
        fixed-variance variant) instead of per-example variances.

    Variances are unbiased (ddof = 1).  Each example needs ≥ 2 calibration runs on each side.
    """
    scores = np.asarray(scores, dtype=float)
    inside = np.asarray(in_forget, dtype=bool)
    if scores.shape != inside.shape or scores.ndim != 2:
        raise ValueError(f"scores and in_forget must both be (runs, examples); got {scores.shape} and {inside.shape}")
    if not np.all(np.isfinite(scores)):
        raise ValueError("calibration scores contain NaN or infinite values")
    out = {}
    for side, mask in (("in", inside), ("out", ~inside)):
        n = mask.sum(axis=0)
        if np.any(n < 2):
            raise ValueError(
                f"some examples have fewer than 2 calibration runs with their batch {side} the forget set; "
                "increase the number of calibration runs"
            )
        mu = np.where(mask, scores, 0.0).sum(axis=0) / n
        ss = np.where(mask, (scores - mu) ** 2, 0.0).sum(axis=0)
        var = ss / (n - 1)
        if pooled_variance:
            var = np.full_like(var, ss.sum() / (n - 1).sum())
        out[side] = (mu, np.sqrt(np.maximum(var, var_floor)), n)
    return GaussianFit(*out["in"], *out["out"])


def _log_normal(x, mu, sd):
    return -0.5 * ((x - mu) / sd) ** 2 - np.log(sd) - 0.5 * np.log(2 * np.pi)


def batch_scores(scores: np.ndarray, fit: GaussianFit, batch: np.ndarray, m: int) -> np.ndarray:
    """Λ_j for each evaluation run: scores (L, n) → (L, m) (Algorithm 2, step 11)."""
    scores = np.atleast_2d(np.asarray(scores, dtype=float))
    batch = np.asarray(batch, dtype=np.int64)
    if scores.shape[1] != batch.size:
        raise ValueError(f"scores have {scores.shape[1]} examples but batch ids have {batch.size}")
    if batch.min() < 0 or batch.max() >= m:
        raise ValueError(f"batch ids must lie in [0, {m})")
    llr = _log_normal(scores, fit.mu_in, fit.sd_in) - _log_normal(scores, fit.mu_out, fit.sd_out)
    out = np.zeros((scores.shape[0], m))
    for row in range(scores.shape[0]):
        out[row] = np.bincount(batch, weights=llr[row], minlength=m)
    return out


def batchwise_overlaps(lam: np.ndarray, true_signs: np.ndarray, r_values: Iterable[int]) -> dict[int, np.ndarray]:
    """Overlaps V of the guesses from Λ with the true sign vectors, for every r."""
    lam = np.atleast_2d(lam)
    true_signs = np.atleast_2d(true_signs)
    return {int(r): np.atleast_1d(overlap(guess_from_scores(lam, int(r)), true_signs)) for r in r_values}


def bounds_table(
    overlaps: pd.DataFrame,
    m: int,
    *,
    zeta: float = 0.05,
    statistics: Sequence[str] = ("mean", "median"),
    delta: float = 0.0,
    halve: bool = True,
) -> pd.DataFrame:
    """One row per (experiment, auditor, score, r, statistic) of Theorem 4.2 bounds.

    ``overlaps`` has the columns of :data:`unlearn_audit.schemas.OVERLAPS`.  ``halve`` is True
    for the sign-vector audits (ε_lb = ε_ldp / 2, Lemma 4.1); the column ``epsilon_lb`` is
    ``epsilon_ldp`` itself when False (convex audits, Section 8).
    """
    rows = []
    for (experiment, auditor, score, r), grp in overlaps.groupby(["experiment", "auditor", "score", "r"], sort=True):
        v = grp["overlap"].to_numpy()
        for statistic in statistics:
            res = epsilon_lower_bound(v, m, int(r), zeta=zeta, statistic=statistic, delta=delta)
            rows.append(
                {
                    "experiment": experiment,
                    "auditor": auditor,
                    "score": score,
                    "statistic": statistic,
                    "m": m,
                    "r": int(r),
                    "L": res.L,
                    "zeta": zeta,
                    "delta": delta,
                    "mean_overlap": float(v.mean()),
                    "epsilon_ldp": res.epsilon_ldp,
                    "epsilon_lb": res.epsilon_lb if halve else res.epsilon_ldp,
                    "rejected": res.rejected,
                }
            )
    return pd.DataFrame(rows)
