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
from ..auditors.tables import joint_bounds, joint_overlaps, pairwise_audit_table
from ..io import empty_frame, read_concat, read_parquet, write_parquet
from ..stats.bounds import pairwise_unlearning_epsilon_lower_bound
from ..stats.perfect_prediction import perfect_prediction_bound
from ..report import write_table
from ..report.certified import CERTIFIED_FIGURES, draw_figure, pairwise_table_frame, table6_frame
from .diagnostics import checkpoint_accuracies, experiment_diagnostics, warn
from .plan import preregistered_cell

__all__ = ["joint_audit", "pairwise_audit", "table6", "figure"]


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
    frames = []
    if checkpoint_paths:
        steps = read_concat(checkpoint_paths, schemas.CHECKPOINT_SCORES)
        n_steps = steps.step.nunique()
        keys = ["auditor", "score", "r", "statistic"]
        for step, sub in steps.groupby("step", sort=True):
            at_step = _joint_overlaps(sub.drop(columns="step"), signs, int(m))
            b = _joint_bounds(at_step, int(m), cell_cfg, zeta)
            # the same overlaps at ζ/K (K steps): the maximum of these over the steps is one level-ζ claim
            corrected = _joint_bounds(at_step, int(m), cell_cfg, zeta / n_steps)
            b = b.merge(corrected[keys + ["epsilon_lb_test"]].rename(columns={"epsilon_lb_test": "epsilon_lb_bonferroni_steps"}),
                        on=keys, how="left", validate="one_to_one")
            frames.append(b.assign(step=int(step)))
    table = pd.concat(frames, ignore_index=True) if frames else empty_frame(schemas.CHECKPOINT_BOUNDS)
    write_parquet(table[schemas.CHECKPOINT_BOUNDS.names], checkpoint_bounds_path, schemas.CHECKPOINT_BOUNDS)


def pairwise_audit(score_paths: Sequence[str], signs_path, cell_cfg: Mapping, zeta: float, out_path) -> None:
    """Rule ``certified_pairwise_audit``: FP/FN counts, Eq. 3 at the certified δ and μ_LB (App. A.3)."""
    scores = read_concat(score_paths, schemas.SCORES)
    signs = read_parquet(signs_path, schemas.SIGNS)
    calib, evals, calib_signs, eval_signs = _split_phases(scores, signs)
    table = pairwise_audit_table(calib, calib_signs, evals, eval_signs, zeta=zeta, delta=float(cell_cfg["delta"]))
    write_parquet(table, out_path, schemas.PAIRWISE)


def table6(bound_paths: Sequence[str], checkpoint_bound_paths: Sequence[str], metric_paths: Sequence[str], experiments: Mapping[str, Mapping], table_path) -> None:
    """Rule ``certified_table6``: model clipping on the certified (ε, C2, σ) grid (Table 6)."""
    bounds = read_concat(bound_paths, schemas.BOUNDS)
    metrics = read_concat(metric_paths, schemas.RUN_METRICS)
    diagnostics = experiment_diagnostics(bounds, metrics, experiments)
    warn(diagnostics)
    frame = table6_frame(bounds, read_concat(checkpoint_bound_paths, schemas.CHECKPOINT_BOUNDS), metrics, experiments,
                         diagnostics=diagnostics, step_accuracies=checkpoint_accuracies(metrics), ceilings=ceilings(bounds))
    write_table(frame, Path(table_path).with_suffix(""), caption=CERTIFIED_FIGURES["table6"])


def pairwise_table(name: str, pairwise_paths: Sequence[str], metric_paths: Sequence[str], experiments: Mapping[str, Mapping], table_path) -> None:
    """Rule ``certified_pairwise_table``: Sec. 7.3, the pairwise auditor on the uncertified methods."""
    pairwise = read_concat(pairwise_paths, schemas.PAIRWISE)
    metrics = read_concat(metric_paths, schemas.RUN_METRICS)
    diagnostics = experiment_diagnostics(empty_frame(schemas.BOUNDS), metrics, experiments)
    frame = pairwise_table_frame(pairwise, experiments, diagnostics=diagnostics, ceilings=pairwise_ceilings(pairwise))
    write_table(frame, Path(table_path).with_suffix(""), caption=CERTIFIED_FIGURES[name])


def figure(name: str, bound_paths: Sequence[str], checkpoint_bound_paths: Sequence[str], pairwise_paths: Sequence[str], experiments: Mapping[str, Mapping], figure_path,
           metric_paths: Sequence[str] = ()) -> None:
    """Rule ``certified_figure``: Figure 1a, 1b or 1c, with the plotted numbers, the audited models'
    accuracies (per checkpoint step in Figure 1a) and the controls as CSV beside it."""
    bounds = read_concat(bound_paths, schemas.BOUNDS)
    steps = read_concat(checkpoint_bound_paths, schemas.CHECKPOINT_BOUNDS)
    pairwise = read_concat(pairwise_paths, schemas.PAIRWISE)
    metrics = read_concat(metric_paths, schemas.RUN_METRICS)
    diagnostics = experiment_diagnostics(bounds, metrics, experiments)
    warn(diagnostics)
    limits = {**ceilings(bounds), **pairwise_ceilings(pairwise)}  # a step's (m, L, ζ, δ) is its experiment's
    draw_figure(name, bounds, steps, pairwise, experiments, Path(figure_path).with_suffix(""), ceilings=limits,
                diagnostics=diagnostics, step_accuracies=checkpoint_accuracies(metrics))


def ceilings(bounds: pd.DataFrame) -> dict[str, float]:
    """{experiment: the largest ε_LB its (m, L, ζ, δ) allows}: the bound when every evaluation run's
    guess is exact (App. F), so a reader sees which points sit on it."""
    out = {}
    for name, sub in bounds.groupby("experiment", sort=True):
        b = sub.iloc[0]
        out[str(name)] = perfect_prediction_bound(int(b.m), int(b.m), int(b.L), zeta=float(b.zeta), delta=float(b.delta)).epsilon_lb
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
