"""Gaussian certified unlearning in high dimensions (arXiv 2510.13094; docs/calibrations.md §12–13).

One-step Newton removal plus Gaussian noise N(0, (r/ε)² I) for L2-regularised GLMs, the
isotropic ℓ2-Laplace baseline of Zou et al. (2025), the accuracy measures GED/UED, the
paper's simulations, and an audit of the mechanism against its exactly known μ.

Modules: :mod:`.glm` (losses, ERM, Newton fit), :mod:`.removal` (Newton removal, retrain),
:mod:`.noise` (calibration and samplers), :mod:`.data` (synthetic designs),
:mod:`.estimators` (GED/UED), :mod:`.experiments` (replications and log–log slopes),
:mod:`.pair` (the privacy pair of one removal), :mod:`.calibration` (σ of the certified
mechanism and of its two controls) and :mod:`.audit` (the audit table; the auditor is
:class:`unlearn_audit.auditors.weight_space.WeightSpaceAudit`; ``ProjectionAudit`` and the
deprecated ``audit_projection`` stay exported for one version).

Depends on numpy and scipy only.
"""

from .audit import ProjectionAudit, audit_projection, audit_table_rows
from .calibration import MECHANISMS, mechanism_sigma
from .pair import PrivacyPair, make_privacy_pair
from .data import GLMData, make_data, make_test_points
from .estimators import (
    RemovalPlan,
    error_divergence,
    estimate_error_divergences,
    generalization_error_divergence,
    unlearning_error_divergence,
)
from .experiments import (
    GLMUnlearningConfig,
    SlopeFit,
    clip_sensitivity,
    error_curves,
    fit_loglog_slope,
    ged_vs_epsilon_cell,
    ged_vs_m_cell,
    ged_vs_p_cell,
    loglog_slopes,
    run_replication,
    slopes_table,
)
from .glm import LOSSES, LogisticLoss, NewtonFit, PoissonLoss, RegularizedGLM, RidgeLoss, error_loss_name, fit_newton, get_loss
from .noise import (
    NOISE_KINDS,
    noise_radius,
    noise_scale,
    sample_gaussian_noise,
    sample_l2_laplace_noise,
    sample_noise,
)
from .removal import RemovalResult, newton_removal, remove, retrain, sample_removal_set

__all__ = [
    "MECHANISMS",

    "PrivacyPair",
    "ProjectionAudit",
    "audit_projection",
    "audit_table_rows",
    "make_privacy_pair",
    "mechanism_sigma",
    "GLMData",
    "make_data",
    "make_test_points",
    "RemovalPlan",
    "error_divergence",
    "estimate_error_divergences",
    "generalization_error_divergence",
    "unlearning_error_divergence",
    "GLMUnlearningConfig",
    "SlopeFit",
    "clip_sensitivity",
    "error_curves",
    "fit_loglog_slope",
    "ged_vs_epsilon_cell",
    "ged_vs_m_cell",
    "ged_vs_p_cell",
    "loglog_slopes",
    "run_replication",
    "slopes_table",
    "LOSSES",
    "LogisticLoss",
    "NewtonFit",
    "PoissonLoss",
    "RegularizedGLM",
    "RidgeLoss",
    "error_loss_name",
    "fit_newton",
    "get_loss",
    "NOISE_KINDS",
    "noise_radius",
    "noise_scale",
    "sample_gaussian_noise",
    "sample_l2_laplace_noise",
    "sample_noise",
    "RemovalResult",
    "newton_removal",
    "remove",
    "retrain",
    "sample_removal_set",
]
