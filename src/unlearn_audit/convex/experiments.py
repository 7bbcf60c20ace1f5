"""The convex audits of Table 2 (Section 8, App. H–I), one function per mechanism.

Each ``audit_*`` function builds the paper's data set, runs the (noise-free part of the)
mechanism and its empty-forget-set counterpart, calibrates σ with the exact Gaussian mechanism
at the certified (ε, δ), and runs the weight-space audit of App. H.1
(:class:`~unlearn_audit.auditors.weight_space.WeightSpaceAudit`, the unlearned release first): its
likelihood-ratio test (the pairwise bound) and Algorithm 1 on its test draws (the joint bound).
Nothing is halved.

Parameters reproducing Table 2
------------------------------
* Cubic Perturbed Newton (Table 2a, App. H.2/H.4.1): λ0 = 0.2, **M = 0.001** (the text says
  0.005, but only 0.001 reproduces the σ column, docs/calibrations.md §9), B = 2.5, R = 10,
  1000 retain points at z = 0, 50 forget points at z = −R, δ = 0.01.  γ = 0.0649422,
  ŵ = −2.39530, w̄ = 0.01452, ρ = 0.2235.
* Output perturbation (Table 2b, App. I): C0 = 0.1 (Δ = 0.2), δ = 0.01; linear regression
  with no regulariser on n = 600 retain and m = 400 forget points, d = 2, slope η = 0.5,
  half-range r = 10, label noise 0.05, ρf = 10, ‖θ*‖ = 1, with an intercept.  The two clipped
  models are nearly antipodal on the C0-sphere, so ‖Π(A(D)) − Π(A(D_r))‖ ≈ 2C0 and ρ ≈ 1.
* Logistic Perturbed Newton (App. H.4.2): d = 2, η = 0.8, ρf = 5; sizes and λ are not given
  in the text, the defaults are 1000 retain / 50 forget points and λ = 0.15.
* Auditor: Γ = 500 calibration draws per hypothesis and 2L = 200,000 test draws, ζ = 0.05;
  pairwise bound at the certified δ = 0.01; joint (m = r = 2) bound at δ = 0 with one run
  per test draw.  App. H.1 states Γ = 50; Γ = 500 is what the published configuration uses,
  and it matters only at small ε, where the fitted means and variances are noisy.

The ``labels``/``predictions`` arrays of the returned likelihood-ratio test are the per-draw decisions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Callable, Sequence

import numpy as np

from .losses import ConvexData, CubicLoss, LogisticLoss
from .output_perturbation import OutputPerturbation, output_perturbation
from .perturbed_newton import NewtonUnlearning, check_epsilon_delta, perturbed_newton
from ..stats.gaussian_release import GaussianRelease
from ..auditors.weight_space import WeightSpaceAudit, WeightSpaceSettings
from ..auditors.weight_space_results import LikelihoodRatioTest, TwoPointAlgorithm1
from ..checks import check_delta, check_int, check_positive
from ..seeds import SeedLike, spawn_generators

__all__ = [
    "CubicNewtonParams",
    "LogisticNewtonParams",
    "OutputPerturbationParams",
    "ConvexAuditResult",
    "cubic_data",
    "logistic_boundary_data",
    "linear_regression_data",
    "build_cubic_newton",
    "build_logistic_newton",
    "build_output_perturbation",
    "audit_cubic_newton",
    "audit_logistic_newton",
    "audit_output_perturbation",
    "audit_epsilon_sweep",
    "TABLE2_EPSILONS",
    "TABLE2_SIGMA",
    "TABLE2_EPSILON_LB",
]

# Table 2 of the paper: the certified ε grid, the printed σ column, and the printed bounds
# (pairwise Eq. 3, joint m = r = 2), used as acceptance targets.
TABLE2_EPSILONS: dict[str, tuple[float, ...]] = {
    "cubic_newton": (0.1, 5.0, 50.0, 100.0, 200.0, 400.0, 600.0, 800.0),
    "output_perturbation": (0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0),
}
TABLE2_SIGMA: dict[str, tuple[float, ...]] = {
    "cubic_newton": (0.6197, 0.0370, 0.0081, 0.0054, 0.0036, 0.0025, 0.0020, 0.0017),
    "output_perturbation": (1.9084, 0.6294, 0.3756, 0.2233, 0.1139, 0.0700, 0.0441, 0.0249, 0.0166),
}
TABLE2_EPSILON_LB: dict[str, dict[str, tuple[float, ...]]] = {
    "cubic_newton": {
        "pairwise": (0.0, 0.2902, 1.4727, 2.3322, 3.7350, 6.2377, 8.5237, 10.1983),
        "joint": (0.0, 0.01406, 0.4827, 1.0504, 2.1455, 4.3663, 6.7425, 9.4159),
    },
    "output_perturbation": {
        "pairwise": (0.0191, 0.2040, 0.3901, 0.7029, 1.4534, 2.4962, 4.4305, 9.5260, 10.1983),
        "joint": (0.0, 0.0027, 0.0307, 0.1120, 0.4547, 1.1518, 2.6972, 8.0904, 11.1039),
    },
}


# --------------------------------------------------------------------------------------
# parameters
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CubicNewtonParams:
    """Perturbed Newton on the 1-d cubic loss (App. H.2, H.4.1; Table 2a)."""

    lam: float = 0.2
    M: float = 0.001
    B: float = 2.5
    R: float = 10.0
    n_retain: int = 1000
    n_forget: int = 50
    delta: float = 0.01

    def __post_init__(self) -> None:
        check_int(self.n_retain, "n_retain", 1)
        check_int(self.n_forget, "n_forget", 0)
        check_delta(self.delta, positive=True)
        self.loss()  # validates lam, M, B, R and mu = lam - M*B > 0

    def loss(self) -> CubicLoss:
        return CubicLoss(lam=self.lam, M=self.M, B=self.B, R=self.R)


#: Where the logistic construction's forget points lie: all at one point, or one axis each (Remark H.2).
FORGET_DIRECTIONS = ("one", "per_dimension")


@dataclass(frozen=True)
class LogisticNewtonParams:
    """Perturbed Newton on the logistic loss, boundary construction (App. H.4.2).

    Retain: x_i ~ N(0, I_d/d), y_i ~ Bernoulli(f1(x_iᵀθ*)), f1(z) = η if z ≥ 0 else 1 − η,
    θ* a uniformly random direction of norm ``theta_norm``.  Forget: m copies of
    x* = −ρf·sign(θ*)/‖sign(θ*)‖ (norm ρf) with label y* = 1; with ``forget_directions =
    "per_dimension"`` (Remark H.2) the m points are spread over the d axes instead, point i at
    −ρf·sign(θ*_k)·e_k for k = i mod d.  The loss constants use the largest feature norm of D
    (= ρf here).  ``data_seed`` fixes the data set.
    """

    lam: float = 0.15
    d: int = 2
    n_retain: int = 1000
    n_forget: int = 50
    eta: float = 0.8
    forget_norm: float = 5.0
    theta_norm: float = 1.0
    delta: float = 0.01
    data_seed: int = 0
    forget_directions: str = "one"

    def __post_init__(self) -> None:
        check_positive(self.lam, "lam")
        check_int(self.d, "d", 1)
        if self.forget_directions not in FORGET_DIRECTIONS:
            raise ValueError(f"forget_directions must be one of {FORGET_DIRECTIONS}, got {self.forget_directions!r}")
        check_int(self.n_retain, "n_retain", 1)
        check_int(self.n_forget, "n_forget", 0)
        if not (0.0 <= float(self.eta) <= 1.0):
            raise ValueError(f"eta (label probability) must lie in [0, 1], got {self.eta!r}")
        check_positive(self.forget_norm, "forget_norm (rho_f)")
        check_positive(self.theta_norm, "theta_norm")
        check_delta(self.delta, positive=True)


@dataclass(frozen=True)
class OutputPerturbationParams:
    """Output perturbation on linear regression (App. I; Table 2b).

    Retain: x_i ~ N(0, I_d/d), y_i = clip(½ + η x_iᵀθ*, ½ − r, ½ + r) − ½ + e_i,
    e_i ~ N(0, noise²), y clipped to [−r, r].  Forget: the same with θ_f = −ρf θ*/‖θ*‖.
    ``data_seed`` fixes the data set.
    """

    clip_radius: float = 0.1
    n_retain: int = 600
    n_forget: int = 400
    d: int = 2
    eta: float = 0.5
    range_half: float = 10.0
    label_noise: float = 0.05
    forget_norm: float = 10.0
    theta_norm: float = 1.0
    fit_intercept: bool = True
    delta: float = 0.01
    data_seed: int = 0

    def __post_init__(self) -> None:
        check_positive(self.clip_radius, "clip_radius (C0)")
        check_int(self.n_retain, "n_retain", 1)
        check_int(self.n_forget, "n_forget", 0)
        check_int(self.d, "d", 1)
        check_positive(self.range_half, "range_half (r)")
        if not (math.isfinite(float(self.label_noise)) and float(self.label_noise) >= 0):
            raise ValueError(f"label_noise must be >= 0, got {self.label_noise!r}")
        check_positive(self.forget_norm, "forget_norm (rho_f)")
        check_positive(self.theta_norm, "theta_norm")
        check_delta(self.delta, positive=True)


# --------------------------------------------------------------------------------------
# data sets
# --------------------------------------------------------------------------------------
def cubic_data(n_retain: int, n_forget: int, R: float) -> tuple[ConvexData, ConvexData]:
    """App. H.4.1: n_retain points at z = 0 and n_forget points at z = −R (labels unused)."""
    n_retain = check_int(n_retain, "n_retain", 0)
    n_forget = check_int(n_forget, "n_forget", 0)
    retain = ConvexData(np.zeros((n_retain, 1)), np.zeros(n_retain))
    forget = ConvexData(np.full((n_forget, 1), -float(R)), np.zeros(n_forget))
    return retain, forget


def _random_direction(rng: np.random.Generator, d: int, norm: float) -> np.ndarray:
    v = rng.standard_normal(d)
    return v / np.linalg.norm(v) * norm


def logistic_boundary_data(params: LogisticNewtonParams, rng: np.random.Generator) -> tuple[ConvexData, ConvexData]:
    """App. H.4.2: Gaussian retain features with label-flip link f1; forget points on the boundary."""
    d = params.d
    theta = _random_direction(rng, d, params.theta_norm)
    X = rng.standard_normal((params.n_retain, d)) / math.sqrt(d)
    p = np.where(X @ theta >= 0, params.eta, 1.0 - params.eta)
    y = (rng.random(params.n_retain) < p).astype(float)
    s = np.sign(theta)
    if params.forget_directions == "per_dimension":  # Remark H.2: point i on axis i mod d, against θ*
        axes = np.arange(params.n_forget) % d
        x_forget = np.zeros((params.n_forget, d))
        x_forget[np.arange(params.n_forget), axes] = -params.forget_norm * s[axes]
    else:
        x_forget = np.tile(-params.forget_norm * s / np.linalg.norm(s), (params.n_forget, 1))
    return ConvexData(X, y), ConvexData(x_forget, np.ones(params.n_forget))


def linear_regression_data(params: OutputPerturbationParams, rng: np.random.Generator) -> tuple[ConvexData, ConvexData]:
    """App. I.2: retain labels from θ*, forget labels from θ_f = −ρf θ*/‖θ*‖ (clipped linear link)."""
    d, r = params.d, params.range_half
    theta = _random_direction(rng, d, params.theta_norm)
    theta_f = -theta / np.linalg.norm(theta) * params.forget_norm

    def sample(n: int, direction: np.ndarray) -> ConvexData:
        X = rng.standard_normal((n, d)) / math.sqrt(d)
        mean = np.clip(0.5 + params.eta * (X @ direction), 0.5 - r, 0.5 + r) - 0.5
        y = np.clip(mean + params.label_noise * rng.standard_normal(n), -r, r)
        return ConvexData(X, y)

    retain = sample(params.n_retain, theta)
    forget = sample(params.n_forget, theta_f)
    return retain, forget


# --------------------------------------------------------------------------------------
# mechanisms
# --------------------------------------------------------------------------------------
def build_cubic_newton(params: CubicNewtonParams = CubicNewtonParams()) -> NewtonUnlearning:
    """ŵ, w̄, ŵ_r and γ of the Table 2a instance (deterministic)."""
    retain, forget = cubic_data(params.n_retain, params.n_forget, params.R)
    return perturbed_newton(params.loss(), retain, forget)


def build_logistic_newton(
    params: LogisticNewtonParams = LogisticNewtonParams(), rng: np.random.Generator | None = None
) -> NewtonUnlearning:
    """ŵ, w̄, ŵ_r and γ of the App. H.4.2 instance; data from ``rng`` (default: ``params.data_seed``)."""
    rng = np.random.default_rng(params.data_seed) if rng is None else rng
    retain, forget = logistic_boundary_data(params, rng)
    loss = LogisticLoss.for_data(params.lam, retain, forget)
    return perturbed_newton(loss, retain, forget)


def build_output_perturbation(
    params: OutputPerturbationParams = OutputPerturbationParams(), rng: np.random.Generator | None = None
) -> OutputPerturbation:
    """Trained and clipped models of the App. I instance; data from ``rng`` (default: ``params.data_seed``)."""
    rng = np.random.default_rng(params.data_seed) if rng is None else rng
    retain, forget = linear_regression_data(params, rng)
    return output_perturbation(retain, forget, clip_radius=params.clip_radius, fit_intercept=params.fit_intercept)


# --------------------------------------------------------------------------------------
# audits
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class ConvexAuditResult:
    """One Table 2 cell: a mechanism audited at one certified ε.

    ``distance`` = ‖w_f − w_r‖ of the two noiseless outputs, ``rho`` = distance/sensitivity,
    ``true_mu`` = distance/σ (the pair is exactly μ-GDP).  ``test`` is the likelihood-ratio test
    (confusion counts, Eq. 3 at the pairwise δ, μ, per-draw decisions), ``joint`` Algorithm 1 with
    m = r = 2 on its test draws (Section 8; App. H.1).
    """

    mechanism: str
    epsilon: float
    delta: float
    sigma: float
    sensitivity: float
    distance: float
    rho: float
    true_mu: float
    test: LikelihoodRatioTest
    joint: TwoPointAlgorithm1
    release: GaussianRelease = field(repr=False)

    @property
    def epsilon_lb_pairwise(self) -> float:
        return self.test.epsilon_lb

    @property
    def epsilon_lb_joint(self) -> float:
        return self.joint.epsilon_lb

    @property
    def mu_lb(self) -> float:
        return self.test.mu_lb

    def summary(self) -> dict[str, float | int | str]:
        """A flat row (for tables): parameters, σ, counts and bounds."""
        a = self.test
        return {
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "sigma": self.sigma,
            "sensitivity": self.sensitivity,
            "distance": self.distance,
            "rho": self.rho,
            "true_mu": self.true_mu,
            "n_calibration": a.n_calibration,
            "n_test_draws": a.n_test_draws,
            "fp": a.fp,
            "n_neg": a.n_neg,
            "fn": a.fn,
            "n_pos": a.n_pos,
            "accuracy": a.accuracy,
            "zeta": a.zeta,
            "pairwise_delta": a.delta,
            "joint_delta": self.joint.bound.delta,
            "epsilon_lb_pairwise": self.epsilon_lb_pairwise,
            "epsilon_lb_joint": self.epsilon_lb_joint,
            "mu_lb": self.mu_lb,
            "mu_lb_accuracy": self.joint.mu_lb,
        }


def _run(mechanism: str, release: GaussianRelease, epsilon: float, delta: float, rng: SeedLike, settings: WeightSpaceSettings) -> ConvexAuditResult:
    pairwise_delta = delta if settings.pairwise_delta is None else float(settings.pairwise_delta)
    audit = WeightSpaceAudit.of_release(release, rng, replace(settings, pairwise_delta=pairwise_delta))
    sensitivity = release.sensitivity
    return ConvexAuditResult(
        mechanism=mechanism,
        epsilon=float(epsilon),
        delta=float(delta),
        sigma=release.sigma,
        sensitivity=sensitivity,
        distance=release.distance,
        rho=release.distance / sensitivity if sensitivity > 0 else math.nan,
        true_mu=release.true_mu,
        test=audit.likelihood_ratio(),
        joint=audit.two_point("likelihood_ratio"),
        release=release,
    )


def _audit_mechanism(name: str, build: Callable, epsilon: float, rng: SeedLike, params, settings: WeightSpaceSettings) -> ConvexAuditResult:
    """Release the mechanism built from ``params`` at certified (ε, params.delta) and audit it."""
    epsilon, delta = check_epsilon_delta(epsilon, params.delta)
    return _run(name, build(params).release(epsilon, delta), epsilon, delta, rng, settings)


def audit_cubic_newton(
    epsilon: float,
    rng: SeedLike,
    params: CubicNewtonParams = CubicNewtonParams(),
    settings: WeightSpaceSettings = WeightSpaceSettings(),
) -> ConvexAuditResult:
    """Table 2a cell: Perturbed Newton on the cubic loss audited at certified (ε, params.delta)."""
    return _audit_mechanism("cubic_newton", build_cubic_newton, epsilon, rng, params, settings)


def audit_logistic_newton(
    epsilon: float,
    rng: SeedLike,
    params: LogisticNewtonParams = LogisticNewtonParams(),
    settings: WeightSpaceSettings = WeightSpaceSettings(),
) -> ConvexAuditResult:
    """App. H.4.2: Perturbed Newton on the logistic loss audited at certified (ε, params.delta)."""
    return _audit_mechanism("logistic_newton", build_logistic_newton, epsilon, rng, params, settings)


def audit_output_perturbation(
    epsilon: float,
    rng: SeedLike,
    params: OutputPerturbationParams = OutputPerturbationParams(),
    settings: WeightSpaceSettings = WeightSpaceSettings(),
) -> ConvexAuditResult:
    """Table 2b cell: output perturbation on linear regression audited at certified (ε, params.delta)."""
    return _audit_mechanism("output_perturbation", build_output_perturbation, epsilon, rng, params, settings)


def audit_epsilon_sweep(
    audit: Callable[..., ConvexAuditResult],
    epsilons: Sequence[float],
    rng: SeedLike,
    **kwargs,
) -> list[ConvexAuditResult]:
    """Run ``audit(ε, child_rng, **kwargs)`` for every ε, each with its own spawned generator."""
    epsilons = list(epsilons)
    children = spawn_generators(rng, len(epsilons))
    return [audit(eps, child, **kwargs) for eps, child in zip(epsilons, children)]
