"""Auditing Gaussian certified unlearning against its exact μ (docs/calibrations.md §13, "Audit of the mechanism").

The privacy pair of the paper's mechanism (arXiv 2510.13094, Def. 2 / Thm 2) is

    side 0 (retrain):  β̂_{\\M} + b,      side 1 (unlearn):  β̂⁽¹⁾_{\\M} + b,      b ~ N(0, σ² I_p),

whose trade-off curve is exactly G_μ with μ = ‖β̂⁽¹⁾_{\\M} − β̂_{\\M}‖/σ.  The certified
mechanism uses σ = r/ε and claims μ = ε (GPAR with the Gaussian curve f_{G,ε}).  Because the
truth is known, the auditor's lower bounds can be checked against it.

Weight-space auditor (:func:`audit_projection`)
    1. *Direction.*  Γ calibration draws per side give d̂ = mean₁ − mean₀.
    2. *1-d fits.*  Fresh calibration draws per side are projected on d̂ and a 1-d Gaussian
       (mean, unbiased variance) is fitted to each side's projections.
    3. *Evaluation.*  Fresh draws, each from a side chosen uniformly at random, are projected
       on d̂ and classified by the fitted likelihood ratio (side 1 iff LLR > 0).  From the
       confusion counts: μ_LB = Φ⁻¹(1 − FP_hi) − Φ⁻¹(FN_hi) (:func:`~unlearn_audit.stats.bounds.gdp_mu_lower_bound`)
       and ε_LB at δ = 0 by Eq. 3 (:func:`~unlearn_audit.stats.bounds.pairwise_epsilon_lower_bound`).
    4. *Algorithm 1 with m = r = 2.*  Each run draws S uniformly from {(+1,−1), (−1,+1)} and
       presents two fresh draws, the unlearned one first iff S = (+1,−1); the guess puts +1 on
       the draw with the larger LLR; overlap V ∈ {0, 2}.  Each presented pair differs from its
       swap in *both* draws, so if the pair of sides is μ-GDP (ε-DP) the run's output is
       √2·μ-GDP (2ε-DP) in S.  Hence the unlearning bounds are
       ``epsilon_lb_alg1 = epsilon_ldp / 2`` (Theorem 4.2 via
       :func:`~unlearn_audit.stats.bounds.epsilon_lower_bound`, as in Lemma 4.1) and
       ``mu_lb_alg1 = 2Φ⁻¹(acc_LB)/√2`` (:func:`~unlearn_audit.stats.bounds.gdp_mu_lower_bound_from_accuracy`
       bounds the pair's μ, which is √2 times the sides' μ).

All streams (two direction sets, two fit sets, evaluation labels, evaluation draws per side,
Algorithm 1 signs and draws per side) are distinct children of one ``SeedSequence.spawn``;
nothing drawn for calibration is reused for evaluation, so the bounds are valid at level ζ.

A sampler may be any ``f(rng, size) -> (size, p)``; the draws are then generated and projected
in chunks.  A side of :class:`~unlearn_audit.stats.gaussian_release.GaussianRelease` also samples the calibration mean and the
projections directly (exactly in distribution: d̂ᵀ(θ + σz) ~ N(d̂ᵀθ, σ²‖d̂‖²)), so 10⁶
evaluation draws cost O(10⁶) whatever p is.
"""

from __future__ import annotations

from ..auditors.weight_space import ProjectionAudit, ProjectionSettings, Sampler, audit_projection
from ..seeds import SeedLike, as_seed_sequence
from .calibration import MECHANISMS, mechanism_sigma
from .noise import check_positive_epsilon
from .pair import PrivacyPair

__all__ = [
    "Sampler",
    "SeedLike",
    "ProjectionSettings",
    "ProjectionAudit",
    "audit_projection",
    "audit_table_rows",
]


def audit_table_rows(
    pair: PrivacyPair,
    epsilon: float,
    seed: SeedLike,
    settings: ProjectionSettings = ProjectionSettings(),
    *,
    mechanisms: tuple[str, ...] = MECHANISMS,
    delta: float = 1e-5,
    undernoise_factor: float = 10.0,
) -> list[dict]:
    """One audit-table row per mechanism (docs/calibrations.md §13).

    Each mechanism claims μ = ε (its certified GPAR level).  Fields: ``mechanism, claimed_mu,
    true_mu, sigma, mu_lb, mu_lb_alg1, epsilon_lb, epsilon_lb_alg1, delta_lb_at_claimed_epsilon``
    (δ(ε) of a μ_LB-GDP mechanism at the claimed ε), ``epsilon_lb_gdp`` (ε at ``delta`` of a
    μ_LB-GDP mechanism), ``accuracy, alg1_accuracy, separation, falsified`` (μ_LB > claimed μ),
    plus ``n, m, epsilon, zeta``.  Each mechanism is audited with its own spawned seed.
    """
    epsilon = check_positive_epsilon(epsilon)
    children = as_seed_sequence(seed).spawn(len(mechanisms))
    rows: list[dict] = []
    for mech, child in zip(mechanisms, children):
        sigma = mechanism_sigma(pair, epsilon, mech, undernoise_factor=undernoise_factor)
        release = pair.release(sigma)
        res = audit_projection(release.counterpart, release.unlearned, child, settings)
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
                "mu_lb": res.mu_lb,
                "mu_lb_alg1": res.mu_lb_alg1,
                "epsilon_lb": res.epsilon_lb,
                "epsilon_lb_alg1": res.epsilon_lb_alg1,
                "delta_lb_at_claimed_epsilon": res.delta_lb(epsilon),
                "epsilon_lb_gdp": res.epsilon_lb_gdp(delta),
                "delta": float(delta),
                "accuracy": res.accuracy,
                "alg1_accuracy": res.alg1_accuracy,
                "separation": res.separation,
                "zeta": res.zeta,
                "falsified": bool(res.mu_lb > epsilon),
            }
        )
    return rows
