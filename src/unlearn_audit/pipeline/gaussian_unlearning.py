"""Workflow steps of the second paper's experiments (DESIGN §7); one function per rule.

* :func:`cell` (rule ``gaussian_unlearning_cell``) — all replications at one grid value; seeds from
  :mod:`unlearn_audit.seeds`, keyed by (experiment, grid point), so cells are independent;
* :func:`gather` (rule ``gaussian_unlearning_gather``) — one experiment's raw results and figure;
* :func:`slopes` (rule ``gaussian_unlearning_slopes``) — fitted log–log slopes;
* :func:`audit` (rule ``gaussian_unlearning_audit``) — the audit of the mechanism, at the
  config's ζ (the one place every audit takes its level from).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from ..auditors.weight_space import ProjectionSettings
from ..checks import check_zeta, dataclass_from_mapping
from ..gaussian_unlearning.audit import audit_table_rows, make_privacy_pair
from ..gaussian_unlearning.experiments import GLMUnlearningConfig, ged_vs_epsilon_cell, ged_vs_m_cell, ged_vs_p_cell, slopes_table
from ..io import read_concat, write_parquet
from ..report import write_table
from ..report.gaussian_unlearning import audit_table, error_figure
from ..seeds import seed_sequence

__all__ = ["EXPERIMENTS", "model_config", "audit_settings", "run_cell", "run_audit", "cell", "gather", "slopes", "audit"]

EXPERIMENTS = ("ged_vs_p", "ged_vs_eps", "ged_vs_m")

_FIGURES = {
    "ged_vs_p": ("p", "m", "GED vs dimension (n = p)"),
    "ged_vs_eps": ("epsilon", "m", "GED vs privacy level"),
    "ged_vs_m": ("m", "p", "GED vs number of removed points"),
}


def model_config(values: Mapping) -> GLMUnlearningConfig:
    """GLMUnlearningConfig from a config mapping (unknown keys refused)."""
    return dataclass_from_mapping(GLMUnlearningConfig, values, "gaussian_unlearning.model option(s)")


def audit_settings(values: Mapping, zeta: float) -> ProjectionSettings:
    """The projection auditor's settings from ``audit.settings``, at level ``zeta``."""
    values = dict(values or {})
    if "zeta" in values:
        raise ValueError("gaussian_unlearning.audit.settings.zeta: the level of every bound is the top-level 'zeta'")
    return dataclass_from_mapping(ProjectionSettings, {**values, "zeta": check_zeta(zeta)}, "gaussian_unlearning.audit.settings option(s)")


def run_cell(experiment: str, x: float, spec: Mapping, model: Mapping, root_seed: int) -> pd.DataFrame:
    """All replications of ``experiment`` at grid value ``x`` (p for *_vs_p / *_vs_m, ε for vs_eps)."""
    cfg = model_config(model)
    reps = int(spec["replications"])
    records: list[dict] = []
    for rep in range(reps):
        seq = seed_sequence(root_seed, f"gaussian_unlearning:{experiment}:{x!r}", "data", "eval", rep)
        if experiment == "ged_vs_p":
            records += ged_vs_p_cell(int(x), rep, ms=tuple(spec["m"]), epsilon=float(spec["epsilon"]), config=cfg, seed=seq)
        elif experiment == "ged_vs_m":
            records += ged_vs_m_cell(int(x), rep, ms=tuple(spec["m"]), epsilon=float(spec["epsilon"]), config=cfg, seed=seq)
        elif experiment == "ged_vs_eps":
            records += ged_vs_epsilon_cell(rep, p=int(spec["p"]), m=int(spec["m"]), epsilons=(float(x),), config=cfg, seed=seq)
        else:
            raise ValueError(f"unknown experiment {experiment!r}; known: {EXPERIMENTS}")
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


def gather(experiment: str, cell_paths: Sequence[str], raw_path, figure_path: str | os.PathLike) -> None:
    """Rule ``gaussian_unlearning_gather``: the experiment's raw results and its figure."""
    raw = read_concat(cell_paths)
    write_parquet(raw, raw_path)
    x, by, title = _FIGURES[experiment]
    error_figure(raw, x, "ged", by, Path(figure_path).with_suffix(""), title)


def slopes(raw_paths: Sequence[str], table_path) -> None:
    """Rule ``gaussian_unlearning_slopes``: one fitted log–log line per experiment and noise."""
    raw = {Path(f).stem: pd.read_parquet(f) for f in raw_paths}
    write_table(slopes_table(raw), Path(table_path).with_suffix(""), caption="Log-log slopes of mean GED/UED (OLS, standard errors)")


def audit(spec: Mapping, model: Mapping, root_seed: int, zeta: float, table_path, raw_path) -> None:
    """Rule ``gaussian_unlearning_audit``: μ lower bounds vs the truth, at the config's ζ."""
    rows = run_audit(spec, model, root_seed, zeta)
    write_parquet(rows, raw_path)
    write_table(audit_table(rows), Path(table_path).with_suffix(""), caption="Audit of one-step Newton + Gaussian noise: mu lower bounds vs the truth")
