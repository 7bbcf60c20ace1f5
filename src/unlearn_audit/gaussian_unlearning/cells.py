"""Workflow cells of the second paper's experiments (DESIGN §7): one x-value per call.

Each cell runs all replications at one grid point and returns the raw per-replication
records as a DataFrame; seeds come from :mod:`unlearn_audit.seeds`, keyed by
(experiment, grid point), so cells are independent and reproducible one by one.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Mapping

import pandas as pd

from ..seeds import seed_sequence
from .audit import AuditSettings, audit_table_rows, make_privacy_pair
from .experiments import GLMUnlearningConfig, ged_vs_epsilon_cell, ged_vs_m_cell, ged_vs_p_cell

__all__ = ["EXPERIMENTS", "model_config", "run_cell", "run_audit"]

EXPERIMENTS = ("ged_vs_p", "ged_vs_eps", "ged_vs_m")


def _build(cls, values: Mapping, what: str):
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown {what} option(s) {unknown}; known: {sorted(known)}")
    vals = dict(values)
    if "noises" in vals:
        vals["noises"] = tuple(vals["noises"])
    return cls(**vals)


def model_config(values: Mapping) -> GLMUnlearningConfig:
    """GLMUnlearningConfig from a config mapping (unknown keys refused)."""
    return _build(GLMUnlearningConfig, values, "gaussian_unlearning.model")


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


def run_audit(spec: Mapping, model: Mapping, root_seed: int) -> pd.DataFrame:
    """The audit table (certified mechanism and two positive controls) as a DataFrame."""
    cfg = model_config(model)
    pair = make_privacy_pair(
        seed_sequence(root_seed, "gaussian_unlearning:audit", "data"),
        int(spec["n"]), int(spec["p"]), int(spec["m"]), loss=cfg.loss, lam=cfg.lam, nu=cfg.nu, c=cfg.c,
    )
    settings = _build(AuditSettings, spec.get("settings", {}), "gaussian_unlearning.audit.settings")
    rows = audit_table_rows(pair, float(spec["epsilon"]), seed_sequence(root_seed, "gaussian_unlearning:audit", "audit"), settings, delta=float(spec.get("delta", 1e-5)))
    return pd.DataFrame(rows)
