"""Auditing Gaussian certified unlearning against its exact μ (docs/calibrations.md §13, "Audit of the mechanism").

The privacy pair of the paper's mechanism (arXiv 2510.13094, Def. 2 / Thm 2) is

    unlearned:  β̂⁽¹⁾_{\\M} + b,      its counterpart, retrained:  β̂_{\\M} + b,      b ~ N(0, σ² I_p),

whose trade-off curve is exactly G_μ with μ = ‖β̂⁽¹⁾_{\\M} − β̂_{\\M}‖/σ.  The certified
mechanism uses σ = r/ε and claims μ = ε (GPAR with the Gaussian curve f_{G,ε}).  Because the
truth is known, the auditor's lower bounds can be checked against it.

The audit (:class:`~unlearn_audit.auditors.weight_space.WeightSpaceAudit` of the pair's release,
the unlearned side first)
    1. *Direction.*  ``n_direction`` calibration draws per side give d̂ = mean_unlearned − mean_retrained.
    2. *1-d fits.*  Fresh calibration draws per side are projected on d̂ and a 1-d Gaussian
       (mean, unbiased variance) is fitted to each side's projections.
    3. *Evaluation* (:meth:`~unlearn_audit.auditors.weight_space.WeightSpaceAudit.projection`).
       Fresh draws, each from a side chosen uniformly at random, are projected on d̂ and
       classified by the fitted likelihood ratio (unlearned iff LLR > 0).  From the confusion
       counts: μ_LB = Φ⁻¹(1 − FP_hi) − Φ⁻¹(FN_hi) (:func:`~unlearn_audit.stats.bounds.gdp_mu_lower_bound`)
       and ε_LB at δ = 0 by Eq. 3 (:func:`~unlearn_audit.stats.bounds.pairwise_epsilon_lower_bound`).
    4. *Algorithm 1 with m = r = 2* (``two_point("projection")``).  Each run draws S uniformly
       from {(+1,−1), (−1,+1)} and presents two fresh draws, the unlearned one first iff
       S = (+1,−1); the guess puts +1 on the draw with the larger LLR; overlap V ∈ {0, 2}.  Each
       presented pair differs from its swap in *both* draws, so if the pair of sides is μ-GDP
       (ε-DP) the run's output is √2·μ-GDP (2ε-DP) in S.  Hence the unlearning bounds are
       ``epsilon_lb_alg1 = epsilon_ldp / 2`` (Theorem 4.2 via
       :func:`~unlearn_audit.stats.bounds.epsilon_lower_bound`, as in Lemma 4.1) and
       ``mu_lb_alg1 = 2Φ⁻¹(acc_LB)/√2`` (:func:`~unlearn_audit.stats.bounds.gdp_mu_lower_bound_from_accuracy`
       bounds the pair's μ, which is √2 times the sides' μ).

All streams (two direction sets, two fit sets, evaluation labels, evaluation draws per side,
Algorithm 1 signs and draws per side) are distinct children of one ``SeedSequence.spawn``;
nothing drawn for calibration is reused for evaluation, so the bounds are valid at level ζ.
A side of :class:`~unlearn_audit.stats.gaussian_release.GaussianRelease` samples the calibration mean
and the projections directly (exactly in distribution: d̂ᵀ(θ + σz) ~ N(d̂ᵀθ, σ²‖d̂‖²)), so 10⁶
evaluation draws cost O(10⁶) whatever p is.

``ProjectionAudit``, ``ProjectionSettings`` and ``audit_projection`` are the deprecated shapes and
wrapper of :mod:`unlearn_audit.auditors.weight_space`, exported here for one more version.
"""

from __future__ import annotations

from ..auditors.weight_space import Sampler, WeightSpaceAudit, WeightSpaceSettings, audit_projection
from ..auditors.weight_space_legacy import ProjectionAudit, ProjectionSettings
from ..seeds import SeedLike, as_seed_sequence
from .calibration import MECHANISMS, mechanism_sigma
from .noise import check_positive_epsilon
from .pair import PrivacyPair

__all__ = [
    "Sampler",
    "SeedLike",
    "WeightSpaceSettings",
    "ProjectionSettings",
    "ProjectionAudit",
    "audit_projection",
    "audit_table_rows",
]


def audit_table_rows(
    pair: PrivacyPair,
    epsilon: float,
    seed: SeedLike,
    settings: WeightSpaceSettings = WeightSpaceSettings(),
    *,
    mechanisms: tuple[str, ...] = MECHANISMS,
    delta: float = 1e-5,
    undernoise_factor: float = 10.0,
) -> list[dict]:
    """One audit-table row per mechanism (docs/calibrations.md §13).

    Each mechanism claims μ = ε (its certified GPAR level).  Fields: ``mechanism, claimed_mu,
    true_mu, sigma, mu_lb, mu_lb_alg1, epsilon_lb, epsilon_lb_alg1, delta_lb_at_claimed_epsilon``
    (δ(ε) of a μ_LB-GDP mechanism at the claimed ε), ``epsilon_lb_gdp`` (ε at ``delta`` of a
    μ_LB-GDP mechanism), ``accuracy`` (1 − the projection test's error rate), ``alg1_accuracy,
    separation, falsified`` (μ_LB > claimed μ), plus ``n, m, epsilon, zeta``.  ``mu_lb`` and
    ``epsilon_lb`` are the projection test's, the ``*_alg1`` columns Algorithm 1's on fresh pairs.
    Each mechanism is audited with its own spawned seed.
    """
    epsilon = check_positive_epsilon(epsilon)
    children = as_seed_sequence(seed).spawn(len(mechanisms))
    rows: list[dict] = []
    for mech, child in zip(mechanisms, children):
        sigma = mechanism_sigma(pair, epsilon, mech, undernoise_factor=undernoise_factor)
        audit = WeightSpaceAudit.of_release(pair.release(sigma), child, settings)
        test, alg1 = audit.projection(), audit.two_point("projection")
        rows.append(
            {
                "mechanism": mech,
                "n": pair.n,
                "p": int(pair.retrained.size),
                "m": pair.m,
                "epsilon": epsilon,
                "claimed_mu": epsilon,
                "true_mu": pair.true_mu(sigma),
                "sigma": sigma,
                "mu_lb": test.mu_lb,
                "mu_lb_alg1": alg1.mu_lb,
                "epsilon_lb": test.epsilon_lb,
                "epsilon_lb_alg1": alg1.epsilon_lb,
                "delta_lb_at_claimed_epsilon": test.delta_lb(epsilon),
                "epsilon_lb_gdp": test.epsilon_lb_gdp(delta),
                "delta": float(delta),
                "accuracy": 1.0 - test.error_rate,
                "alg1_accuracy": alg1.accuracy,
                "separation": test.separation,
                "zeta": test.zeta,
                "falsified": bool(test.mu_lb > epsilon),
            }
        )
    return rows
