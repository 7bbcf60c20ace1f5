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

from .._lazy import lazy_exports

#: public name -> the submodule that defines it (imported on first use)
_EXPORTS = {
    "DEFAULT_CELL": ".batchwise",
    "audit_tables": ".batchwise",
    "batch_scores": ".batchwise",
    "batchwise_overlaps": ".batchwise",
    "bounds_table": ".batchwise",
    "fit_table": ".batchwise",
    "Gaussian": ".gaussian_fit",
    "PerClassFit": ".gaussian_fit",
    "PerExampleFit": ".gaussian_fit",
    "fit_gaussian": ".gaussian_fit",
    "fit_per_class": ".gaussian_fit",
    "fit_per_example": ".gaussian_fit",
    "joint_audit_tables": ".joint",
    "joint_fit": ".joint",
    "joint_guesses": ".joint",
    "PairwiseAudit": ".pairwise",
    "pairwise_audit": ".pairwise",
    "pairwise_audit_table": ".pairwise",
    "sign_matrix": ".runs",
    "sign_table": ".runs",
    "ProjectionAudit": ".weight_space",
    "ProjectionSettings": ".weight_space",
    "TwoPointAlgorithm1": ".weight_space",
    "WeightSpaceAudit": ".weight_space",
    "WeightSpaceSettings": ".weight_space",
    "algorithm1_two_point": ".weight_space",
    "audit_projection": ".weight_space",
    "audit_release": ".weight_space",
    "audit_weight_space": ".weight_space",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
