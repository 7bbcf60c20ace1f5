"""One Table-2 cell per call, for the workflow: (mechanism, ε) → decisions and a summary row.

Each cell draws from its own SeedSequence stream keyed by (mechanism, ε), so cells are
independent and a rerun of one cell reproduces it exactly.
"""

from __future__ import annotations

from dataclasses import fields
from typing import Callable, Mapping

import numpy as np
import pandas as pd

from ..seeds import generator
from .experiments import (
    AuditSettings,
    ConvexAuditResult,
    CubicNewtonParams,
    LogisticNewtonParams,
    OutputPerturbationParams,
    audit_cubic_newton,
    audit_logistic_newton,
    audit_output_perturbation,
)

__all__ = ["MECHANISMS", "audit_cell", "make_params", "make_settings"]

MECHANISMS: dict[str, tuple[Callable[..., ConvexAuditResult], type]] = {
    "cubic_newton": (audit_cubic_newton, CubicNewtonParams),
    "output_perturbation": (audit_output_perturbation, OutputPerturbationParams),
    "logistic_newton": (audit_logistic_newton, LogisticNewtonParams),
}


def _build(cls: type, values: Mapping, what: str):
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"unknown {what} parameter(s) {unknown}; known: {sorted(known)}")
    return cls(**dict(values))


def make_params(mechanism: str, values: Mapping):
    if mechanism not in MECHANISMS:
        raise ValueError(f"unknown convex mechanism {mechanism!r}; known: {sorted(MECHANISMS)}")
    return _build(MECHANISMS[mechanism][1], values, mechanism)


def make_settings(values: Mapping) -> AuditSettings:
    return _build(AuditSettings, values, "auditor")


def audit_cell(mechanism: str, epsilon: float, params: Mapping, settings: Mapping, root_seed: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Audit ``mechanism`` certified at ``epsilon``: per-draw decisions and one summary row."""
    audit, _ = MECHANISMS[mechanism] if mechanism in MECHANISMS else (None, None)
    p = make_params(mechanism, params)
    s = make_settings({**dict(settings), "keep_draws": True})
    rng = generator(root_seed, f"convex:{mechanism}:{float(epsilon)!r}", "audit")
    res = audit(float(epsilon), rng, params=p, settings=s)
    a = res.audit
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
