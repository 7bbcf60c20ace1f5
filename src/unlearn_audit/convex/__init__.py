"""Convex certified-unlearning audits (Section 8, App. H–I, Table 2).

* :mod:`.losses` — cubic (Eq. 18), logistic (App. H.4.2) and squared losses with the constants
  μ, L, M of Sekhari et al. (2021), Lemma 3.
* :mod:`.perturbed_newton` — Sekhari et al. (2021) Algorithm 1 with σ from the exact Gaussian
  mechanism for sensitivity γ = 2Mm²L²/(μ³n²).
* :mod:`.output_perturbation` — Π_{C0}(x̂) + N(0, σ²I) with Δ = 2·C0 (App. I.1).
* :class:`~unlearn_audit.stats.gaussian_release.GaussianRelease` — the audited pair of Gaussian
  releases (Definition H.1), which the mechanisms return.
* :mod:`.experiments` — the Table 2 instances, one audit function per mechanism.

The auditor of App. H.1 is :mod:`unlearn_audit.auditors.weight_space`.  numpy/scipy only.
Bounds are never halved here (no transitivity step, Section 8).
"""

from .experiments import (
    TABLE2_EPSILON_LB,
    TABLE2_EPSILONS,
    TABLE2_SIGMA,
    ConvexAuditResult,
    CubicNewtonParams,
    LogisticNewtonParams,
    OutputPerturbationParams,
    audit_cubic_newton,
    audit_epsilon_sweep,
    audit_logistic_newton,
    audit_output_perturbation,
    build_cubic_newton,
    build_logistic_newton,
    build_output_perturbation,
    cubic_data,
    linear_regression_data,
    logistic_boundary_data,
)
from .losses import ConvexData, ConvexLoss, CubicLoss, LogisticLoss, SquaredLoss, add_intercept
from .output_perturbation import OutputPerturbation, output_perturbation, output_perturbation_sigma, project_l2_ball
from .perturbed_newton import (
    NewtonUnlearning,
    check_epsilon_delta,
    newton_correction,
    newton_sensitivity,
    perturbed_newton,
)
from ..stats.gaussian_release import GaussianRelease

__all__ = [
    "ConvexAuditResult",
    "ConvexData",
    "ConvexLoss",
    "CubicLoss",
    "CubicNewtonParams",
    "GaussianRelease",
    "LogisticLoss",
    "LogisticNewtonParams",
    "NewtonUnlearning",
    "OutputPerturbation",
    "OutputPerturbationParams",
    "SquaredLoss",
    "TABLE2_EPSILONS",
    "TABLE2_EPSILON_LB",
    "TABLE2_SIGMA",
    "add_intercept",
    "audit_cubic_newton",
    "audit_epsilon_sweep",
    "audit_logistic_newton",
    "audit_output_perturbation",
    "build_cubic_newton",
    "build_logistic_newton",
    "build_output_perturbation",
    "check_epsilon_delta",
    "cubic_data",
    "linear_regression_data",
    "logistic_boundary_data",
    "newton_correction",
    "newton_sensitivity",
    "output_perturbation",
    "output_perturbation_sigma",
    "perturbed_newton",
    "project_l2_ball",
]
