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
* auditors (:mod:`unlearn_audit.auditors`): :class:`SignVectorAudit` over one phase's runs each
  (:class:`PhaseRuns`), with its strategy, any :class:`AuditStrategy`: :class:`Batchwise`
  (Algorithm 2), :class:`Joint` (Algorithm 3) or :class:`Pairwise` (App. A.3), or a user's own;
  the weight-space audit of App. H.1 over one :class:`GaussianRelease` (:class:`WeightSpaceAudit`;
  :func:`audit_weight_space` and :func:`audit_projection` are its deprecated wrappers); every
  bound a :class:`Bound`.

Training, models and unlearning (torch) live in :mod:`unlearn_audit.training`,
:mod:`unlearn_audit.models` and :mod:`unlearn_audit.unlearning`; the workflow's steps in
:mod:`unlearn_audit.pipeline`.
"""

from ._lazy import lazy_exports

#: public name -> the submodule that defines it (imported on first use)
_EXPORTS = {
    "AuditStrategy": ".auditors",
    "Batchwise": ".auditors",
    "Joint": ".auditors",
    "Pairwise": ".auditors",
    "PhaseRuns": ".auditors",
    "GaussianRelease": ".stats",
    "PairwiseAudit": ".auditors",
    "SignVectorAudit": ".auditors",
    "PerExampleFit": ".auditors",
    "WeightSpaceAudit": ".auditors",
    "WeightSpaceSettings": ".auditors",
    "audit_projection": ".auditors",
    "audit_tables": ".auditors",
    "audit_weight_space": ".auditors",
    "batch_scores": ".auditors",
    "bounds_table": ".auditors",
    "fit_per_example": ".auditors",
    "fit_table": ".auditors",
    "joint_audit_tables": ".auditors",
    "pairwise_audit": ".auditors",
    "pairwise_audit_table": ".auditors",
    "sign_table": ".auditors",
    "Bound": ".stats.bounds",
    "pairwise_error_limits": ".stats.bounds",
    "audit_tail_bound": ".stats.bounds",
    "epsilon_lower_bound": ".stats.bounds",
    "reference_epsilon_lower_bound": ".stats.reference",
    "gdp_delta": ".stats.bounds",
    "gdp_epsilon": ".stats.bounds",
    "gdp_mu_lower_bound": ".stats.bounds",
    "gdp_mu_lower_bound_from_accuracy": ".stats.bounds",
    "pairwise_epsilon_lower_bound": ".stats.bounds",
    "pairwise_unlearning_epsilon_lower_bound": ".stats.bounds",
    "unlearning_epsilon_lower_bound": ".stats.bounds",
    "mu_lower_bound": ".stats.gdp_overlaps",
    "dp_tradeoff": ".stats.tradeoff",
    "gdp_tradeoff": ".stats.tradeoff",
}

__version__ = "0.2.0"

__all__ = sorted(_EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
