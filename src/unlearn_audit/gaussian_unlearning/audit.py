"""Auditing Gaussian certified unlearning against its exact μ (DESIGN §7, "Audit of this mechanism").

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
       confusion counts: μ_LB = Φ⁻¹(1 − FP_hi) − Φ⁻¹(FN_hi) (:func:`~unlearn_audit.bounds.gdp_mu_lower_bound`)
       and ε_LB at δ = 0 by Eq. 3 (:func:`~unlearn_audit.bounds.pairwise_epsilon_lower_bound`).
    4. *Algorithm 1 with m = r = 2.*  Each run draws S uniformly from {(+1,−1), (−1,+1)} and
       presents two fresh draws, the unlearned one first iff S = (+1,−1); the guess puts +1 on
       the draw with the larger LLR; overlap V ∈ {0, 2}.  Each presented pair differs from its
       swap in *both* draws, so if the pair of sides is μ-GDP (ε-DP) the run's output is
       √2·μ-GDP (2ε-DP) in S.  Hence the unlearning bounds are
       ``epsilon_lb_alg1 = epsilon_ldp / 2`` (Theorem 4.2 via
       :func:`~unlearn_audit.bounds.epsilon_lower_bound`, as in Lemma 4.1) and
       ``mu_lb_alg1 = 2Φ⁻¹(acc_LB)/√2`` (:func:`~unlearn_audit.bounds.gdp_mu_lower_bound_from_accuracy`
       bounds the pair's μ, which is √2 times the sides' μ).

All streams (two direction sets, two fit sets, evaluation labels, evaluation draws per side,
Algorithm 1 signs and draws per side) are distinct children of one ``SeedSequence.spawn``;
nothing drawn for calibration is reused for evaluation, so the bounds are valid at level ζ.

A sampler may be any ``f(rng, size) -> (size, p)``; the draws are then generated and projected
in chunks.  :class:`GaussianReleaseSampler` also samples the calibration mean and the
projections directly (exactly in distribution: d̂ᵀ(θ + σz) ~ N(d̂ᵀθ, σ²‖d̂‖²)), so 10⁶
evaluation draws cost O(10⁶) whatever p is.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Union

import numpy as np

from ..bounds import (
    EpsilonBound,
    PairwiseBound,
    epsilon_lower_bound,
    gdp_delta,
    gdp_epsilon,
    gdp_mu_lower_bound,
    gdp_mu_lower_bound_from_accuracy,
    pairwise_epsilon_lower_bound,
)
from .data import make_data
from .glm import DEFAULT_TOL, RegularizedGLM, fit_newton, get_loss
from .noise import check_epsilon, noise_radius, noise_scale
from .removal import remove, sample_removal_set

__all__ = [
    "Sampler",
    "SeedLike",
    "GaussianReleaseSampler",
    "AuditSettings",
    "ProjectionAudit",
    "audit_projection",
    "PrivacyPair",
    "make_privacy_pair",
    "MECHANISMS",
    "mechanism_sigma",
    "audit_table_rows",
]

Sampler = Callable[[np.random.Generator, int], np.ndarray]
SeedLike = Union[np.random.SeedSequence, int]

MECHANISMS = ("certified", "control_tight", "control_undernoised")

# Variances of the 1-d fits are floored at this fraction of the pooled variance (plus a tiny
# absolute floor), so that a degenerate side cannot produce an infinite likelihood ratio.
_REL_VAR_FLOOR = 1e-12
_ABS_VAR_FLOOR = 1e-300


@dataclass(frozen=True, eq=False)
class GaussianReleaseSampler:
    """Draws of ``mean + sigma · z``, z ~ N(0, I_p): one side of the Gaussian privacy pair.

    Besides ``__call__(rng, size)`` it samples, exactly in distribution, the mean of ``size``
    draws (:meth:`sample_mean`) and the projections of ``size`` draws on a fixed direction
    (:meth:`sample_projection`), which keeps memory at O(p + size).
    """

    mean: np.ndarray
    sigma: float

    def __post_init__(self) -> None:
        mean = np.asarray(self.mean, dtype=float).ravel()
        sigma = float(self.sigma)
        if not (math.isfinite(sigma) and sigma > 0):
            raise ValueError(f"sigma must be a finite number > 0, got {self.sigma!r}")
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "sigma", sigma)

    @property
    def dim(self) -> int:
        return int(self.mean.size)

    def __call__(self, rng: np.random.Generator, size: int) -> np.ndarray:
        return self.mean + self.sigma * rng.standard_normal((int(size), self.dim))

    def sample_mean(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """The sample mean of ``size`` draws: N(mean, σ²/size · I)."""
        return self.mean + self.sigma / math.sqrt(int(size)) * rng.standard_normal(self.dim)

    def sample_projection(self, rng: np.random.Generator, size: int, direction: np.ndarray) -> np.ndarray:
        """dᵀx for ``size`` draws x: N(dᵀmean, σ²‖d‖²)."""
        direction = np.asarray(direction, dtype=float)
        loc = float(direction @ self.mean)
        return loc + self.sigma * float(np.linalg.norm(direction)) * rng.standard_normal(int(size))


def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or int(value) != value or int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class AuditSettings:
    """Sample sizes and levels of :func:`audit_projection`.

    Parameters
    ----------
    n_calibration : Γ, draws per side for the direction d̂.  The angle between d̂ and the true
        difference θ₁ − θ₀ has cos ≈ μ/sqrt(μ² + 2p/Γ), so Γ ≫ p/μ² is needed for a tight
        bound; :class:`GaussianReleaseSampler` makes Γ free, a plain sampler costs Γ·p normals.
    n_fit : draws per side for the 1-d Gaussian fits of the projections.
    n_eval : evaluation draws of the weight-space classifier (sides chosen uniformly).
    n_alg1_runs : runs of Algorithm 1 with m = r = 2 (two draws each).
    zeta : significance level ζ of every bound.
    chunk_size : rows generated at once by a plain sampler (memory = chunk_size · p floats).
    """

    n_calibration: int = 200_000
    n_fit: int = 5_000
    n_eval: int = 200_000
    n_alg1_runs: int = 100_000
    zeta: float = 0.05
    chunk_size: int = 4096

    def __post_init__(self) -> None:
        _check_int(self.n_calibration, "n_calibration", 1)
        _check_int(self.n_fit, "n_fit", 2)
        _check_int(self.n_eval, "n_eval", 2)
        _check_int(self.n_alg1_runs, "n_alg1_runs", 1)
        _check_int(self.chunk_size, "chunk_size", 1)
        if not (0.0 < float(self.zeta) < 1.0):
            raise ValueError(f"zeta must lie in (0, 1), got {self.zeta!r}")


def _draws(sampler: Sampler, rng: np.random.Generator, size: int, name: str) -> np.ndarray:
    x = np.asarray(sampler(rng, size), dtype=float)
    if x.ndim != 2 or x.shape[0] != size:
        raise ValueError(f"{name} must return an array of shape ({size}, p), got {x.shape}")
    return x


def _sample_mean(sampler: Sampler, rng: np.random.Generator, size: int, chunk: int, name: str) -> np.ndarray:
    if hasattr(sampler, "sample_mean"):
        return np.asarray(sampler.sample_mean(rng, size), dtype=float)
    total, done = None, 0
    while done < size:
        k = min(chunk, size - done)
        s = _draws(sampler, rng, k, name).sum(axis=0)
        total = s if total is None else total + s
        done += k
    return total / size


def _sample_projection(
    sampler: Sampler, rng: np.random.Generator, size: int, direction: np.ndarray, chunk: int, name: str
) -> np.ndarray:
    if size == 0:
        return np.empty(0)
    if hasattr(sampler, "sample_projection"):
        return np.asarray(sampler.sample_projection(rng, size, direction), dtype=float)
    out = np.empty(size)
    done = 0
    while done < size:
        k = min(chunk, size - done)
        out[done : done + k] = _draws(sampler, rng, k, name) @ direction
        done += k
    return out


@dataclass(frozen=True)
class _Fit1d:
    mean: float
    var: float

    def logpdf(self, u: np.ndarray) -> np.ndarray:
        return -0.5 * ((u - self.mean) ** 2 / self.var + math.log(2.0 * math.pi * self.var))


def _fit_1d(u0: np.ndarray, u1: np.ndarray) -> tuple[_Fit1d, _Fit1d]:
    if not (np.all(np.isfinite(u0)) and np.all(np.isfinite(u1))):
        raise ValueError("calibration draws contain NaN or infinite values")
    v0, v1 = float(np.var(u0, ddof=1)), float(np.var(u1, ddof=1))
    floor = _REL_VAR_FLOOR * 0.5 * (v0 + v1) + _ABS_VAR_FLOOR
    return _Fit1d(float(np.mean(u0)), max(v0, floor)), _Fit1d(float(np.mean(u1)), max(v1, floor))


@dataclass(frozen=True)
class ProjectionAudit:
    """Result of :func:`audit_projection`.

    Positives are side-1 (unlearned) draws.  ``fp`` counts side-0 draws classified as side 1
    (of ``n_neg``), ``fn`` side-1 draws classified as side 0 (of ``n_pos``).
    ``mu_lb``/``epsilon_lb`` come from these counts; ``mu_lb_alg1``/``epsilon_lb_alg1`` from
    Algorithm 1 with m = r = 2 (already converted to bounds on the sides' μ and ε, see the
    module docstring).  ``separation`` is the fitted (mean₁ − mean₀)/pooled sd of the
    projections: the μ the classifier can reach (up to sampling error).
    """

    fp: int
    n_neg: int
    fn: int
    n_pos: int
    mu_lb: float
    epsilon_lb: float
    pairwise: PairwiseBound
    alg1_correct: int
    alg1_runs: int
    alg1: EpsilonBound
    mu_lb_alg1: float
    epsilon_lb_alg1: float
    separation: float
    direction_norm: float
    zeta: float

    @property
    def accuracy(self) -> float:
        return 1.0 - (self.fp + self.fn) / (self.n_pos + self.n_neg)

    @property
    def alg1_accuracy(self) -> float:
        return self.alg1_correct / self.alg1_runs

    def delta_lb(self, epsilon: float) -> float:
        """δ(ε) of a μ_LB-GDP mechanism (:func:`~unlearn_audit.bounds.gdp_delta`).

        For a Gaussian pair (exactly μ-GDP) δ(ε) is increasing in μ, so this lower-bounds the
        pair's δ(ε) whenever μ_LB ≤ μ.
        """
        return gdp_delta(self.mu_lb, epsilon)

    def epsilon_lb_gdp(self, delta: float) -> float:
        """ε(δ) of a μ_LB-GDP mechanism (:func:`~unlearn_audit.bounds.gdp_epsilon`)."""
        return gdp_epsilon(self.mu_lb, delta)


def _seed_sequence(seed: SeedLike) -> np.random.SeedSequence:
    if isinstance(seed, np.random.SeedSequence):
        return seed
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return np.random.SeedSequence(int(seed))
    raise ValueError(f"seed must be a numpy SeedSequence or an int, got {type(seed).__name__}")


def audit_projection(
    sample_retrained: Sampler,
    sample_unlearned: Sampler,
    seed: SeedLike,
    settings: AuditSettings = AuditSettings(),
) -> ProjectionAudit:
    """Weight-space audit of a privacy pair by projection on the calibrated mean difference.

    Parameters
    ----------
    sample_retrained : ``f(rng, size) -> (size, p)``, side 0 (β̂_{\\M} + b).
    sample_unlearned : the same for side 1 (β̂⁽¹⁾_{\\M} + b).
    seed : SeedSequence (or int) from which the ten independent streams are spawned.
    settings : sample sizes and ζ.

    Returns
    -------
    ProjectionAudit with μ_LB, ε_LB (Eq. 3, δ = 0) and the Algorithm 1 (m = r = 2) bounds.
    """
    s = settings
    streams = [np.random.default_rng(c) for c in _seed_sequence(seed).spawn(10)]
    rng_dir0, rng_dir1, rng_fit0, rng_fit1, rng_lab, rng_ev0, rng_ev1, rng_sgn, rng_a0, rng_a1 = streams
    samplers = (sample_retrained, sample_unlearned)
    names = ("sample_retrained", "sample_unlearned")

    # 1. direction from calibration only
    mean0 = _sample_mean(sample_retrained, rng_dir0, s.n_calibration, s.chunk_size, names[0])
    mean1 = _sample_mean(sample_unlearned, rng_dir1, s.n_calibration, s.chunk_size, names[1])
    if mean0.shape != mean1.shape:
        raise ValueError(f"the two sides have different dimensions ({mean0.shape} vs {mean1.shape})")
    direction = mean1 - mean0
    dnorm = float(np.linalg.norm(direction))
    if not (math.isfinite(dnorm) and dnorm > 0):
        raise ValueError("the calibrated mean difference is zero or not finite; cannot project")
    direction = direction / dnorm

    # 2. 1-d Gaussian fits on fresh calibration draws
    fit0, fit1 = _fit_1d(
        _sample_projection(sample_retrained, rng_fit0, s.n_fit, direction, s.chunk_size, names[0]),
        _sample_projection(sample_unlearned, rng_fit1, s.n_fit, direction, s.chunk_size, names[1]),
    )

    def llr(u: np.ndarray) -> np.ndarray:
        return fit1.logpdf(u) - fit0.logpdf(u)

    # 3. evaluation: each draw from a side chosen uniformly at random
    labels = rng_lab.integers(0, 2, size=s.n_eval).astype(bool)
    n_pos = int(labels.sum())
    n_neg = s.n_eval - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError(f"all {s.n_eval} evaluation draws fell on one side; increase n_eval")
    u_neg = _sample_projection(samplers[0], rng_ev0, n_neg, direction, s.chunk_size, names[0])
    u_pos = _sample_projection(samplers[1], rng_ev1, n_pos, direction, s.chunk_size, names[1])
    fp = int(np.count_nonzero(llr(u_neg) > 0))
    fn = int(np.count_nonzero(~(llr(u_pos) > 0)))
    pairwise = pairwise_epsilon_lower_bound(fp, n_neg, fn, n_pos, zeta=s.zeta, delta=0.0)
    mu_lb = gdp_mu_lower_bound(fp, n_neg, fn, n_pos, zeta=s.zeta)

    # 4. Algorithm 1, m = r = 2: S = (+1,−1) iff the unlearned draw is presented first
    first_is_unlearned = rng_sgn.integers(0, 2, size=s.n_alg1_runs).astype(bool)
    a0 = llr(_sample_projection(samplers[0], rng_a0, s.n_alg1_runs, direction, s.chunk_size, names[0]))
    a1 = llr(_sample_projection(samplers[1], rng_a1, s.n_alg1_runs, direction, s.chunk_size, names[1]))
    first = np.where(first_is_unlearned, a1, a0)
    second = np.where(first_is_unlearned, a0, a1)
    guess_first = first > second  # ties: the second draw is guessed unlearned
    correct = guess_first == first_is_unlearned
    n_correct = int(np.count_nonzero(correct))
    alg1 = epsilon_lower_bound(np.where(correct, 2, 0), 2, 2, zeta=s.zeta, statistic="mean", delta=0.0)
    mu_pair_lb = gdp_mu_lower_bound_from_accuracy(n_correct, s.n_alg1_runs, zeta=s.zeta)

    pooled_sd = math.sqrt(0.5 * (fit0.var + fit1.var))
    return ProjectionAudit(
        fp=fp,
        n_neg=n_neg,
        fn=fn,
        n_pos=n_pos,
        mu_lb=float(mu_lb),
        epsilon_lb=float(pairwise.epsilon_lb),
        pairwise=pairwise,
        alg1_correct=n_correct,
        alg1_runs=s.n_alg1_runs,
        alg1=alg1,
        mu_lb_alg1=float(mu_pair_lb / math.sqrt(2.0)),
        epsilon_lb_alg1=float(alg1.epsilon_lb),
        separation=float((fit1.mean - fit0.mean) / pooled_sd),
        direction_norm=dnorm,
        zeta=float(s.zeta),
    )


# --------------------------------------------------------------------------------------
# the audit table (certified mechanism and two positive controls)
# --------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class PrivacyPair:
    """β̂_{\\M} (``retrained``), β̂⁽¹⁾_{\\M} (``unlearned``) and the radius r of one removal."""

    retrained: np.ndarray
    unlearned: np.ndarray
    r: float
    n: int
    m: int

    @property
    def sensitivity(self) -> float:
        """‖β̂⁽¹⁾_{\\M} − β̂_{\\M}‖₂."""
        return float(np.linalg.norm(self.unlearned - self.retrained))

    def true_mu(self, sigma: float) -> float:
        """The exact μ of (β̂_{\\M} + b, β̂⁽¹⁾_{\\M} + b), b ~ N(0, σ²I)."""
        return self.sensitivity / float(sigma)


def make_privacy_pair(
    seed: SeedLike,
    n: int,
    p: int,
    m: int,
    *,
    loss: str = "logistic",
    lam: float = 0.5,
    nu: float = 2.0,
    c: float = 1.0,
    tol: float = DEFAULT_TOL,
) -> PrivacyPair:
    """Draw the paper's synthetic data set, fit β̂, remove m random points (DESIGN §7).

    Two spawned streams: data, removal set.
    """
    model = get_loss(loss)
    r = noise_radius(m, n, lam, nu=nu, c=c)  # validates m, n, λ, ν, c
    rng_data, rng_removal = (np.random.default_rng(s) for s in _seed_sequence(seed).spawn(2))
    data = make_data(rng_data, n, p, loss)
    problem = RegularizedGLM(data.X, data.y, model, lam, nu)
    beta_hat = fit_newton(problem, tol=tol).beta
    res = remove(problem, beta_hat, sample_removal_set(rng_removal, n, m), tol=tol)
    return PrivacyPair(retrained=res.retrained, unlearned=res.unlearned, r=r, n=int(n), m=int(m))


def mechanism_sigma(pair: PrivacyPair, epsilon: float, mechanism: str, *, undernoise_factor: float = 10.0) -> float:
    """σ of a mechanism in the audit table.

    ``certified``: σ = r/ε (the paper's calibration); ``control_tight``: σ = ‖β̂⁽¹⁾ − β̂_{\\M}‖/ε,
    so that the true μ equals the claimed ε; ``control_undernoised``: the tight σ divided by
    ``undernoise_factor`` (true μ = factor · ε, which the audit must detect).
    """
    epsilon = check_epsilon(epsilon)
    if mechanism == "certified":
        return noise_scale(pair.r, epsilon)
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")
    scale = max(float(np.linalg.norm(pair.retrained)), 1.0)
    if not pair.sensitivity > 1e-12 * scale:
        raise ValueError(
            "the privacy pair has (numerically) zero sensitivity: the Newton step is exact "
            "(e.g. the ridge loss), so the controls with true μ = ε are undefined"
        )
    tight = pair.sensitivity / epsilon
    if mechanism == "control_tight":
        return tight
    if not (math.isfinite(float(undernoise_factor)) and float(undernoise_factor) > 1):
        raise ValueError(f"undernoise_factor must be a finite number > 1, got {undernoise_factor!r}")
    return tight / float(undernoise_factor)


def audit_table_rows(
    pair: PrivacyPair,
    epsilon: float,
    seed: SeedLike,
    settings: AuditSettings = AuditSettings(),
    *,
    mechanisms: tuple[str, ...] = MECHANISMS,
    delta: float = 1e-5,
    undernoise_factor: float = 10.0,
) -> list[dict]:
    """One audit-table row per mechanism (DESIGN §7).

    Each mechanism claims μ = ε (its certified GPAR level).  Fields: ``mechanism, claimed_mu,
    true_mu, sigma, mu_lb, mu_lb_alg1, epsilon_lb, epsilon_lb_alg1, delta_lb_at_claimed_epsilon``
    (δ(ε) of a μ_LB-GDP mechanism at the claimed ε), ``epsilon_lb_gdp`` (ε at ``delta`` of a
    μ_LB-GDP mechanism), ``accuracy, alg1_accuracy, separation, falsified`` (μ_LB > claimed μ),
    plus ``n, m, epsilon, zeta``.  Each mechanism is audited with its own spawned seed.
    """
    epsilon = check_epsilon(epsilon)
    children = _seed_sequence(seed).spawn(len(mechanisms))
    rows: list[dict] = []
    for mech, child in zip(mechanisms, children):
        sigma = mechanism_sigma(pair, epsilon, mech, undernoise_factor=undernoise_factor)
        res = audit_projection(
            GaussianReleaseSampler(pair.retrained, sigma), GaussianReleaseSampler(pair.unlearned, sigma), child, settings
        )
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
