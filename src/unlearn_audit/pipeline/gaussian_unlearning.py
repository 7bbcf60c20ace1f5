"""Workflow steps of the second paper's experiments (docs/calibrations.md §12–13); one function per rule.

* :func:`cell` (rule ``gaussian_unlearning_cell``) — all replications at one p, for every
  aspect ratio n/p (``n_over_p``) and accuracy loss (``prob_clip``) of the grid; seeds from
  :mod:`unlearn_audit.seeds`, keyed by (experiment, p), so the p cells of ``ged_vs_p`` and
  ``ged_vs_m`` are independent, while ``ged_vs_eps`` is one cell at its one p that evaluates every
  ε of its grid on the same data, fits and noise draws (common random numbers: the ε curve is not
  blurred by independent draws, and each fit is computed once for all ε);
* :func:`gather` (rule ``gaussian_unlearning_gather``) — one experiment's raw results;
* :func:`figure` (rule ``gaussian_unlearning_figure``) — the GED or UED figure of one experiment,
  with the numbers it plots as CSV;
* :func:`slopes` (rule ``gaussian_unlearning_slopes``) — fitted log–log slopes, one per accuracy
  loss, n/p, Newton steps (``model.newton_steps``: one, the paper's; two, Zou et al.'s), noise and
  fixed m or p;
* :func:`audit` (rule ``gaussian_unlearning_audit``) — the audit of the mechanism, at the
  config's ζ (the one place every audit takes its level from).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from .. import catalogue
from ..auditors.weight_space import WeightSpaceSettings
from ..checks import check_zeta, dataclass_from_mapping
from ..gaussian_unlearning.audit import audit_table_rows
from ..gaussian_unlearning.pair import make_privacy_pair
from ..gaussian_unlearning.experiments import GLMUnlearningConfig, clip_sensitivity, error_curves, slopes_table, with_variants
from ..import_paths import import_object
from ..io import read_concat, write_parquet
from ..report import write_table
from ..report.gaussian_unlearning import audit_table, error_figure
from ..report.gaussian_unlearning import clip_figure as clip_figure_of
from ..seeds import seed_sequence

__all__ = ["EXPERIMENTS", "ERRORS", "FIGURES", "AUDIT_SETTINGS", "model_config", "audit_settings", "run_cell", "run_audit", "cell", "gather",
           "figure", "clip_figure", "has_clip_sweep", "slopes", "audit"]

EXPERIMENTS = tuple(catalogue.GAUSSIAN_UNLEARNING_EXPERIMENTS)
#: The two accuracy measures, each with a figure per experiment.
ERRORS = ("ged", "ued")

#: experiment → (x column, line column, what x is): its spec's figure axes
#: (:class:`unlearn_audit.catalogue.GUExperimentSpec`).
FIGURES = {name: (spec.x, spec.by, spec.what) for name, spec in catalogue.GAUSSIAN_UNLEARNING_EXPERIMENTS.items()}


def has_clip_sweep(spec: Mapping) -> bool:
    """Whether a ``ged_vs_m`` grid evaluates more than one accuracy loss (``prob_clip`` list): then
    its clip-sensitivity figure is drawn."""
    return len(spec.get("prob_clip") or []) > 1


def model_config(values: Mapping) -> GLMUnlearningConfig:
    """GLMUnlearningConfig from a config mapping (unknown keys refused)."""
    return dataclass_from_mapping(GLMUnlearningConfig, values, "gaussian_unlearning.model option(s)")


#: The keys of ``gaussian_unlearning.audit.settings`` (docs/configuration.md) and the
#: :class:`~unlearn_audit.auditors.weight_space.WeightSpaceSettings` field each one sets.
AUDIT_SETTINGS = {"n_calibration": "n_direction", "n_fit": "n_fit", "n_eval": "n_test_draws", "n_alg1_runs": "n_alg1_runs",
                  "chunk_size": "chunk_size"}


def audit_settings(values: Mapping, zeta: float) -> WeightSpaceSettings:
    """The projection audit's settings from ``audit.settings`` (keys :data:`AUDIT_SETTINGS`), at level ``zeta``."""
    values = dict(values or {})
    what = "gaussian_unlearning.audit.settings option(s)"
    if "zeta" in values:
        raise ValueError("gaussian_unlearning.audit.settings.zeta: the level of every bound is the top-level 'zeta'")
    unknown = sorted(set(values) - set(AUDIT_SETTINGS))
    if unknown:
        raise ValueError(f"unknown {what} {', '.join(map(repr, unknown))}; known: {', '.join(sorted(AUDIT_SETTINGS))}")
    fields = {AUDIT_SETTINGS[key]: value for key, value in values.items()}
    return dataclass_from_mapping(WeightSpaceSettings, {**fields, "zeta": check_zeta(zeta)}, what)


def _ms(spec: Mapping) -> tuple[int, ...]:
    m = spec["m"]
    return (int(m),) if isinstance(m, (int, float)) else tuple(int(v) for v in m)


def run_cell(experiment: str, x: float, spec: Mapping, model: Mapping, root_seed: int) -> pd.DataFrame:
    """All replications of ``experiment`` at dimension p = ``x`` (an ε-grid experiment, ``ged_vs_eps``:
    its ``spec["p"]``, every ε of ``spec["epsilons"]``), at every ``spec["n_over_p"]`` (default n = p)
    and accuracy loss ``spec["prob_clip"]`` (default: the model's ``prob_clip``), by the cell
    function of its :class:`~unlearn_audit.catalogue.GUExperimentSpec`."""
    if experiment not in EXPERIMENTS:
        raise ValueError(f"unknown experiment {experiment!r}; known: {EXPERIMENTS}")
    gu = catalogue.GAUSSIAN_UNLEARNING_EXPERIMENTS[experiment]
    cell_of = import_object(gu.cell, f"experiment {experiment!r}'s cell", "'package.module:function'")
    cfg = model_config(model)
    reps = int(spec["replications"])
    ratios = [float(r) for r in spec.get("n_over_p", [1.0])]
    clips = spec.get("prob_clip")
    clips = None if clips is None else [None if c is None else float(c) for c in clips]
    p = float(x)
    if gu.epsilon_grid and p != float(spec["p"]):
        raise ValueError(f"{experiment} runs at p = {spec['p']}, got p = {x}")
    records: list[dict] = []
    for rep in range(reps):
        # keyed by (experiment, p); n differs by its own key inside the replication
        seq = seed_sequence(root_seed, f"gaussian_unlearning:{experiment}:{p!r}", "data", replication=rep)
        for ratio in ratios:
            records += cell_of(p=int(p), replication=rep, ms=_ms(spec), **gu.epsilon_arguments(spec), config=cfg, seed=seq, n_over_p=ratio,
                               prob_clips=clips)
    return pd.DataFrame(records)


def run_audit(spec: Mapping, model: Mapping, root_seed: int, zeta: float) -> pd.DataFrame:
    """The audit table (certified mechanism and two positive controls) at level ``zeta``."""
    cfg = model_config(model)
    pair = make_privacy_pair(
        seed_sequence(root_seed, "gaussian_unlearning:audit", "data"),
        int(spec["n"]), int(spec["p"]), int(spec["m"]), loss=cfg.loss, lam=cfg.lam, nu=cfg.nu, c=cfg.c,
    )
    settings = audit_settings(spec.get("settings", {}), zeta)
    rows = audit_table_rows(pair, float(spec["epsilon"]), seed_sequence(root_seed, "gaussian_unlearning:audit", "audit"), settings, delta=float(spec.get("delta", 1e-5)))
    return pd.DataFrame(rows)


def cell(experiment: str, x: float, spec: Mapping, model: Mapping, root_seed: int, path) -> None:
    """Rule ``gaussian_unlearning_cell``."""
    write_parquet(run_cell(experiment, x, spec, model, root_seed), path)


def gather(cell_paths: Sequence[str], raw_path) -> None:
    """Rule ``gaussian_unlearning_gather``: the experiment's raw results, one file."""
    write_parquet(read_concat(cell_paths), raw_path)


def figure(experiment: str, error: str, raw_path, figure_path: str | os.PathLike) -> None:
    """Rule ``gaussian_unlearning_figure``: mean GED or UED of ``experiment`` against its grid, one
    panel per (accuracy loss, n/p, Newton steps), and the plotted numbers as CSV beside the figure."""
    if error not in ERRORS:
        raise ValueError(f"error must be one of {ERRORS}, got {error!r}")
    x, by, what = FIGURES[experiment]
    raw = with_variants(pd.read_parquet(raw_path))
    primary = raw[raw["prob_clip"].isna()] if "prob_clip" in raw.columns else raw
    if len(primary) and len(primary) < len(raw):  # the model's own loss; the clipped losses have their own figure
        raw = primary
    curves = error_curves(raw, x, error, by)
    error_figure(curves, Path(figure_path).with_suffix(""), f"{error.upper()} vs {what}")


def clip_figure(error: str, raw_path, figure_path: str | os.PathLike) -> None:
    """Rule ``gaussian_unlearning_clip_figure``: the slope of mean GED or UED against m for every
    clip c of the accuracy loss of the ``ged_vs_m`` grid (a sensitivity analysis: the l2-Laplace
    slope depends on c), beside the unclipped log-loss's; the plotted numbers as CSV beside it."""
    if error not in ERRORS:
        raise ValueError(f"error must be one of {ERRORS}, got {error!r}")
    slopes = clip_sensitivity(pd.read_parquet(raw_path), error)
    clip_figure_of(slopes, Path(figure_path).with_suffix(""), f"{error.upper()}-vs-m slope against the clip of the loss (sensitivity)")


def slopes(raw_paths: Sequence[str], table_path) -> None:
    """Rule ``gaussian_unlearning_slopes``: one fitted log–log line per experiment, accuracy loss,
    n/p, Newton steps, noise and fixed m or p."""
    raw = {Path(f).stem: pd.read_parquet(f) for f in raw_paths}
    write_table(slopes_table(raw), Path(table_path).with_suffix(""),
                caption="Log-log slopes of mean GED/UED (OLS, standard errors), per accuracy loss (error_loss), n/p and Newton steps")


def audit(spec: Mapping, model: Mapping, root_seed: int, zeta: float, table_path, raw_path) -> None:
    """Rule ``gaussian_unlearning_audit``: μ lower bounds vs the truth, at the config's ζ."""
    rows = run_audit(spec, model, root_seed, zeta)
    write_parquet(rows, raw_path)
    write_table(audit_table(rows), Path(table_path).with_suffix(""), caption="Audit of one-step Newton + Gaussian noise: mu lower bounds vs the truth")
