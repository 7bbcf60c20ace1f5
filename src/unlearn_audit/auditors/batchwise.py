"""Batchwise inclusion/exclusion prediction, Algorithm 2 (Section 5, Instantiation I).

Per-example Gaussians are fitted to the scores of the calibration runs only
(:func:`~.gaussian_fit.fit_per_example`), separately for runs where the example's batch was in
the forget set (S_j = +1, "in") and where it was not ("out"); at evaluation the batch score is

    Λ_j = Σ_{(x,y) ∈ D_f,j} log N(s; μ⁺, σ⁺) − log N(s; μ⁻, σ⁻)        (Algorithm 2, step 11)

including the log σ terms; the guess is +1 for the top r/2 batches and −1 for the bottom r/2
(:func:`unlearn_audit.stats.signs.guess_from_scores`), and the overlaps become bounds by
Theorem 4.2 through :class:`~.audit.SignVectorAudit`, of which :class:`Batchwise` is a strategy.

* :func:`fit_table` — per-example fits (FIT schema) from calibration-phase scores only;
  :func:`per_example_fit` reads them back for the examples of an evaluation;
* :func:`batch_scores`, :func:`batchwise_overlaps` — the steps;
* :class:`Batchwise` — the strategy: fit, predict (Λ) and guess for any even r ≤ m.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Iterable, Sequence

import numpy as np
import pandas as pd

from ..stats.selection import DEFAULT_CELL
from ..stats.signs import check_m_r, guess_from_scores, overlap
from .gaussian_fit import REL_VAR_FLOOR, PerExampleFit, fit_per_example
from .runs import SCORE_COLUMNS, PhaseRuns, check_single_phase, score_matrix

__all__ = ["SCORES", "DEFAULT_CELL", "Batchwise", "batch_scores", "batchwise_overlaps", "fit_table", "per_example_fit"]

SCORES = tuple(SCORE_COLUMNS)


def batch_scores(scores: np.ndarray, fit: PerExampleFit, batch: np.ndarray, m: int) -> np.ndarray:
    """Λ_j for each evaluation run: scores (L, n) → (L, m) (Algorithm 2, step 11)."""
    scores = np.atleast_2d(np.asarray(scores, dtype=float))
    batch = np.asarray(batch, dtype=np.int64)
    if scores.shape[1] != batch.size:
        raise ValueError(f"scores have {scores.shape[1]} examples but batch ids have {batch.size}")
    if batch.min() < 0 or batch.max() >= m:
        raise ValueError(f"batch ids must lie in [0, {m})")
    llr = fit.log_likelihood_ratio(scores)
    out = np.zeros((scores.shape[0], m))
    for row in range(scores.shape[0]):
        out[row] = np.bincount(batch, weights=llr[row], minlength=m)
    return out


def batchwise_overlaps(lam: np.ndarray, true_signs: np.ndarray, r_values: Iterable[int]) -> dict[int, np.ndarray]:
    """Overlaps V of the guesses from Λ with the true sign vectors, for every r."""
    lam = np.atleast_2d(lam)
    true_signs = np.atleast_2d(true_signs)
    return {int(r): np.atleast_1d(overlap(guess_from_scores(lam, int(r)), true_signs)) for r in r_values}


def fit_table(calib_scores: pd.DataFrame, experiment: str, scores: Sequence[str] = SCORES, **fit_kwargs) -> pd.DataFrame:
    """Per-example Gaussian fits (FIT schema) from calibration-phase scores only."""
    check_single_phase(calib_scores, "calib")
    batch_of = calib_scores.drop_duplicates("example").set_index("example")["batch"]
    frames = []
    for score in scores:
        _, examples, values, inside = score_matrix(calib_scores, score)
        fit = fit_per_example(values, inside, **fit_kwargs)
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


def per_example_fit(fit: pd.DataFrame, examples, batch=None) -> PerExampleFit:
    """The :class:`~.gaussian_fit.PerExampleFit` of FIT rows (one score), ordered as ``examples``;
    with ``batch``, each example's batch in the FIT rows must be the one given."""
    rows = fit.drop_duplicates("example").set_index("example")
    missing = np.setdiff1d(np.asarray(examples), rows.index.to_numpy())
    if missing.size:
        raise ValueError(f"the fit has no Gaussians for {missing.size} evaluated example(s), e.g. {missing[0]}: fit and scores are of different pools")
    f = rows.loc[examples]
    if batch is not None and not np.array_equal(f["batch"].to_numpy(np.int64), np.asarray(batch, np.int64)):
        raise ValueError("the fit's batch of an example differs from the evaluation scores': fit and scores are of different designs")
    return PerExampleFit(f.mu_in.to_numpy(), f.sd_in.to_numpy(), f.n_in.to_numpy(), f.mu_out.to_numpy(), f.sd_out.to_numpy(), f.n_out.to_numpy())


@dataclass(frozen=True)
class Batchwise:
    """Algorithm 2 as a strategy of :class:`~.audit.SignVectorAudit`: per-example in/out Gaussians
    (step 7; ``pooled_variance`` and ``rel_var_floor`` as :func:`~.gaussian_fit.fit_per_example`
    takes them), the batch scores Λ_j (step 11), the guess of the r/2 highest and r/2 lowest
    batches for any even r ≤ m.  Its δ is the induced LDP mechanism's (Lemma C.1)."""

    pooled_variance: bool = False
    rel_var_floor: float = REL_VAR_FLOOR
    name: ClassVar[str] = "batchwise"
    delta_kind: ClassVar[str] = "ldp"

    def check_design(self, m: int) -> None:
        check_m_r(m)

    def fit(self, calibration: PhaseRuns) -> PerExampleFit:
        return fit_per_example(calibration.values, calibration.in_forget, pooled_variance=self.pooled_variance, rel_var_floor=self.rel_var_floor)

    def predict(self, fit: PerExampleFit, evaluation: PhaseRuns) -> np.ndarray:
        """Λ (L, m) of the evaluation runs."""
        if evaluation.batch is None:
            raise ValueError("the batchwise auditor sums scores per batch: the evaluation runs need each example's batch")
        return batch_scores(evaluation.values, fit, evaluation.batch, evaluation.m)

    def guess(self, prediction: np.ndarray, r: int) -> np.ndarray:
        return guess_from_scores(prediction, int(r))
