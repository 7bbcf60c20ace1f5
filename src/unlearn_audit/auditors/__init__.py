"""Auditors: predictors of the secret sign vector turned into overlaps and bounds (Sections 5, 8).

numpy, scipy and pandas; never torch.

* :mod:`.gaussian_fit` — the one per-side Gaussian fit, with the one documented variance floor;
* :mod:`.runs` — the runs of an audit: sign vectors per phase, score matrices, phase guards;
* :mod:`.batchwise` — Algorithm 2 (batch scores Λ_j, guesses for each r, overlaps, bounds, the
  pre-registered cell);
* :mod:`.joint` — Algorithm 3 (one Gaussian per candidate sign vector S̃ ∈ S_m, the argmax guess,
  r = m, bounds on the (ε, δ) unlearning claim);
* :mod:`.pairwise` — App. A.3's pairwise baseline (Algorithm 3 with m = 2, Eq. 3);
* :mod:`.weight_space` — App. H.1's weight-space auditor, the projection auditor of the
  Gaussian-unlearning audit, and the one Algorithm-1 (m = r = 2) convention.
"""

from .batchwise import DEFAULT_CELL, audit_tables, batch_scores, batchwise_overlaps, bounds_table, fit_table
from .gaussian_fit import Gaussian, PerClassFit, PerExampleFit, fit_gaussian, fit_per_class, fit_per_example
from .joint import joint_audit_tables, joint_fit, joint_guesses
from .pairwise import PairwiseAudit, pairwise_audit, pairwise_audit_table
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
    "PairwiseAudit",
    "PerClassFit",
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
    "fit_per_class",
    "fit_per_example",
    "fit_table",
    "joint_audit_tables",
    "joint_fit",
    "joint_guesses",
    "pairwise_audit",
    "pairwise_audit_table",
    "sign_matrix",
    "sign_table",
]
