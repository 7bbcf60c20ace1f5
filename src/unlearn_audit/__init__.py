"""unlearn-audit: membership-inference audits of machine-unlearning algorithms.

The public API, importable from the package top without torch::

    from unlearn_audit import epsilon_lower_bound
    res = epsilon_lower_bound([2050, 2011, 1990], m=4500, r=3000, statistic="mean", zeta=0.05)

* statistics (:mod:`unlearn_audit.stats`, numpy/scipy only): :func:`epsilon_lower_bound`
  (Theorem 4.2, Lemma C.1; ``method="exact"`` / ``"mgf"`` for the tighter δ = 0 tests of
  docs/bounds.md), :func:`mu_lower_bound` (μ-GDP from the overlaps),
  :func:`pairwise_epsilon_lower_bound` (Eq. 3),
  :func:`gdp_mu_lower_bound` and the other μ-GDP conversions, and their forms for an (ε, δ)
  unlearning claim, :func:`unlearning_epsilon_lower_bound` and
  :func:`pairwise_unlearning_epsilon_lower_bound` (Lemma 4.1 with δ); the trade-off curves
  :func:`gdp_tradeoff` (G_μ of μ-GDP) and :func:`dp_tradeoff` (f_{ε,δ} of (ε, δ)-DP);
* auditors (:mod:`unlearn_audit.auditors`): the batchwise auditor of Algorithm 2, the joint
  sign-vector auditor of Algorithm 3, the pairwise baseline of App. A.3 and the weight-space
  auditors of App. H.1.

Training, models and unlearning (torch) live in :mod:`unlearn_audit.training`,
:mod:`unlearn_audit.models` and :mod:`unlearn_audit.unlearning`; the workflow's steps in
:mod:`unlearn_audit.pipeline`.
"""

from .auditors import (
    PairwiseAudit,
    PerExampleFit,
    WeightSpaceAudit,
    audit_projection,
    audit_tables,
    audit_weight_space,
    batch_scores,
    bounds_table,
    fit_per_example,
    fit_table,
    joint_audit_tables,
    pairwise_audit,
    pairwise_audit_table,
    sign_table,
)
from .stats.bounds import (
    EpsilonBound,
    PairwiseBound,
    audit_tail_bound,
    epsilon_lower_bound,
    gdp_delta,
    gdp_epsilon,
    gdp_mu_lower_bound,
    gdp_mu_lower_bound_from_accuracy,
    pairwise_epsilon_lower_bound,
    pairwise_unlearning_epsilon_lower_bound,
    unlearning_epsilon_lower_bound,
)
from .stats.gdp_overlaps import MuBound, mu_lower_bound
from .stats.tradeoff import dp_tradeoff, gdp_tradeoff

__version__ = "0.1.0"

__all__ = [
    "EpsilonBound",
    "MuBound",
    "PairwiseAudit",
    "PairwiseBound",
    "PerExampleFit",
    "WeightSpaceAudit",
    "audit_projection",
    "audit_tables",
    "audit_tail_bound",
    "audit_weight_space",
    "batch_scores",
    "bounds_table",
    "dp_tradeoff",
    "epsilon_lower_bound",
    "fit_per_example",
    "fit_table",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_mu_lower_bound",
    "gdp_mu_lower_bound_from_accuracy",
    "gdp_tradeoff",
    "joint_audit_tables",
    "mu_lower_bound",
    "pairwise_audit",
    "pairwise_audit_table",
    "pairwise_epsilon_lower_bound",
    "pairwise_unlearning_epsilon_lower_bound",
    "sign_table",
    "unlearning_epsilon_lower_bound",
]
