"""Neural-network audits, one function per workflow rule (docs/workflow.md#the-dag-step-by-step); torch-free.

``workflow/rules/nn.smk`` has one wildcard rule per step (no rule is generated per chunk or per
experiment); each rule's script ``workflow/scripts/<rule>.py`` calls the function named after it
here or, for the rules that train and unlearn models, in :mod:`.nn_runs`:

* :func:`prepare_data` (rule ``nn_prepare_data``, wildcard ``design``) — the dataset split of a
  design (retain set, candidate forget pool cut into m batches of size B, validation and test sets);
* :func:`sample_signs` (``nn_sample_signs``, ``design``) — every sign vector of the design,
  calibration and evaluation phases from disjoint streams;
* :func:`.nn_runs.train` (``nn_train``, wildcards ``design`` and ``chunk``; ``nn_train_retrain``,
  ``design``: the one retrained model A(D_r)) and :func:`.nn_runs.unlearn` (``nn_unlearn``, wildcards
  ``group`` and ``chunk``) — base models, and the unlearned models' scores and metrics, one job per
  chunk of runs, written into the chunk's folder (torch);
* :func:`fit` (``nn_fit``, ``experiment``) — per-example Gaussians from calibration runs only;
* :func:`audit` (``nn_audit``, ``experiment``) — overlaps and bounds from evaluation runs only, the
  pre-registered cell marked;
* :func:`checkpoint_audit` (``nn_checkpoint_audit``, ``experiment``) — the same audit of the
  algorithm stopped at each of its checkpoint steps (App. F.4: just after the first noisy step);
* :func:`membership` (``nn_membership``, ``experiment``) — the membership metrics researchers quote
  (AUC, TPR at low FPR) of the same scores, beside the audit (docs/metrics.md);
* :func:`table` (``nn_table``, ``table``) and :func:`figure_r` (``nn_figure_r``, no wildcard), both
  with each bound's perfect-prediction ceilings beside it, the claim's and Theorem 4.2's
  (:func:`with_ceilings`), the tables also with the scale-free readings of each cell's overlaps
  (:func:`with_guesses`) and the membership metrics with privleak against the design's Retrain
  (:func:`with_membership`); a question-answer design's rows also TOFU's metrics
  (:func:`~unlearn_audit.auditors.qa_metrics.experiment_columns`).

``nn_fit``, ``nn_audit``, ``nn_membership`` and ``nn_checkpoint_audit`` match batchwise experiments only (their
``wildcard_constraints``); joint and pairwise experiments are audited by the rules of
``workflow/rules/certified.smk`` (:mod:`.certified`).  The plan (:mod:`.plan`) lists the chunks of
each design and group and names the per-run files of each job.

This module imports neither torch nor matplotlib at import time, so the many small jobs of the
statistics rules start in a fraction of the time of a training job.

A *design* is everything that determines the base models (data, split, B, m, model, training
configuration, Γ, L); an *experiment* is an unlearning method with its hyperparameters on a
design.  Changing an experiment never retrains base models.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from .. import catalogue, schemas
from .checkpoints import bounds_per_step
from .diagnostics import checkpoint_diagnostics, experiment_diagnostics, warn
from .plan import preregistered_cell
from ..auditors.audit import claim_ceiling
from ..auditors.batchwise import Batchwise, fit_table
from ..auditors.membership_metrics import membership_metrics, privleak, privleak_interval
from ..auditors.qa_metrics import experiment_columns as qa_columns
from ..auditors.calibrated_r import RULE as CALIBRATED
from ..auditors.calibrated_r import calibrated_r
from ..auditors.runs import phase_runs
from ..auditors.tables import audit_tables
from ..auditors.runs import candidate_sign_table, sign_table
from ..data import prepare_audit_data, save_audit_data, split_indices_frame
from ..io import read_concat, read_parquet, write_parquet
from ..report.nn_tables import NN_TABLES, write_nn_table
from ..seeds import seed_sequence
from ..stats.guesses import guess_fraction, theorem42_at_size
from ..stats.perfect_prediction import at_ceiling, perfect_prediction_epsilon_lb
from ..stats.selection import Cell

__all__ = [
    "prepare_data",
    "sample_signs",
    "fit",
    "audit",
    "checkpoint_audit",
    "membership",
    "with_ceilings",
    "with_guesses",
    "with_membership",
    "table",
    "figure_r",
    "summary_figure",
]


def prepare_data(design: str, cfg: Mapping, root_seed: int, resources_dir: str, data_path, split_path) -> None:
    """Write the design's data split (.npz) and its index table (Parquet)."""
    seq = seed_sequence(root_seed, design, "data")
    data = prepare_audit_data(
        cfg["dataset"],
        split=cfg["split"],
        batch_size=None if cfg["batch_size"] is None else int(cfg["batch_size"]),
        m=int(cfg["m"]),
        forget_fraction=None,
        seed=int(seq.generate_state(1)[0]),
        resources_dir=resources_dir,
        **dict(cfg.get("dataset_params", {})),
    )
    save_audit_data(data, data_path)
    write_parquet(split_indices_frame(data), split_path)


def sample_signs(design: str, cfg: Mapping, root_seed: int, path) -> None:
    """Write every sign vector of the design (calibration and evaluation runs); a joint design has
    Γ = ``calibration_runs`` calibration runs per candidate S̃ ∈ S_m (Algorithm 3)."""
    make = candidate_sign_table if cfg.get("auditor", "batchwise") == "joint" else sign_table
    table = make(design, int(cfg["m"]), int(cfg["calibration_runs"]), int(cfg["evaluation_runs"]), root_seed)
    write_parquet(table, path, schemas.SIGNS)


def fit(experiment: str, score_paths: Sequence[str], fit_options: Mapping, fit_path) -> None:
    """Rule ``nn_fit``: per-example Gaussians (FIT schema) from calibration runs only."""
    scores = read_concat(score_paths, schemas.SCORES)
    write_parquet(fit_table(scores, experiment, **dict(fit_options)), fit_path, schemas.FIT)


def audit(fit_path, score_paths: Sequence[str], signs_path, m: int, experiment_cfg: Mapping, zeta: float, overlaps_path, bounds_path,
          calib_score_paths: Sequence[str] = (), fit_options: Mapping | None = None) -> None:
    """Rule ``nn_audit``: overlaps and bounds from evaluation runs only, the pre-registered cell marked;
    with ``report_r: calibrated`` its r is chosen first, by leave-one-out on the calibration runs
    (``calib_score_paths``) alone (:mod:`unlearn_audit.auditors.calibrated_r`), and recorded (``r_rule``)."""
    fitted = read_parquet(fit_path, schemas.FIT)
    scores = read_concat(score_paths, schemas.SCORES)
    signs = read_parquet(signs_path, schemas.SIGNS)
    cell, rule = preregistered_cell(experiment_cfg), "config"
    if experiment_cfg.get("report_r") == CALIBRATED:
        calib = read_concat(calib_score_paths, schemas.SCORES)
        runs = phase_runs(calib, signs[signs.phase == "calib"], "calib", cell.score, int(m))
        r, _ = calibrated_r(runs, experiment_cfg["r"], zeta=zeta, statistic=cell.statistic, test=cell.test,
                            strategy=Batchwise(**dict(fit_options or {})))
        cell, rule = Cell(r, cell.statistic, cell.score, cell.test), CALIBRATED
    overlaps, bounds = audit_tables(
        fitted, scores, signs[signs.phase == "eval"], int(m), experiment_cfg["r"], zeta=zeta,
        primary=cell, selection=experiment_cfg.get("selection", "preregistered"), r_rule=rule,
    )
    write_parquet(overlaps, overlaps_path, schemas.OVERLAPS)
    write_parquet(bounds, bounds_path, schemas.BOUNDS)


def membership(experiment: str, calib_score_paths: Sequence[str], score_paths: Sequence[str], fit_path, membership_path) -> None:
    """Rule ``nn_membership``: AUC, TPR at 1 % and 0.1 % FPR with their bootstrap intervals, per score
    (MEMBERSHIP schema, :func:`~unlearn_audit.auditors.membership_metrics.membership_metrics`): the score's
    orientation and the thresholds from the calibration runs, the rates from the evaluation runs."""
    calib = read_concat(calib_score_paths, schemas.SCORES)
    scores = read_concat(score_paths, schemas.SCORES)
    fitted = read_parquet(fit_path, schemas.FIT)
    rows = [{"experiment": experiment, "score": score, **membership_metrics(calib, scores, score, fit=fitted[fitted.score == score]).record()}
            for score in catalogue.SCORE_NAMES]
    write_parquet(pd.DataFrame(rows), membership_path, schemas.MEMBERSHIP)


def checkpoint_audit(checkpoint_paths: Sequence[str], signs_path, m: int, experiment_cfg: Mapping, fit_options: Mapping, zeta: float,
                     checkpoint_bounds_path) -> None:
    """Rule ``nn_checkpoint_audit``: Algorithm 2 at every checkpoint step t of a batchwise experiment,
    the per-example Gaussians fitted on the calibration runs' scores at t and the evaluation runs'
    scores at t guessed (:func:`.checkpoints.bounds_per_step`: each step a level-ζ audit of the
    algorithm stopped at t; App. F.4)."""
    steps = read_concat(checkpoint_paths, schemas.CHECKPOINT_SCORES)
    signs = read_parquet(signs_path, schemas.SIGNS)
    eval_signs = signs[signs.phase == "eval"]

    def bounds_at(scores: pd.DataFrame, level: float) -> pd.DataFrame:
        experiment = str(scores.experiment.iloc[0])
        fitted = fit_table(scores[scores.phase == "calib"], experiment, **dict(fit_options))
        return audit_tables(fitted, scores[scores.phase == "eval"], eval_signs, int(m), experiment_cfg["r"], zeta=level,
                            primary=preregistered_cell(experiment_cfg), selection=experiment_cfg.get("selection", "preregistered"))[1]

    write_parquet(bounds_per_step(steps, bounds_at, zeta), checkpoint_bounds_path, schemas.CHECKPOINT_BOUNDS)


def with_ceilings(bounds: pd.DataFrame) -> pd.DataFrame:
    """``bounds`` with four more columns, the perfect-prediction ceilings of each row's cell (m, r, L,
    at the row's level ζ and statistic; App. F) and whether the row sits on them (every guess right,
    to 1e-9 relative): Theorem 4.2's ``epsilon_lb_ceiling`` and ``at_ceiling`` (its ``epsilon_lb``
    equals it), and the claim's own ``epsilon_lb_ceiling_claim`` (:func:`~unlearn_audit.auditors.audit.claim_ceiling`
    of the row's pre-registered ``test``) and ``at_ceiling_claim`` (its ``epsilon_lb_test`` equals it).

    The ceilings are those of a δ = 0 audit, the only kind the batchwise rules run; a row with δ > 0
    is refused rather than given a ceiling it does not have."""
    if len(bounds) and (bounds["delta"] != 0).any():
        raise ValueError("perfect-prediction ceilings are computed for delta = 0 bounds only; these bounds have delta > 0")
    rows = list(bounds.itertuples(index=False))
    theorem42 = [perfect_prediction_epsilon_lb(int(b.m), int(b.r), int(b.L), zeta=float(b.zeta), statistic=str(b.statistic)) for b in rows]
    claim = [claim_ceiling(int(b.m), int(b.r), int(b.L), test=str(b.test), zeta=float(b.zeta), statistic=str(b.statistic)) for b in rows]
    out = bounds.assign(epsilon_lb_ceiling=pd.Series(theorem42, index=bounds.index, dtype=float),
                        epsilon_lb_ceiling_claim=pd.Series(claim, index=bounds.index, dtype=float))
    out["at_ceiling"] = _marks(out.epsilon_lb, out.epsilon_lb_ceiling)
    out["at_ceiling_claim"] = _marks(out.epsilon_lb_test, out.epsilon_lb_ceiling_claim)
    return out


def _marks(values: pd.Series, ceilings: pd.Series) -> pd.Series:
    """Whether each value equals its ceiling (:func:`~unlearn_audit.stats.perfect_prediction.at_ceiling`)."""
    return pd.Series([at_ceiling(v, c) for v, c in zip(values, ceilings)], index=values.index, dtype=bool)


def with_guesses(bounds: pd.DataFrame, overlaps: pd.DataFrame | None, experiments: Mapping[str, Mapping]) -> pd.DataFrame:
    """``bounds`` with the scale-free readings of each row's cell (:data:`~unlearn_audit.schemas.GUESS_COLUMNS`,
    :mod:`unlearn_audit.stats.guesses`) from its evaluation runs' overlaps (``overlaps``, OVERLAPS rows
    of the same experiments): the mean fraction of right guesses and its 95 % t-interval, and
    Theorem 4.2's bound (mean, the row's ζ and L) of the same fractions at the paper's audit size of
    the experiment's dataset (:data:`~unlearn_audit.catalogue.PAPER_AUDIT_SIZES`; NaN for another).

    Without ``overlaps`` (checkpoint-step bounds, whose per-run overlaps are not kept) the mean
    fraction is the row's ``mean_overlap`` / r and the other three are NaN."""
    runs = {} if overlaps is None else {
        _cell(grp.iloc[0]): grp.sort_values("run").overlap.to_numpy() for _, grp in overlaps.groupby(["experiment", "auditor", "score", "r"], sort=False)
    }
    readings: dict[tuple, tuple[float, ...]] = {}  # one per cell and level: a cell's mean and median rows share them
    values = []
    for b in bounds.itertuples(index=False):
        key = (*_cell(b), float(b.zeta))
        if key not in readings:
            readings[key] = _readings(b, runs, experiments, overlaps is not None)
        values.append(readings[key])
    return bounds.assign(**{c: pd.Series([v[i] for v in values], index=bounds.index, dtype=float) for i, c in enumerate(schemas.GUESS_COLUMNS)})


def with_membership(bounds: pd.DataFrame, membership: pd.DataFrame | None, retrain_controls: Mapping[str, str | None]) -> pd.DataFrame:
    """``bounds`` with :data:`~unlearn_audit.schemas.MEMBERSHIP_COLUMNS` for each row's experiment and
    score (``membership``: MEMBERSHIP rows; NaN for an experiment without them): the AUCs and TPRs,
    and privleak against the AUC of the design's Retrain control (``retrain_controls``: experiment →
    control; NaN where the design has none) with the interval of the two AUCs' bootstrap draws."""
    absent = {c: (False if c.startswith("few_") else math.nan) for c in schemas.MEMBERSHIP_COLUMNS}
    if membership is None or membership.empty:
        return bounds.assign(**absent)
    by = {(str(r["experiment"]), str(r["score"])): r for r in membership.to_dict("records")}
    rows = []
    for b in bounds.itertuples(index=False):
        own = by.get((str(b.experiment), str(b.score)))
        control = by.get((str(retrain_controls.get(b.experiment)), str(b.score)))
        if own is None:
            rows.append(absent)
            continue
        row = {c: own[c] for c in schemas.MEMBERSHIP_COLUMNS if c in own}
        if control is None:
            row |= {"privleak": math.nan, "privleak_low": math.nan, "privleak_high": math.nan}
        else:
            low, high = privleak_interval(own["auc"], control["auc"], own["auc_draws"], control["auc_draws"],
                                          min(int(own["evaluation_runs"]), int(control["evaluation_runs"])))
            row |= {"privleak": privleak(own["auc"], control["auc"]), "privleak_low": low, "privleak_high": high}
        rows.append(row)
    extra = pd.DataFrame(rows, index=bounds.index, columns=list(schemas.MEMBERSHIP_COLUMNS))
    return pd.concat([bounds, extra], axis=1)


def _cell(row) -> tuple[str, str, str, int]:
    """(experiment, auditor, score, r): the cell whose evaluation runs' overlaps a bounds row reads."""
    return str(row.experiment), str(row.auditor), str(row.score), int(row.r)


def _readings(b, runs: Mapping[tuple, object], experiments: Mapping[str, Mapping], have_overlaps: bool) -> tuple[float, ...]:
    """The :data:`~unlearn_audit.schemas.GUESS_COLUMNS` of one bounds row ``b`` (:func:`with_guesses`)."""
    if not have_overlaps:
        return float(b.mean_overlap) / int(b.r), math.nan, math.nan, math.nan
    v = runs.get(_cell(b))
    if v is None:
        raise ValueError(f"experiment {b.experiment!r}: no overlaps of its cell (score {b.score}, r = {int(b.r)}); rerun its audit")
    size = catalogue.PAPER_AUDIT_SIZES.get(str(experiments.get(b.experiment, {}).get("dataset")))
    at_size = theorem42_at_size(v, int(b.r), *size, zeta=float(b.zeta)) if size else math.nan
    return (*guess_fraction(v, int(b.r)), at_size)


def table(name: str, bound_paths: Sequence[str], metric_paths: Sequence[str], experiments: Mapping[str, Mapping], table_path,
          checkpoint_bound_paths: Sequence[str] = (), overlap_paths: Sequence[str] = (), membership_paths: Sequence[str] = (),
          retrain_controls: Mapping[str, str | None] | None = None) -> None:
    """Rule ``nn_table``: one of the paper's Tables 1a, 1b, 3, 4, 5, 7 or App. F.4, the claim of each
    row first: a bound equal to its own test's perfect-prediction ceiling is marked (CSV columns
    ``at_ceiling_claim``, ``at_ceiling_theorem42``, ‡ in Markdown and LaTeX); the scale-free readings
    of each cell's overlaps (``overlap_paths``, :func:`with_guesses`), the membership metrics of its
    scores (``membership_paths``, :func:`with_membership`), the models' accuracies and the
    flags of :mod:`.diagnostics` stand beside each reported bound, and each flag is also a warning in
    the job's log; where the runs measured TOFU's metrics (question-answer designs), the
    experiments' diagnostics carry them too (:data:`~unlearn_audit.schemas.QA_COLUMNS`), which the
    table ``llm_qa`` shows.  The checkpoint-step bounds of the table's experiments that score checkpoints
    (App. F.4's first step) come with their ceilings and their step's flags."""
    overlaps = read_concat(overlap_paths, schemas.OVERLAPS) if overlap_paths else None
    bounds = with_guesses(with_ceilings(read_concat(bound_paths, schemas.BOUNDS)), overlaps, experiments)
    membership = read_concat(membership_paths, schemas.MEMBERSHIP) if membership_paths else None
    bounds = with_membership(bounds, membership, retrain_controls or {})
    metrics = read_concat(metric_paths, schemas.RUN_METRICS)
    steps = None
    if checkpoint_bound_paths:
        steps = with_guesses(with_ceilings(read_concat(checkpoint_bound_paths, schemas.CHECKPOINT_BOUNDS)), None, experiments)
    diagnostics = experiment_diagnostics(bounds, metrics, experiments)
    warn(diagnostics)
    if "forget_truth_ratios" in metrics.columns:
        diagnostics = diagnostics.merge(qa_columns(metrics, experiments), on="experiment", how="left")
    step_diagnostics = checkpoint_diagnostics(steps, metrics, diagnostics, experiments) if steps is not None else None
    render, caption = NN_TABLES[name]
    write_nn_table(render(bounds, metrics, experiments, diagnostics, steps=steps, step_diagnostics=step_diagnostics),
                   Path(table_path).with_suffix(""), caption=caption)


def figure_r(bound_paths: Sequence[str], experiments: Mapping[str, Mapping], figure_path, metric_paths: Sequence[str] = ()) -> None:
    """Rule ``nn_figure_r``: each experiment's claim (its pre-registered test's ε_LB) against r, one
    panel per (dataset, split), one line per experiment, the claim's perfect-prediction ceiling of
    each (m, L) dashed; the plotted numbers, Theorem 4.2's beside them, with each experiment's
    accuracies and flags (:mod:`.diagnostics`), as ``.csv`` beside it."""
    from ..report.nn_figures import epsilon_vs_r_figure  # matplotlib, for this rule only

    bounds = with_ceilings(read_concat(bound_paths, schemas.BOUNDS))
    diagnostics = experiment_diagnostics(bounds, read_concat(metric_paths, schemas.RUN_METRICS), experiments) if metric_paths else None
    epsilon_vs_r_figure(bounds, experiments, Path(figure_path).with_suffix(""), diagnostics)


def summary_figure(name: str, table_paths: Mapping[str, str], figure_path) -> None:
    """Rule ``nn_summary_figure``: the figure ``name`` of :data:`unlearn_audit.catalogue.SUMMARY_FIGURES`
    from the CSVs of the tables it reads (``table_paths``: name → path; the first of its tables is
    required), with the numbers it plots as ``.csv`` beside it."""
    from ..report.summary_figures import audit_size_figure, finding_figure  # matplotlib, for this rule only

    _, (first, *others) = catalogue.SUMMARY_FIGURES[name]
    if first not in table_paths:
        raise ValueError(f"figure {name!r} reads {first}.csv, which this run does not make")
    frames = {t: pd.read_csv(table_paths[t]) for t in (first, *others) if t in table_paths}
    stem = Path(figure_path).with_suffix("")
    if name == "finding":
        finding_figure(frames[first], stem, {t: frames[t] for t in others if t in frames})
    else:
        audit_size_figure(frames[first], stem)
