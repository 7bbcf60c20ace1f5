"""Certified unlearning audits (paper §7.1, App. A.3, A.4, F.4, G.1, G.2), one function per rule.

``workflow/rules/certified.smk`` → ``workflow/scripts/certified_<step>.py`` → the function here:

* :func:`joint_audit` (``certified_joint_audit``) — Algorithm 3 on a joint design: per-candidate
  Gaussians from the calibration runs, the argmax guess on the evaluation runs, r = m, bounds at the
  certified δ; with checkpoint scores also ε_LB(t) at every checkpoint step t (Figure 1a), each a
  separate audit of the algorithm as if it had stopped at t;
* :func:`pairwise_audit` (``certified_pairwise_audit``) — the App. A.3 baseline on a joint design
  with m = 2;
* :func:`table6` (``certified_table6``), :func:`pairwise_table` (``certified_pairwise_table``: Sec. 7.3)
  and :func:`figure` (``certified_figure``: Figures 1a–c).

The base models of a joint design are one per candidate S̃ ∈ S_m (base training is a deterministic
function of S), shared by calibration and evaluation runs; every run draws its own unlearning
randomness, the release noise included.
"""

from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from .. import schemas
from ..auditors.audit import claim_ceiling
from ..auditors.joint import Joint
from ..auditors.tables import joint_bounds, joint_overlaps, pairwise_audit_table
from ..io import empty_frame, read_concat, read_parquet, write_parquet
from ..stats.bounds import pairwise_unlearning_epsilon_lower_bound
from ..stats.perfect_prediction import at_ceiling, perfect_prediction_bound
from ..report import write_table
from ..report.certified import CERTIFIED_FIGURES, draw_figure, pairwise_table_frame, table6_frame
from .checkpoints import bounds_per_step
from .diagnostics import checkpoint_diagnostics, experiment_diagnostics, warn
from .nn import with_guesses
from .plan import preregistered_cell
from ..stats.selection import DEFAULT_CELL

__all__ = ["joint_audit", "pairwise_audit", "table6", "figure", "ceilings", "claim_ceilings", "pairwise_ceilings", "pairwise_claim_ceilings",
           "mark_ceilings"]


def _split_phases(scores: pd.DataFrame, signs: pd.DataFrame):
    calib = scores[scores.phase == "calib"]
    evals = scores[scores.phase == "eval"]
    return calib, evals, signs[signs.phase == "calib"], signs[signs.phase == "eval"]


def _joint_overlaps(scores: pd.DataFrame, signs: pd.DataFrame, m: int) -> pd.DataFrame:
    calib, evals, calib_signs, eval_signs = _split_phases(scores, signs)
    return joint_overlaps(calib, evals, eval_signs, calib_signs, m)


def _joint_bounds(overlaps: pd.DataFrame, m: int, cell_cfg: Mapping, zeta: float) -> pd.DataFrame:
    cell = preregistered_cell({**cell_cfg, "r": [m], "report_r": m})
    return joint_bounds(overlaps, m, zeta=zeta, delta=float(cell_cfg["delta"]), primary=cell,
                        selection=cell_cfg.get("selection", "preregistered"))


def joint_audit(
    score_paths: Sequence[str],
    signs_path,
    m: int,
    cell_cfg: Mapping,
    zeta: float,
    overlaps_path,
    bounds_path,
    checkpoint_paths: Sequence[str] = (),
    checkpoint_bounds_path=None,
) -> None:
    """Rule ``certified_joint_audit``: Algorithm 3 on the final models and at every checkpoint step.

    ``cell_cfg``: the pre-registered ``statistic``/``score``/``selection`` and the audit's ``delta``
    (:func:`.plan.audit_delta`)."""
    scores = read_concat(score_paths, schemas.SCORES)
    signs = read_parquet(signs_path, schemas.SIGNS)
    overlaps = _joint_overlaps(scores, signs, int(m))
    bounds = _joint_bounds(overlaps, int(m), cell_cfg, zeta)
    write_parquet(overlaps, overlaps_path, schemas.OVERLAPS)
    write_parquet(bounds, bounds_path, schemas.BOUNDS)
    if checkpoint_bounds_path is None:
        return
    steps = read_concat(checkpoint_paths, schemas.CHECKPOINT_SCORES) if checkpoint_paths else empty_frame(schemas.CHECKPOINT_SCORES)
    table = bounds_per_step(steps, lambda at_step, level: _joint_bounds(_joint_overlaps(at_step, signs, int(m)), int(m), cell_cfg, level), zeta)
    write_parquet(table, checkpoint_bounds_path, schemas.CHECKPOINT_BOUNDS)


def pairwise_audit(score_paths: Sequence[str], signs_path, cell_cfg: Mapping, zeta: float, out_path) -> None:
    """Rule ``certified_pairwise_audit``: FP/FN counts, Eq. 3 at the certified δ and μ_LB (App. A.3), and
    the reference test of the same guesses as m = 2 overlaps; the claim is the reference test's
    (the default) unless the experiment pre-registers ``test: theorem4.2``, Eq. 3's."""
    scores = read_concat(score_paths, schemas.SCORES)
    signs = read_parquet(signs_path, schemas.SIGNS)
    calib, evals, calib_signs, eval_signs = _split_phases(scores, signs)
    test = "reference" if cell_cfg.get("test", DEFAULT_CELL["test"]) == "reference" else "eq3"
    table = pairwise_audit_table(calib, calib_signs, evals, eval_signs, zeta=zeta, delta=float(cell_cfg["delta"]), test=test)
    write_parquet(table, out_path, schemas.PAIRWISE)


def table6(bound_paths: Sequence[str], checkpoint_bound_paths: Sequence[str], metric_paths: Sequence[str], experiments: Mapping[str, Mapping], table_path,
           overlap_paths: Sequence[str] = ()) -> None:
    """Rule ``certified_table6``: model clipping on the certified (ε, C2, σ) grid (Table 6), each
    row's claim first with its own ceiling and the scale-free readings of its cell's overlaps
    (``overlap_paths``, :func:`.nn.with_guesses`), Theorem 4.2's beside it."""
    overlaps = read_concat(overlap_paths, schemas.OVERLAPS) if overlap_paths else None
    bounds = with_guesses(read_concat(bound_paths, schemas.BOUNDS), overlaps, experiments)
    steps = with_guesses(read_concat(checkpoint_bound_paths, schemas.CHECKPOINT_BOUNDS), None, experiments)
    metrics = read_concat(metric_paths, schemas.RUN_METRICS)
    diagnostics = experiment_diagnostics(bounds, metrics, experiments)
    warn(diagnostics)
    limits, claims = ceilings(bounds), claim_ceilings(bounds)
    frame = table6_frame(mark_ceilings(bounds, limits, claims), mark_ceilings(steps, limits, claims), metrics, experiments, diagnostics=diagnostics,
                         step_diagnostics=checkpoint_diagnostics(steps, metrics, diagnostics, experiments), ceilings=limits, claim_ceilings=claims)
    write_table(frame, Path(table_path).with_suffix(""), caption=CERTIFIED_FIGURES["table6"])


def pairwise_table(name: str, pairwise_paths: Sequence[str], metric_paths: Sequence[str], experiments: Mapping[str, Mapping], table_path) -> None:
    """Rule ``certified_pairwise_table``: Sec. 7.3, the pairwise auditor on the uncertified methods,
    each row's claim first with its own ceiling, Eq. 3's beside it."""
    pairwise = read_concat(pairwise_paths, schemas.PAIRWISE)
    metrics = read_concat(metric_paths, schemas.RUN_METRICS)
    diagnostics = experiment_diagnostics(_pairwise_claims(pairwise, experiments), metrics, experiments)
    warn(diagnostics)
    limits, claims = pairwise_ceilings(pairwise), pairwise_claim_ceilings(pairwise)
    frame = pairwise_table_frame(mark_ceilings(pairwise, limits, claims), experiments, diagnostics=diagnostics, ceilings=limits, claim_ceilings=claims)
    write_table(frame, Path(table_path).with_suffix(""), caption=CERTIFIED_FIGURES[name])


def figure(name: str, bound_paths: Sequence[str], checkpoint_bound_paths: Sequence[str], pairwise_paths: Sequence[str], experiments: Mapping[str, Mapping], figure_path,
           metric_paths: Sequence[str] = ()) -> None:
    """Rule ``certified_figure``: Figure 1a, 1b or 1c, the claims plotted with their own ceilings, with
    the plotted numbers, Theorem 4.2's (Eq. 3's) beside them, the audited models' accuracies (per
    checkpoint step in Figure 1a) and the controls as CSV beside it."""
    bounds = read_concat(bound_paths, schemas.BOUNDS)
    steps = read_concat(checkpoint_bound_paths, schemas.CHECKPOINT_BOUNDS)
    pairwise = read_concat(pairwise_paths, schemas.PAIRWISE)
    metrics = read_concat(metric_paths, schemas.RUN_METRICS)
    joint_limits, pairwise_limits = ceilings(bounds), pairwise_ceilings(pairwise)
    joint_claims, pairwise_claims = claim_ceilings(bounds), pairwise_claim_ceilings(pairwise)
    # a pairwise experiment's claim is its pre-registered bound, a joint one's its reported row's
    diagnostics = experiment_diagnostics(pd.concat([bounds, _pairwise_claims(pairwise, experiments)], ignore_index=True), metrics, experiments)
    warn(diagnostics)
    # a step's (m, L, ζ, δ, test) is its experiment's
    draw_figure(name, mark_ceilings(bounds, joint_limits, joint_claims), mark_ceilings(steps, joint_limits, joint_claims),
                mark_ceilings(pairwise, pairwise_limits, pairwise_claims), experiments, Path(figure_path).with_suffix(""),
                ceilings={**joint_limits, **pairwise_limits}, claim_ceilings={**joint_claims, **pairwise_claims}, diagnostics=diagnostics,
                step_diagnostics=checkpoint_diagnostics(steps, metrics, diagnostics, experiments))


def ceilings(bounds: pd.DataFrame) -> dict[str, float]:
    """{experiment: the largest Theorem 4.2 ε_LB its (m, L, ζ, δ) allows}: the bound when every
    evaluation run's guess is exact (App. F), so a reader sees which points sit on it."""
    out = {}
    for name, sub in bounds.groupby("experiment", sort=True):
        b = sub.iloc[0]
        out[str(name)] = perfect_prediction_bound(int(b.m), int(b.m), int(b.L), zeta=float(b.zeta), delta=float(b.delta)).epsilon_lb
    return out


def claim_ceilings(bounds: pd.DataFrame) -> dict[str, float]:
    """{experiment: the claim's own ceiling}: its pre-registered test's bound (at the reported row's
    statistic, ζ and the certified δ of the unlearning claim) when every evaluation run's guess is
    exact (:func:`~unlearn_audit.auditors.audit.claim_ceiling`; a joint audit's r is m)."""
    out = {}
    for name, sub in bounds.groupby("experiment", sort=True):
        reported = sub[sub.role.isin(schemas.REPORTED_ROLES)]
        b = (reported if len(reported) else sub).iloc[0]
        out[str(name)] = claim_ceiling(int(b.m), int(b.r), int(b.L), test=str(b.test), zeta=float(b.zeta), statistic=str(b.statistic),
                                       delta=float(b.delta), delta_kind=Joint.delta_kind)
    return out


def pairwise_ceilings(pairwise: pd.DataFrame) -> dict[str, float]:
    """{experiment: Eq. 3's ε_LB with no false positive and no false negative}: the largest bound the
    pairwise auditor's (n_neg, n_pos, ζ, δ) allows (App. A.3)."""
    out = {}
    for name, sub in pairwise.groupby("experiment", sort=True):
        b = sub.iloc[0]
        out[str(name)] = pairwise_unlearning_epsilon_lower_bound(0, int(b.n_neg), 0, int(b.n_pos), zeta=float(b.zeta),
                                                                 delta=float(b.delta)).epsilon_lb
    return out


def pairwise_claim_ceilings(pairwise: pd.DataFrame) -> dict[str, float]:
    """{experiment: the pairwise claim's own ceiling}: Eq. 3's (:func:`pairwise_ceilings`) for an
    ``eq3`` claim, the reference test's of n_neg + n_pos runs at overlap 2 (every guess right, m = r = 2)
    for a ``reference`` one."""
    eq3 = pairwise_ceilings(pairwise)
    out = {}
    for name, sub in pairwise.groupby("experiment", sort=True):
        b = sub.iloc[0]
        out[str(name)] = eq3[str(name)] if b.test == "eq3" else claim_ceiling(
            2, 2, int(b.n_neg + b.n_pos), test=str(b.test), zeta=float(b.zeta), delta=float(b.delta), delta_kind=Joint.delta_kind)
    return out


def mark_ceilings(frame: pd.DataFrame, limits: Mapping[str, float], claims: Mapping[str, float]) -> pd.DataFrame:
    """``frame`` (bounds, step bounds or pairwise rows) with two boolean columns: ``at_ceiling``, the
    row's ``epsilon_lb`` (Theorem 4.2's, or Eq. 3's) equals its experiment's ceiling in ``limits``, and
    ``at_ceiling_claim``, the row's claim ``epsilon_lb_test`` equals its experiment's claim ceiling in
    ``claims`` (every guess right, App. F)."""
    def marks(values, ceilings: Mapping[str, float]) -> pd.Series:
        flags = [at_ceiling(v, ceilings.get(str(e), float("nan"))) for e, v in zip(frame["experiment"], values)]
        return pd.Series(flags, index=frame.index, dtype=bool)

    return frame.assign(at_ceiling=marks(frame["epsilon_lb"], limits), at_ceiling_claim=marks(frame["epsilon_lb_test"], claims))


def _pairwise_claims(pairwise: pd.DataFrame, experiments: Mapping[str, Mapping]) -> pd.DataFrame:
    """Each pairwise experiment's claim as a reported BOUNDS-like row (``experiment, role,
    epsilon_lb_test``): its pre-registered bound (Eq. 3's or the reference test's) at its
    pre-registered score, for the diagnostics' no-op and no-power verdicts."""
    rows = [{"experiment": name, "role": "preregistered", "epsilon_lb_test": float(sub.epsilon_lb_test.iloc[0])}
            for name, e in experiments.items()
            if len(sub := pairwise[(pairwise.experiment == name) & (pairwise.score == e.get("score", "logit"))])]
    return pd.DataFrame(rows, columns=["experiment", "role", "epsilon_lb_test"])
