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
* :func:`joint_audit_tables` — (overlaps, bounds) frames (OVERLAPS, BOUNDS schemas) from score
  and sign tables.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from ..stats.bounds import STATISTICS
from ..stats.selection import Cell
from ..stats.signs import check_m_r, enumerate_sign_vectors, num_sign_vectors, overlap, sign_vector_rank
from .batchwise import SCORES, bounds_table
from .gaussian_fit import REL_VAR_FLOOR, PerClassFit, fit_per_class
from .runs import check_single_phase, score_matrix, sign_matrix

__all__ = ["joint_fit", "joint_guesses", "joint_overlaps", "joint_bounds", "joint_audit_tables"]


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


def _run_arrays(
    scores: pd.DataFrame, signs: pd.DataFrame, phase: str, score: str, m: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(runs, sign_index, examples, values (R, n), sign vectors (R, m)) of one phase, checked.

    The score table's runs must be the sign table's, and every row's ``in_forget`` must be
    S_batch = +1 for its run's sign vector.
    """
    runs_s, sign_vectors = sign_matrix(signs, phase)
    if sign_vectors.shape[1] != m:
        raise ValueError(f"the {phase} sign vectors have m = {sign_vectors.shape[1]}, expected m = {m}")
    sign_index = signs[signs.phase == phase].sort_values("run")["sign_index"].to_numpy()
    runs, examples, values, inside = score_matrix(scores, score)
    if not np.array_equal(runs, runs_s):
        raise ValueError(f"{phase} score runs {runs.tolist()} do not match the sign table's {runs_s.tolist()}")
    batch = scores.drop_duplicates("example").set_index("example")["batch"].loc[examples].to_numpy(np.int64)
    if batch.min() < 0 or batch.max() >= m:
        raise ValueError(f"batch ids must lie in [0, {m})")
    if not np.array_equal(inside, sign_vectors[:, batch] == 1):
        raise ValueError(f"{phase} scores' in_forget disagrees with the sign table (S_batch = +1): wrong sign table?")
    return runs, sign_index, examples, values, sign_vectors


def _single_experiment(frame: pd.DataFrame) -> str:
    names = frame["experiment"].unique()
    if names.size != 1:
        raise ValueError(f"expected the scores of one experiment, got {sorted(map(str, names))}")
    return str(names[0])


def _phase_arrays(
    calib_scores: pd.DataFrame, calib_signs: pd.DataFrame, eval_scores: pd.DataFrame, eval_signs: pd.DataFrame,
    m: int, scores: Sequence[str],
) -> tuple[str, dict[str, tuple[np.ndarray, ...]]]:
    """(experiment, {score: (calib values, calib sign vectors, eval runs, eval sign_index, eval values,
    eval sign vectors)}) of phase-checked tables: the fit never sees an evaluation run, and both
    phases score the same candidate examples (Algorithm 3 and App. A.3 alike)."""
    for frame, phase in ((calib_scores, "calib"), (calib_signs, "calib"), (eval_scores, "eval"), (eval_signs, "eval")):
        check_single_phase(frame, phase)
    experiment = _single_experiment(eval_scores)
    out = {}
    for score in scores:
        _, _, calib_examples, calib_values, calib_sv = _run_arrays(calib_scores, calib_signs, "calib", score, m)
        runs, sign_index, examples, values, true_signs = _run_arrays(eval_scores, eval_signs, "eval", score, m)
        if not np.array_equal(calib_examples, examples):
            raise ValueError("calibration and evaluation runs must score the same candidate examples")
        out[score] = (calib_values, calib_sv, runs, sign_index, values, true_signs)
    return experiment, out


def joint_audit_tables(
    calib_scores: pd.DataFrame,
    eval_scores: pd.DataFrame,
    eval_signs: pd.DataFrame,
    calib_signs: pd.DataFrame,
    m: int,
    *,
    zeta: float = 0.05,
    delta: float = 0.0,
    statistics: Sequence[str] = STATISTICS,
    scores: Sequence[str] = SCORES,
    primary: Cell | None = None,
    selection: str = "preregistered",
    auditor: str = "joint",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(overlaps, bounds) of Algorithm 3 from score and sign tables (OVERLAPS, BOUNDS schemas):
    :func:`joint_overlaps`, then :func:`joint_bounds`.

    Parameters
    ----------
    calib_scores, calib_signs : calibration-phase rows only (SCORES, SIGNS schemas); the fit.
    eval_scores, eval_signs : evaluation-phase rows only; the guesses and overlaps.
    m : number of candidate batches; r = m in every row.
    zeta, delta : level and the δ of the audited (ε, δ) *unlearning* claim (the ``delta``
        column); each bound is :func:`~unlearn_audit.stats.bounds.unlearning_epsilon_lower_bound`.
    statistics, scores : the cells tried, one bounds row per (score, statistic).
    primary, selection : the pre-registered cell (r must be m) or ``"bonferroni"``, exactly as
        :func:`~.batchwise.bounds_table`.
    """
    overlaps = joint_overlaps(calib_scores, eval_scores, eval_signs, calib_signs, m, scores=scores, auditor=auditor)
    return overlaps, joint_bounds(overlaps, m, zeta=zeta, delta=delta, statistics=statistics, primary=primary, selection=selection)


def joint_overlaps(
    calib_scores: pd.DataFrame,
    eval_scores: pd.DataFrame,
    eval_signs: pd.DataFrame,
    calib_signs: pd.DataFrame,
    m: int,
    *,
    scores: Sequence[str] = SCORES,
    auditor: str = "joint",
) -> pd.DataFrame:
    """OVERLAPS of Algorithm 3: per score, the Gaussian fit on the calibration runs and the overlap of
    each evaluation run's argmax guess (r = m) with its true S."""
    check_m_r(m)
    if m % 2:
        raise ValueError(f"the joint auditor guesses all m entries (r = m), so m must be even, got m = {m}")
    experiment, arrays = _phase_arrays(calib_scores, calib_signs, eval_scores, eval_signs, m, scores)
    rows = []
    for score, (calib_values, calib_sv, runs, sign_index, values, true_signs) in arrays.items():
        fit = joint_fit(calib_values, calib_sv)
        v = np.atleast_1d(overlap(joint_guesses(fit, values, m), true_signs))
        for run, idx, val in zip(runs, sign_index, v):
            rows.append({"experiment": experiment, "auditor": auditor, "score": score, "run": int(run), "sign_index": int(idx), "m": int(m), "r": int(m), "overlap": int(val)})
    return pd.DataFrame(rows)


def joint_bounds(overlaps: pd.DataFrame, m: int, *, zeta: float = 0.05, delta: float = 0.0, statistics: Sequence[str] = STATISTICS,
                 primary: Cell | None = None, selection: str = "preregistered") -> pd.DataFrame:
    """BOUNDS of Algorithm 3's overlaps: each row bounds the (ε, δ) unlearning claim
    (:func:`~.batchwise.bounds_table` with ``delta_kind="unlearning"``), so the overlaps of one fit can
    be bounded at several levels without fitting again."""
    return bounds_table(overlaps, m, zeta=zeta, statistics=statistics, delta=delta, primary=primary, selection=selection,
                        delta_kind="unlearning")
