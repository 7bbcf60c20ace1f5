"""Score and sign tables in, OVERLAPS and BOUNDS tables out: every auditor's tables through one
:class:`~.audit.SignVectorAudit` per score (the workflow's rules and the CLI's ``audit`` alike).

* :func:`audit_tables` — Algorithm 2 from a FIT table (fitted by rule ``nn_fit`` on calibration
  runs only) and the evaluation runs;
* :func:`joint_overlaps`, :func:`joint_bounds`, :func:`joint_audit_tables` — Algorithm 3: fit and
  guess per score; the overlaps of one fit can be bounded at several levels without fitting again;
* :func:`pairwise_audit` (arrays), :func:`pairwise_audit_table` (tables) — App. A.3.
"""

from __future__ import annotations

from typing import Iterable, Sequence

import pandas as pd

from ..checks import check_choice
from ..stats.bounds import STATISTICS
from ..stats.reference import reference_bound
from ..stats.selection import Cell
from .audit import SignVectorAudit, bounds_table
from .batchwise import SCORES, Batchwise, per_example_fit
from .joint import Joint
from .pairwise import PAIRWISE_COLUMNS, PAIRWISE_TESTS, Pairwise, PairwiseAudit
from .runs import PhaseRuns, phase_runs

__all__ = ["audit_tables", "joint_overlaps", "joint_bounds", "joint_audit_tables", "pairwise_audit", "pairwise_audit_table"]


def _single_experiment(frame: pd.DataFrame) -> str:
    names = frame["experiment"].unique()
    if names.size != 1:
        raise ValueError(f"expected the scores of one experiment, got {sorted(map(str, names))}")
    return str(names[0])


def audit_tables(
    fit: pd.DataFrame,
    eval_scores: pd.DataFrame,
    eval_signs: pd.DataFrame,
    m: int,
    r_values: Iterable[int],
    *,
    zeta: float = 0.05,
    statistics: Sequence[str] = STATISTICS,
    auditor: str = "batchwise",
    primary: Cell | None = None,
    selection: str = "preregistered",
    r_rule: str = "config",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(overlaps, bounds) of Algorithm 2 from a FIT table and evaluation runs only (OVERLAPS, BOUNDS
    schemas); one :class:`~.audit.SignVectorAudit` per score of the fit, one bounds table over all
    (so that a Bonferroni selection counts every cell); ``r_rule`` as :func:`~.audit.bounds_table` records it."""
    experiment = str(fit["experiment"].iloc[0])
    r_values = [int(r) for r in r_values]
    frames = []
    for score, rows in fit.groupby("score", sort=True):
        evaluation = phase_runs(eval_scores, eval_signs, "eval", score, int(m))
        gfit = per_example_fit(rows, evaluation.examples, evaluation.batch)
        audit = SignVectorAudit(Batchwise(), gfit, evaluation, experiment=experiment, score=score, auditor=auditor)
        frames.append(audit.overlap_table(r_values))
    overlaps = pd.concat(frames, ignore_index=True)
    return overlaps, bounds_table(overlaps, m, zeta=zeta, statistics=statistics, primary=primary, selection=selection, r_rule=r_rule)


def _calibrated(strategy, calib_scores, calib_signs, eval_scores, eval_signs, m: int, scores: Sequence[str], auditor: str | None = None):
    """One calibrated :class:`~.audit.SignVectorAudit` per score of phase-checked tables: the fit
    never sees an evaluation run."""
    experiment = _single_experiment(eval_scores)
    for score in scores:
        calibration = phase_runs(calib_scores, calib_signs, "calib", score, m)
        evaluation = phase_runs(eval_scores, eval_signs, "eval", score, m)
        yield SignVectorAudit.calibrate(strategy, calibration, evaluation, experiment=experiment, score=score, auditor=auditor)


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
    strategy = Joint()
    strategy.check_design(int(m))
    audits = _calibrated(strategy, calib_scores, calib_signs, eval_scores, eval_signs, int(m), scores, auditor)
    return pd.concat([a.overlap_table([int(m)]) for a in audits], ignore_index=True)


def joint_bounds(overlaps: pd.DataFrame, m: int, *, zeta: float = 0.05, delta: float = 0.0, statistics: Sequence[str] = STATISTICS,
                 primary: Cell | None = None, selection: str = "preregistered") -> pd.DataFrame:
    """BOUNDS of Algorithm 3's overlaps: each row bounds the (ε, δ) unlearning claim
    (:func:`~.audit.bounds_table` with ``delta_kind="unlearning"``)."""
    return bounds_table(overlaps, m, zeta=zeta, statistics=statistics, delta=delta, primary=primary, selection=selection,
                        delta_kind=Joint.delta_kind)


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

    ``calib_*`` are calibration-phase rows only (the fit), ``eval_*`` evaluation-phase rows only;
    r = m in every row; ``delta`` is the δ of the audited (ε, δ) *unlearning* claim; ``primary``
    (r must be m) and ``selection`` as in :func:`~.audit.bounds_table`.
    """
    overlaps = joint_overlaps(calib_scores, eval_scores, eval_signs, calib_signs, m, scores=scores, auditor=auditor)
    return overlaps, joint_bounds(overlaps, m, zeta=zeta, delta=delta, statistics=statistics, primary=primary, selection=selection)


def pairwise_audit(calib_scores, calib_signs, eval_scores, eval_signs, *, zeta: float = 0.05, delta: float = 0.0) -> PairwiseAudit:
    """The pairwise auditor on arrays: calibration scores (N, n) and sign vectors (N, 2), ≥ 2 runs of
    each forget set; evaluation scores (L, n) and sign vectors (L, 2), at least one run of each;
    ``delta`` the δ of the audited (ε, δ) unlearning claim."""
    calibration = PhaseRuns.from_arrays(calib_scores, calib_signs, "calib")
    evaluation = PhaseRuns.from_arrays(eval_scores, eval_signs, "eval")
    for runs, what in ((calibration, "calibration"), (evaluation, "evaluation")):
        Pairwise().check_design(runs.m, what)
    return SignVectorAudit.calibrate(Pairwise(), calibration, evaluation).pairwise(zeta=zeta, delta=delta)


def pairwise_audit_table(
    calib_scores: pd.DataFrame,
    calib_signs: pd.DataFrame,
    eval_scores: pd.DataFrame,
    eval_signs: pd.DataFrame,
    *,
    zeta: float = 0.05,
    delta: float = 0.0,
    scores: Sequence[str] = SCORES,
    test: str = "eq3",
) -> pd.DataFrame:
    """:func:`pairwise_audit` on score and sign tables (SCORES, SIGNS schemas), one row per score
    (columns :data:`~.pairwise.PAIRWISE_COLUMNS`): Eq. 3's bound, and beside it the reference test of
    the same guesses read as m = 2 overlaps (``epsilon_lb_reference``); ``test`` (``"eq3"`` or
    ``"reference"``, fixed before the run) names the claim, ``epsilon_lb_test`` its bound."""
    check_choice(test, PAIRWISE_TESTS, "test of a pairwise audit")
    for what, signs in (("calibration", calib_signs), ("evaluation", eval_signs)):
        lengths = sorted({len(s) for s in signs["signs"]})
        if lengths != [2]:  # one m, or several (then all are named)
            Pairwise().check_design(lengths[0] if len(lengths) == 1 else lengths, what)
    rows = []
    for audit in _calibrated(Pairwise(), calib_scores, calib_signs, eval_scores, eval_signs, 2, scores):
        res = audit.pairwise(zeta=zeta, delta=delta)
        reference = reference_bound(audit.overlaps(2), 2, 2, zeta=zeta, delta=delta).lb
        rows.append(
            {"experiment": audit.experiment, "auditor": "pairwise", "score": audit.score, "fp": res.fp, "n_neg": res.n_neg, "fn": res.fn,
             "n_pos": res.n_pos, "zeta": res.zeta, "delta": res.delta, "epsilon_lb": res.epsilon_lb, "mu_lb": res.mu_lb,
             "epsilon_lb_reference": reference, "test": test, "epsilon_lb_test": reference if test == "reference" else res.epsilon_lb}
        )
    return pd.DataFrame(rows, columns=list(PAIRWISE_COLUMNS))
