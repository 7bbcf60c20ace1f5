"""Auditors: predictors of the secret sign vector turned into overlaps and bounds (Sections 5, 8).

numpy, scipy and pandas; never torch.

* :mod:`.gaussian_fit` — the one per-side Gaussian fit, with the one documented variance floor;
* :mod:`.runs` — the runs of an audit: sign vectors per phase, score matrices, phase guards;
* :mod:`.batchwise` — Algorithm 2 (batch scores Λ_j, guesses for each r, overlaps, bounds, the
  pre-registered cell);
* :mod:`.weight_space` — App. H.1's weight-space auditor, the projection auditor of the
  Gaussian-unlearning audit, and the one Algorithm-1 (m = r = 2) convention.
"""

from .batchwise import DEFAULT_CELL, audit_tables, batch_scores, batchwise_overlaps, bounds_table, fit_table
from .gaussian_fit import Gaussian, PerExampleFit, fit_gaussian, fit_per_example
from .runs import sign_matrix, sign_table
from .weight_space import (
    ProjectionAudit,
    ProjectionSettings,
    TwoPointAlgorithm1,
    WeightSpaceAudit,
    WeightSpaceSettings,
    algorithm1_two_point,
    audit_projection,
    audit_release,
    audit_weight_space,
)

__all__ = [
    "DEFAULT_CELL",
    "Gaussian",
    "PerExampleFit",
    "ProjectionAudit",
    "ProjectionSettings",
    "TwoPointAlgorithm1",
    "WeightSpaceAudit",
    "WeightSpaceSettings",
    "algorithm1_two_point",
    "audit_projection",
    "audit_release",
    "audit_tables",
    "audit_weight_space",
    "batch_scores",
    "batchwise_overlaps",
    "bounds_table",
    "fit_gaussian",
    "fit_per_example",
    "fit_table",
    "sign_matrix",
    "sign_table",
]
