"""The pairwise auditor, the baseline of App. A.3 (after Nasr et al. 2021).

Two forget sets, D_f^(1) = batch 0 and D_f^(2) = batch 1: m = 2 and S ∈ {(+1, −1), (−1, +1)}.
"Calibration and prediction are identical to Instantiation II with m = 2" (App. A.3), so the
fit and the guess are :func:`~.joint.joint_fit` and :func:`~.joint.joint_guesses`.  A run is
*positive* when batch 0 is in the forget set (S = (+1, −1)) and predicted positive when
Ŝ = (+1, −1); the confusion matrix of the evaluation runs becomes a bound by Eq. 3 with
Clopper–Pearson intervals, read as a bound on the (ε, δ) *unlearning* claim
(:func:`~unlearn_audit.stats.bounds.pairwise_unlearning_epsilon_lower_bound`: the two unlearned
models are each (ε, δ)-close to A(D_r), hence (2ε, (1 + e^ε)δ)-indistinguishable), and the μ-GDP
bound halved likewise (:func:`~unlearn_audit.stats.bounds.pairwise_unlearning_mu_lower_bound`).

* :func:`pairwise_audit` — arrays in, :class:`PairwiseAudit` out;
* :func:`pairwise_audit_table` — score and sign tables in, one row per score out.

Each row is a level-ζ test on its own; reporting the larger of several scores' bounds needs a
pre-registered score or a Bonferroni correction (:mod:`unlearn_audit.stats.selection`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np
import pandas as pd

from ..checks import check_delta, check_zeta
from ..stats.bounds import pairwise_unlearning_epsilon_lower_bound, pairwise_unlearning_mu_lower_bound
from .batchwise import SCORES
from .joint import _phase_arrays, joint_fit, joint_guesses

__all__ = ["PAIRWISE_COLUMNS", "PairwiseAudit", "pairwise_audit", "pairwise_audit_table"]

#: Columns of :func:`pairwise_audit_table`.
PAIRWISE_COLUMNS = ("experiment", "auditor", "score", "fp", "n_neg", "fn", "n_pos", "zeta", "delta", "epsilon_lb", "mu_lb")


@dataclass(frozen=True)
class PairwiseAudit:
    """Confusion matrix of the pairwise auditor and its bounds on the unlearning claim (App. A.3).

    ``fp`` of ``n_neg`` runs with S = (−1, +1) were predicted (+1, −1); ``fn`` of ``n_pos`` runs
    with S = (+1, −1) were predicted (−1, +1).  ``epsilon_lb`` is the δ-aware unlearning bound
    (Eq. 3, δ = ``delta`` of the unlearning claim), ``mu_lb`` the halved μ-GDP bound.
    """

    fp: int
    n_neg: int
    fn: int
    n_pos: int
    epsilon_lb: float
    mu_lb: float
    zeta: float
    delta: float


def _check_two_batches(signs: np.ndarray, what: str) -> np.ndarray:
    signs = np.asarray(signs)
    if signs.ndim != 2 or signs.shape[1] != 2:
        m = signs.shape[1] if signs.ndim == 2 else None
        raise ValueError(
            f"the pairwise auditor (App. A.3) distinguishes two forget sets, so its design needs m = 2 candidate "
            f"batches; the {what} sign vectors have m = {m} (shape {signs.shape})"
        )
    return signs


def pairwise_audit(
    calib_scores: np.ndarray,
    calib_signs: np.ndarray,
    eval_scores: np.ndarray,
    eval_signs: np.ndarray,
    *,
    zeta: float = 0.05,
    delta: float = 0.0,
) -> PairwiseAudit:
    """The pairwise auditor on arrays: fit on calibration runs, confusion matrix on evaluation runs.

    Parameters
    ----------
    calib_scores, calib_signs : (N, n) scores and (N, 2) sign vectors of the calibration runs
        (≥ 2 runs of each of the two forget sets).
    eval_scores, eval_signs : (L, n) scores and (L, 2) sign vectors of independent evaluation
        runs (at least one of each forget set).
    zeta, delta : level and the δ of the audited (ε, δ) unlearning claim.
    """
    zeta = check_zeta(zeta)
    delta = check_delta(delta)
    calib_signs = _check_two_batches(calib_signs, "calibration")
    eval_signs = _check_two_batches(eval_signs, "evaluation")
    fit = joint_fit(calib_scores, calib_signs)
    eval_scores = np.atleast_2d(np.asarray(eval_scores, dtype=float))
    if eval_scores.shape[0] != eval_signs.shape[0]:
        raise ValueError(f"evaluation scores have {eval_scores.shape[0]} runs but sign vectors {eval_signs.shape[0]}")
    guess = joint_guesses(fit, eval_scores, 2)
    truth_pos = eval_signs[:, 0] == 1
    pred_pos = guess[:, 0] == 1
    n_pos, n_neg = int(truth_pos.sum()), int((~truth_pos).sum())
    if n_pos == 0 or n_neg == 0:
        raise ValueError(
            f"the evaluation runs need both forget sets: got {n_pos} runs with S = (+1, −1) and {n_neg} with S = (−1, +1)"
        )
    fp = int((pred_pos & ~truth_pos).sum())
    fn = int((~pred_pos & truth_pos).sum())
    eps = pairwise_unlearning_epsilon_lower_bound(fp, n_neg, fn, n_pos, zeta=zeta, delta=delta).epsilon_lb
    mu = pairwise_unlearning_mu_lower_bound(fp, n_neg, fn, n_pos, zeta=zeta)
    return PairwiseAudit(fp=fp, n_neg=n_neg, fn=fn, n_pos=n_pos, epsilon_lb=float(eps), mu_lb=float(mu), zeta=zeta, delta=delta)


def pairwise_audit_table(
    calib_scores: pd.DataFrame,
    calib_signs: pd.DataFrame,
    eval_scores: pd.DataFrame,
    eval_signs: pd.DataFrame,
    *,
    zeta: float = 0.05,
    delta: float = 0.0,
    scores: Sequence[str] = SCORES,
) -> pd.DataFrame:
    """:func:`pairwise_audit` on score and sign tables (SCORES, SIGNS schemas), one row per score.

    Columns :data:`PAIRWISE_COLUMNS`; calibration and evaluation rows are phase-checked as in
    :func:`~.joint.joint_audit_tables`.
    """
    for what, signs in (("calibration", calib_signs), ("evaluation", eval_signs)):
        lengths = {len(s) for s in signs["signs"]}
        if lengths != {2}:
            raise ValueError(
                f"the pairwise auditor (App. A.3) distinguishes two forget sets, so its design needs m = 2 candidate "
                f"batches; the {what} sign vectors have m = {sorted(lengths)}"
            )
    experiment, arrays = _phase_arrays(calib_scores, calib_signs, eval_scores, eval_signs, 2, scores)
    rows = []
    for score, (calib_values, calib_sv, _, _, values, true_signs) in arrays.items():
        res = pairwise_audit(calib_values, calib_sv, values, true_signs, zeta=zeta, delta=delta)
        rows.append(
            {"experiment": experiment, "auditor": "pairwise", "score": score, "fp": res.fp, "n_neg": res.n_neg, "fn": res.fn,
             "n_pos": res.n_pos, "zeta": res.zeta, "delta": res.delta, "epsilon_lb": res.epsilon_lb, "mu_lb": res.mu_lb}
        )
    return pd.DataFrame(rows, columns=list(PAIRWISE_COLUMNS))
