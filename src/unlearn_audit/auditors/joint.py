"""Joint sign-vector prediction, Algorithm 3 (Section 5, Instantiation II; App. A.4).

Every candidate sign vector S̃ ∈ S_m is a hypothesis (a class, numbered by
:func:`unlearn_audit.stats.signs.sign_vector_rank`).  Calibration fits, per class S̃ and per
candidate example (x, y), a Gaussian N(μ_{x,y}(S̃), σ_{x,y}(S̃)²) to the scores of the Γ
calibration runs U(A(D(S̃)), D(S̃), D_f(S̃)) (:func:`~.gaussian_fit.fit_per_class`, Algorithm 3
step 7).  At evaluation the mechanism scores every candidate by

    Λ(S̃) = Σ_{(x,y) ∈ D_f} log N(s_{x,y}; μ_{x,y}(S̃), σ_{x,y}(S̃))       (Algorithm 3, step 11)

(log σ terms included) and returns Ŝ = argmax Λ (step 12).  The guess is a full sign vector, so
r = m, and the overlaps become bounds on the (ε, δ) *unlearning* claim by
:func:`unlearn_audit.stats.bounds.unlearning_epsilon_lower_bound` (Theorem 4.2 / Lemma C.1 with
the δ-aware Lemma 4.1: the claim induces a (2ε, (1 + e^ε)δ)-LDP mechanism).

**Designs.**  Base training A(D(S)) is a deterministic function of S (fixed data, initial model
and shuffling order, Section 4), so a design needs at most |S_m| base models, one per S̃, shared by
the calibration runs and the evaluation runs; what differs between runs is the unlearning
randomness.  Evaluation runs draw a fresh S ~ Unif(S_m) and fresh unlearning randomness,
independent of every calibration run (Section 5), which the phase guards below enforce: the fit
never sees an evaluation run.

* :func:`joint_fit` — the per-class fit from calibration scores (N, n) and sign vectors (N, m);
* :func:`joint_guesses` — Ŝ = unrank(argmax_k Λ_k) for evaluation scores (L, n);
* :class:`Joint` — the strategy of :class:`~.audit.SignVectorAudit` (its tables:
  :func:`~.tables.joint_audit_tables`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..stats.signs import check_m_r, enumerate_sign_vectors, num_sign_vectors, sign_vector_rank
from .gaussian_fit import REL_VAR_FLOOR, PerClassFit, fit_per_class
from .runs import PhaseRuns

__all__ = ["Joint", "joint_fit", "joint_guesses"]


def _check_sign_vectors(signs: np.ndarray, what: str) -> np.ndarray:
    signs = np.asarray(signs)
    if signs.ndim != 2 or signs.shape[1] < 1:
        raise ValueError(f"{what} sign vectors must be (runs, m), got shape {signs.shape}")
    return signs


def joint_fit(scores: np.ndarray, signs: np.ndarray, *, rel_var_floor: float = REL_VAR_FLOOR) -> PerClassFit:
    """Algorithm 3's calibration: one Gaussian per candidate S̃ ∈ S_m and example (step 7).

    Parameters
    ----------
    scores : (N, n) calibration scores of the n candidate examples.
    signs : (N, m) the calibration runs' sign vectors, each in S_m; class k of the fit is
        ``sign_vector_unrank(k, m)``.  Every S̃ ∈ S_m needs ≥ 2 calibration runs.
    """
    scores = np.asarray(scores, dtype=float)
    signs = _check_sign_vectors(signs, "calibration")
    if scores.ndim != 2 or scores.shape[0] != signs.shape[0]:
        raise ValueError(f"scores (runs, examples) and signs (runs, m) must have the same runs; got {scores.shape} and {signs.shape}")
    m = signs.shape[1]
    check_m_r(m)
    n_classes = num_sign_vectors(m)
    if 2 * n_classes > signs.shape[0]:
        raise ValueError(
            f"Algorithm 3 fits one Gaussian per candidate sign vector: |S_m| = {n_classes} for m = {m}, so at "
            f"least {2 * n_classes} calibration runs (2 per candidate) are needed, got {signs.shape[0]}; "
            "increase calibration runs per candidate (or use the batchwise auditor for large m)"
        )
    classes = np.array([sign_vector_rank(s) for s in signs], dtype=np.int64)
    return fit_per_class(scores, classes, n_classes, rel_var_floor=rel_var_floor)


def joint_guesses(fit: PerClassFit, scores: np.ndarray, m: int) -> np.ndarray:
    """Algorithm 3's mechanism: Ŝ = argmax_{S̃ ∈ S_m} Λ(S̃) for each evaluation run (steps 11–12).

    ``scores`` (L, n) or (n,) → sign vectors (L, m) int8.  Ties go to the candidate of lowest
    rank (:func:`~unlearn_audit.stats.signs.sign_vector_rank`), deterministically.
    """
    check_m_r(m)
    n_classes = num_sign_vectors(m)
    if fit.n_classes != n_classes:
        raise ValueError(f"the fit has {fit.n_classes} classes but |S_m| = {n_classes} for m = {m}")
    scores = np.atleast_2d(np.asarray(scores, dtype=float))
    if not np.all(np.isfinite(scores)):
        raise ValueError("evaluation scores contain NaN or infinite values")
    best = np.argmax(fit.log_likelihood(scores), axis=1)  # first maximum: the lowest rank
    return enumerate_sign_vectors(m)[best]


@dataclass(frozen=True)
class Joint:
    """Algorithm 3 as a strategy of :class:`~.audit.SignVectorAudit`: one Gaussian per candidate
    S̃ ∈ S_m and example (step 7, floored at ``rel_var_floor``), the argmax guess (steps 11–12), so
    r = m.  Its δ is the δ of the audited (ε, δ) *unlearning* claim (δ-aware Lemma 4.1)."""

    rel_var_floor: float = REL_VAR_FLOOR
    name: ClassVar[str] = "joint"
    delta_kind: ClassVar[str] = "unlearning"

    def check_design(self, m: int) -> None:
        check_m_r(m)
        if m % 2:
            raise ValueError(f"the joint auditor guesses all m entries (r = m), so m must be even, got m = {m}")

    def fit(self, calibration: PhaseRuns) -> PerClassFit:
        return joint_fit(calibration.values, calibration.signs, rel_var_floor=self.rel_var_floor)

    def predict(self, fit: PerClassFit, evaluation: PhaseRuns) -> np.ndarray:
        """Ŝ (L, m): the argmax guess of every evaluation run."""
        return joint_guesses(fit, evaluation.values, evaluation.m)

    def guess(self, prediction: np.ndarray, r: int) -> np.ndarray:
        m = prediction.shape[1]
        if int(r) != m:
            raise ValueError(f"the {self.name} auditor guesses every entry of S: r must be m = {m}, got r = {r}")
        return prediction
