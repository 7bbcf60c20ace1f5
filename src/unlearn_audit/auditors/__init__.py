"""Auditors: predictors of the secret sign vector turned into overlaps and bounds (Sections 5, 8).

numpy, scipy and pandas; never torch.

* :mod:`.gaussian_fit` — the one per-side Gaussian fit, with the one documented variance floor;
* :mod:`.runs` — the runs of an audit: sign vectors per phase, score matrices, phase guards,
  :class:`~.runs.PhaseRuns` (one phase checked once);
* :mod:`.batchwise` — Algorithm 2 (per-example fits, batch scores Λ_j, guesses for each r) and its
  strategy :class:`~.batchwise.Batchwise`;
* :mod:`.joint` — Algorithm 3 (one Gaussian per candidate sign vector S̃ ∈ S_m, the argmax guess,
  r = m) and its strategy :class:`~.joint.Joint`;
* :mod:`.pairwise` — App. A.3's pairwise baseline (Algorithm 3 with m = 2, Eq. 3), strategy
  :class:`~.pairwise.Pairwise`;
* :mod:`.audit` — :class:`~.audit.SignVectorAudit`, the one audit object (overlaps, ε and μ
  bounds, tables) over any of the three strategies, and :func:`~.audit.bounds_table`;
* :mod:`.tables` — score and sign tables in, OVERLAPS and BOUNDS out, through that object (the
  workflow's rules and the CLI);
* :mod:`.calibrated_r` — the guess budget r chosen by leave-one-out on the calibration runs alone;
* :mod:`.signal` — the membership signal in a set of runs' scores (in/out gap, spread, d′);
* :mod:`.weight_space` — :class:`~.weight_space.WeightSpaceAudit`, the one weight-space audit of a
  Gaussian privacy pair (:class:`~unlearn_audit.stats.gaussian_release.GaussianRelease`, the unlearned
  side first): App. H.1's likelihood-ratio test, the projection test of the Gaussian-unlearning
  audit and Algorithm 1 with m = r = 2; its results are in :mod:`.weight_space_results`, the
  deprecated shapes of its old functions in :mod:`.weight_space_legacy`.
"""

from .._lazy import lazy_exports

#: public name -> the submodule that defines it (imported on first use)
_EXPORTS = {
    "CellBounds": ".audit",
    "calibrated_r": ".calibrated_r",
    "loo_overlaps": ".calibrated_r",
    "SignVectorAudit": ".audit",
    "bounds_table": ".audit",
    "cell_bounds": ".audit",
    "claim_bound": ".audit",
    "claim_ceiling": ".audit",
    "DEFAULT_CELL": ".batchwise",
    "AuditStrategy": ".strategy",
    "Batchwise": ".batchwise",
    "batch_scores": ".batchwise",
    "batchwise_overlaps": ".batchwise",
    "fit_table": ".batchwise",
    "per_example_fit": ".batchwise",
    "Gaussian": ".gaussian_fit",
    "PerClassFit": ".gaussian_fit",
    "PerExampleFit": ".gaussian_fit",
    "fit_gaussian": ".gaussian_fit",
    "fit_per_class": ".gaussian_fit",
    "fit_per_example": ".gaussian_fit",
    "Joint": ".joint",
    "joint_fit": ".joint",
    "joint_guesses": ".joint",
    "Pairwise": ".pairwise",
    "PairwiseAudit": ".pairwise",
    "PhaseRuns": ".runs",
    "phase_runs": ".runs",
    "sign_matrix": ".runs",
    "sign_table": ".runs",
    "SIGNAL_COLUMNS": ".signal",
    "membership_signal": ".signal",
    "audit_tables": ".tables",
    "joint_audit_tables": ".tables",
    "joint_bounds": ".tables",
    "joint_overlaps": ".tables",
    "pairwise_audit": ".tables",
    "pairwise_audit_table": ".tables",
    "LikelihoodRatioTest": ".weight_space_results",
    "ProjectionAudit": ".weight_space_legacy",
    "ProjectionSettings": ".weight_space_legacy",
    "TwoPointAlgorithm1": ".weight_space_results",
    "WeightSpaceAudit": ".weight_space",
    "WeightSpaceAuditResult": ".weight_space_legacy",
    "WeightSpaceSettings": ".weight_space",
    "algorithm1_two_point": ".weight_space_results",
    "audit_projection": ".weight_space",
    "audit_release": ".weight_space",
    "audit_weight_space": ".weight_space",
}

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
