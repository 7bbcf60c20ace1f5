"""Workflow steps of the convex audits (Section 8, App. H–I, Table 2); one function per rule.

* :func:`audit` (rule ``convex_audit``) — one (mechanism, ε) cell: per-draw decisions and a
  summary row, from its own SeedSequence stream keyed by (mechanism, ε), so cells are
  independent and a rerun of one cell reproduces it exactly;
* :func:`table` (rule ``convex_table``) and :func:`figure` (rule ``convex_figure``);
* :func:`sweep_table` (rule ``convex_sweep``) — App. H.4's sweeps of Lemma 3's ratio ρ.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from .. import catalogue, schemas
from ..auditors.weight_space import WeightSpaceSettings
from ..checks import dataclass_from_mapping
from ..convex.experiments import (
    ConvexAuditResult,
    CubicNewtonParams,
    LogisticNewtonParams,
    OutputPerturbationParams,
    audit_cubic_newton,
    audit_logistic_newton,
    audit_output_perturbation,
)
from ..io import read_concat, write_csv, write_parquet
from ..seeds import generator

__all__ = ["MECHANISMS", "make_params", "make_settings", "audit_cell", "audit", "table", "figure", "sweep_frame", "sweep_table"]

#: The caption of App. H.4's sweep table.
SWEEP_CAPTION = ("App. H.4: Lemma 3's ratio rho = |w_bar - w_r| / gamma over each sweep's grid (the other parameters "
                 "as configured); largest: the sweep's largest rho; configured: the point the audits use")

#: The audit and parameter class of every mechanism of :data:`unlearn_audit.catalogue.CONVEX_MECHANISMS`.
MECHANISMS: dict[str, tuple[Callable[..., ConvexAuditResult], type]] = {
    "cubic_newton": (audit_cubic_newton, CubicNewtonParams),
    "output_perturbation": (audit_output_perturbation, OutputPerturbationParams),
    "logistic_newton": (audit_logistic_newton, LogisticNewtonParams),
}
if set(MECHANISMS) != set(catalogue.CONVEX_MECHANISMS):  # pragma: no cover - a programming error, caught by any import
    raise ImportError(f"convex mechanisms {sorted(MECHANISMS)} differ from the catalogue's {sorted(catalogue.CONVEX_MECHANISMS)}")


def make_params(mechanism: str, values: Mapping):
    """The mechanism's parameter dataclass from a config mapping (unknown keys refused)."""
    if mechanism not in MECHANISMS:
        raise ValueError(f"unknown convex mechanism {mechanism!r}; known: {sorted(MECHANISMS)}")
    return dataclass_from_mapping(MECHANISMS[mechanism][1], values, f"{mechanism} parameter(s)")


def make_settings(values: Mapping) -> WeightSpaceSettings:
    """The weight-space auditor's settings from a config mapping (unknown keys refused)."""
    return dataclass_from_mapping(WeightSpaceSettings, values, "auditor setting(s)")


def audit_cell(mechanism: str, epsilon: float, params: Mapping, settings: Mapping, root_seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Audit ``mechanism`` certified at ``epsilon``: per-draw decisions and one summary row."""
    p = make_params(mechanism, params)
    audit_fn = MECHANISMS[mechanism][0]
    s = make_settings({**dict(settings), "keep_draws": True})
    rng = generator(root_seed, f"convex:{mechanism}:{float(epsilon)!r}", "audit")
    res = audit_fn(float(epsilon), rng, params=p, settings=s)
    a = res.test
    decisions = pd.DataFrame(
        {
            "mechanism": mechanism,
            "epsilon": float(epsilon),
            "sigma": res.sigma,
            "draw": np.arange(a.n_test_draws, dtype=np.int64),
            "truth": np.asarray(a.labels, dtype=np.int8),
            "decision": np.asarray(a.predictions, dtype=np.int8),
        }
    )
    return decisions, pd.DataFrame([res.summary()])


def audit(mechanism: str, epsilon: float, params: Mapping, settings: Mapping, zeta: float, root_seed: int, decisions_path, summary_path) -> None:
    """Rule ``convex_audit``: write the cell's decisions and summary (ζ from the config's one place)."""
    decisions, summary = audit_cell(mechanism, epsilon, params, {**dict(settings), "zeta": zeta}, root_seed)
    write_parquet(decisions, decisions_path, schemas.CONVEX_DECISIONS)
    write_parquet(summary, summary_path, schemas.CONVEX_SUMMARY)


def table(name: str, summary_paths: Sequence[str], table_path, details_path) -> None:
    """Rule ``convex_table``: Table 2a/2b (and the logistic-loss table) and the full summaries."""
    from ..report import write_table
    from ..report.convex_tables import TABLE_CAPTIONS, convex_table

    summaries = read_concat(summary_paths)
    write_table(convex_table(summaries), Path(table_path).with_suffix(""), caption=TABLE_CAPTIONS.get(name, name))
    write_csv(summaries.sort_values("epsilon"), details_path)


def figure(summary_paths: Sequence[str], figure_path: str | os.PathLike) -> None:
    """Rule ``convex_figure``: ε_LB against the certified ε."""
    from ..report.convex_tables import convex_figure

    convex_figure(read_concat(summary_paths), Path(figure_path).with_suffix(""))


def sweep_frame(sweeps: Sequence[Mapping], mechanisms: Mapping[str, Mapping]) -> pd.DataFrame:
    """Every point of every sweep (App. H.4): ρ over the sweep's ``grid`` around the mechanism's
    configured ``params``; ``largest`` marks the sweep's largest ρ, ``configured`` the configured point."""
    from ..convex.sweep import SWEEPS, largest, rho_sweep

    frames = []
    for sweep in sweeps:
        mechanism = sweep["mechanism"]
        base = dict(mechanisms.get(mechanism, {}).get("params", {}))
        rows = rho_sweep(mechanism, base, sweep["grid"])
        best = largest(rows)
        configured = SWEEPS[mechanism][0](**base)  # the audited instance, defaults filled in
        for row in rows:
            row["largest"] = row is best
            row["configured"] = all(row[k] == getattr(configured, k) for k in sweep["grid"])
        frames.append(pd.DataFrame(rows).assign(sweep=sweep.get("label") or mechanism))
    frame = pd.concat(frames, ignore_index=True)
    first = ["sweep", "mechanism"]
    last = ["rho", "distance", "gamma", "feasible", "largest", "configured", "reason"]
    return frame[first + [c for c in frame.columns if c not in first + last] + last]


def sweep_table(sweeps: Sequence[Mapping], mechanisms: Mapping[str, Mapping], table_path) -> None:
    """Rule ``convex_sweep``: App. H.4's sweep table (one row per grid point)."""
    from ..report import write_table

    write_table(sweep_frame(sweeps, mechanisms), Path(table_path).with_suffix(""), caption=SWEEP_CAPTION)
