"""Weight-space auditor for convex certified unlearning (App. H.1, Section 8).

The auditor distinguishes, in the sense of Definition H.1, the unlearned model produced with
a non-empty forget set, U(D_f, A(D), S(D)) (the *positive* hypothesis), from the model
produced with the empty forget set, U(∅, A(D_r), S(D_r)) (the *negative* hypothesis):

1. **Calibration.**  Γ independent models are drawn under each hypothesis and a Gaussian
   N(μ, Σ) (full covariance; d = 1 is the scalar case) is fitted to each set of weight vectors.
2. **Test.**  2L fresh models are drawn; each draw's hypothesis is chosen uniformly at random,
   independently of everything else.  The auditor predicts the hypothesis with the larger
   fitted likelihood (log-likelihood ratio > 0 ⇒ positive; ties ⇒ negative).
3. **Bounds.**
   * pairwise ε_LB: Eq. 3 on the confusion counts (fp of n_neg, fn of n_pos) with two-sided
     Clopper–Pearson intervals, at the certified δ (Section 8: the two outputs of one procedure
     are compared, so no transitivity step and no halving);
   * joint ε_LB: Algorithm 1 / Theorem 4.2 with m = r = 2 and δ = 0 (Section 8, App. H.1).
     Each test draw is one run of Algorithm 1: its sign vector is S = (+1, −1) when the draw
     comes from the positive hypothesis and S = (−1, +1) otherwise (M' = |S_2| = 2, each
     with probability 1/2), the guess Ŝ is the predicted hypothesis, and the overlap is
     V = 2 for a correct guess and 0 otherwise.  The 2L test draws are therefore L' = 2L
     i.i.d. runs; the bound is ``epsilon_ldp`` of :func:`unlearn_audit.stats.bounds.epsilon_lower_bound`,
     not halved (App. H.1: "no division by 2 is needed since no transitivity step is used").
     With all 2L = 200,000 guesses correct it saturates at ε = log(g/(1−g)),
     g = ζ^{1/2L}, i.e. 11.109 at ζ = 0.05, matching Table 2b's 11.1039 (one run per *pair*
     of draws, L' = 100,000, could not exceed 10.416);
   * μ-GDP: μ_LB = Φ⁻¹(1 − FP_hi) − Φ⁻¹(FN_hi) from the same counts, and 2Φ⁻¹(acc_LB) from
     the accuracy (:func:`unlearn_audit.stats.bounds.gdp_mu_lower_bound`, ``…_from_accuracy``).

Calibration and test draws come from separate child generators of ``np.random.SeedSequence``
spawning (one each for the two calibration sets, the test labels and the test draws), so the
predictor is independent of the data it is evaluated on, as the bounds require.
Everything is vectorised: 2L = 200,000 draws take a fraction of a second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable

import numpy as np

from ..checks import check_delta, check_int, check_zeta
from ..seeds import SeedLike, as_seed_sequence, spawn_generators
from ..stats.bounds import (
    Bound,
    EpsilonMuBounds,
    gdp_delta,
    gdp_epsilon,
    epsilon_lower_bound,
    gdp_mu_lower_bound,
    gdp_mu_lower_bound_from_accuracy,
    pairwise_epsilon_lower_bound,
)
from .gaussian_fit import Gaussian, fit_gaussian

__all__ = [
    "Sampler",
    "WeightGaussian",
    "WeightSpaceSettings",
    "WeightSpaceAudit",
    "TwoPointAlgorithm1",
    "algorithm1_two_point",
    "confusion_bounds",
    "audit_weight_space",
    "audit_release",
    "ProjectionSettings",
    "ProjectionAudit",
    "audit_projection",
]

#: ``sampler(rng, size) -> array (size, d)``: ``size`` independent draws of one hypothesis.
Sampler = Callable[[np.random.Generator, int], np.ndarray]

#: A Gaussian fitted to weight vectors (:class:`~.gaussian_fit.Gaussian`; one fit for every auditor).
WeightGaussian = Gaussian


@dataclass(frozen=True)
class WeightSpaceSettings:
    """Settings of the weight-space auditor (App. H.1).

    n_calibration : Γ, calibration draws per hypothesis.
    n_test_draws : 2L, test draws (each hypothesis chosen uniformly at random).
    zeta : significance level ζ.
    pairwise_delta : δ of Eq. 3; ``None`` means the mechanism's certified δ (Section 8).
    joint_delta : δ of the m = r = 2 Theorem 4.2 bound (Section 8: 0).
    keep_draws : keep per-draw labels, predictions and log-likelihood ratios.
    """

    n_calibration: int = 500
    n_test_draws: int = 200_000
    zeta: float = 0.05
    pairwise_delta: float | None = None
    joint_delta: float = 0.0
    keep_draws: bool = True

    def __post_init__(self) -> None:
        check_int(self.n_calibration, "n_calibration (Gamma)", 2)
        check_int(self.n_test_draws, "n_test_draws (2L)", 2)
        check_zeta(self.zeta)
        if self.pairwise_delta is not None:
            check_delta(self.pairwise_delta, "pairwise_delta")
        check_delta(self.joint_delta, "joint_delta")


@dataclass(frozen=True)
class TwoPointAlgorithm1(EpsilonMuBounds):
    """Algorithm 1 with m = r = 2 on a pair of hypotheses: the one convention of this project.

    Each run draws S uniformly from S_2 = {(+1, −1), (−1, +1)} and outputs ``draws_per_run``
    draws, each of which changes hypothesis when S is swapped; the guess is correct or not, so
    the overlap is V ∈ {0, 2}.  If the pair of hypotheses is ε-DP (μ-GDP), one run's output is
    the ``draws_per_run``-fold composition, (k·ε)-LDP ((√k·μ)-GDP) in S.  Hence ``bound`` (Theorem
    4.2 on the runs, ``epsilon_ldp``) bounds k·ε, and the pair's bounds are the Bound objects
    ``epsilon`` (``lb = bound.epsilon_ldp / k``) and ``mu`` (``ldp`` = μ_run = 2Φ⁻¹(acc_LB),
    :func:`~unlearn_audit.stats.bounds.gdp_mu_lower_bound_from_accuracy`, ``lb = μ_run / √k``,
    method "accuracy").  With one draw per run (App. H.1's weight-space auditor, k = 1) nothing is
    divided — App. H.1: "no division by 2 is needed since no transitivity step is used"; with the
    unlearned and the retrained draw presented side by side (k = 2) both are.
    """

    correct: int
    runs: int
    draws_per_run: int
    bound: Bound
    epsilon: Bound
    mu: Bound


def algorithm1_two_point(correct, *, zeta: float, delta: float = 0.0, draws_per_run: int = 1) -> TwoPointAlgorithm1:
    """:class:`TwoPointAlgorithm1` from the per-run correctness of the guesses (bool array)."""
    correct = np.asarray(correct, dtype=bool).ravel()
    k = check_int(draws_per_run, "draws_per_run", 1)
    n_correct = int(np.count_nonzero(correct))
    bound = epsilon_lower_bound(np.where(correct, 2, 0), 2, 2, zeta=zeta, statistic="mean", delta=delta)
    mu_run = gdp_mu_lower_bound_from_accuracy(n_correct, correct.size, zeta=zeta)
    return TwoPointAlgorithm1(
        correct=n_correct, runs=int(correct.size), draws_per_run=k, bound=bound,
        epsilon=replace(bound, lb=float(bound.epsilon_ldp / k)),
        mu=replace(bound, parameter="mu", ldp=float(mu_run), lb=float(mu_run / math.sqrt(k)), rejected=mu_run > 0.0, delta=0.0,
                   method="accuracy"),
    )


def confusion_bounds(fp: int, n_neg: int, fn: int, n_pos: int, *, zeta: float, delta: float = 0.0) -> tuple[Bound, Bound]:
    """Eq. 3 (at δ) and μ_LB = Φ⁻¹(1 − FP_hi) − Φ⁻¹(FN_hi) from one set of confusion counts, as two
    Bound objects of the same counts (neither halved: the two outputs of one procedure)."""
    pairwise = pairwise_epsilon_lower_bound(fp, n_neg, fn, n_pos, zeta=zeta, delta=delta)
    mu = float(gdp_mu_lower_bound(fp, n_neg, fn, n_pos, zeta=zeta))
    return pairwise, replace(pairwise, parameter="mu", ldp=mu, lb=mu, rejected=mu > 0.0, delta=0.0)


@dataclass(frozen=True, eq=False)
class WeightSpaceAudit:
    """Result of :func:`audit_weight_space`.

    Positives are draws of the unlearned model (non-empty forget set), negatives draws of the
    empty-forget-set counterpart.  ``fp`` counts negatives predicted positive (of ``n_neg``),
    ``fn`` positives predicted negative (of ``n_pos``).  ``labels``/``predictions``/``llr`` hold
    the per-draw truth (True = positive), decision and log-likelihood ratio when kept.
    """

    fp: int
    n_neg: int
    fn: int
    n_pos: int
    n_calibration: int
    zeta: float
    delta: float
    joint_delta: float
    pairwise: Bound
    joint: Bound
    mu: Bound
    mu_accuracy: Bound
    fit_unlearned: WeightGaussian
    fit_counterpart: WeightGaussian
    labels: np.ndarray | None = None
    predictions: np.ndarray | None = None
    llr: np.ndarray | None = None

    @property
    def mu_lb(self) -> float:
        """μ_LB from the confusion counts (``mu``)."""
        return self.mu.lb

    @property
    def mu_lb_accuracy(self) -> float:
        """2Φ⁻¹(acc_LB) from the accuracy of the guesses (``mu_accuracy``)."""
        return self.mu_accuracy.lb

    @property
    def n_test_draws(self) -> int:
        """2L, the number of test draws (= the number of m = 2 runs of the joint bound)."""
        return self.n_pos + self.n_neg

    @property
    def correct(self) -> int:
        return self.n_test_draws - self.fp - self.fn

    @property
    def accuracy(self) -> float:
        return self.correct / self.n_test_draws

    @property
    def epsilon_lb_pairwise(self) -> float:
        """Eq. 3 at δ = ``delta`` (not halved)."""
        return self.pairwise.epsilon_lb

    @property
    def epsilon_lb_joint(self) -> float:
        """Theorem 4.2 with m = r = 2 at δ = ``joint_delta``: ``joint.epsilon_ldp`` (not halved)."""
        return self.joint.epsilon_ldp


def _draw(sampler: Sampler, rng: np.random.Generator, size: int, name: str, *, scalar_ok: bool = True) -> np.ndarray:
    """``size`` draws of ``sampler`` as a (size, d) array; ``scalar_ok``: a (size,) result is d = 1."""
    x = np.asarray(sampler(rng, size), dtype=float)
    if x.ndim == 1 and scalar_ok:
        x = x[:, None]
    if x.ndim != 2 or x.shape[0] != size:
        raise ValueError(f"{name} must return an array of shape ({size}, d), got {x.shape}")
    return x


def audit_weight_space(
    sample_unlearned: Sampler,
    sample_counterpart: Sampler,
    rng: SeedLike,
    *,
    n_calibration: int = 500,
    n_test_draws: int = 200_000,
    zeta: float = 0.05,
    delta: float = 0.0,
    joint_delta: float = 0.0,
    keep_draws: bool = True,
) -> WeightSpaceAudit:
    """Run the weight-space auditor of App. H.1 on two samplers of model weights.

    Parameters
    ----------
    sample_unlearned : ``sampler(rng, size) -> (size, d)``, the unlearned model with the
        non-empty forget set (positive hypothesis).
    sample_counterpart : the same for the empty forget set (negative hypothesis).
    rng : Generator, SeedSequence or int; four independent children are spawned from it
        (calibration-positive, calibration-negative, test labels, test draws).
    n_calibration : Γ, calibration draws per hypothesis (≥ 2).
    n_test_draws : 2L, the number of test draws (≥ 2); each hypothesis chosen uniformly.
    zeta : significance level ζ of every bound.
    delta : δ of the pairwise bound (Eq. 3); Section 8 audits at the certified δ.
    joint_delta : δ of the m = r = 2 Theorem 4.2 bound (Section 8: δ = 0).
    keep_draws : keep the per-draw labels, predictions and log-likelihood ratios.

    Returns
    -------
    WeightSpaceAudit with the confusion counts and the three bounds (none halved).
    """
    n_calibration = check_int(n_calibration, "n_calibration (Gamma)", 2)
    n_test_draws = check_int(n_test_draws, "n_test_draws (2L)", 2)
    rng_cal_pos, rng_cal_neg, rng_labels, rng_test = spawn_generators(rng, 4)

    fit_pos = fit_gaussian(_draw(sample_unlearned, rng_cal_pos, n_calibration, "sample_unlearned"))
    fit_neg = fit_gaussian(_draw(sample_counterpart, rng_cal_neg, n_calibration, "sample_counterpart"))
    if fit_pos.dim != fit_neg.dim:
        raise ValueError(f"the two hypotheses have different dimensions ({fit_pos.dim} vs {fit_neg.dim})")

    labels = rng_labels.integers(0, 2, size=n_test_draws).astype(bool)
    n_pos = int(labels.sum())
    n_neg = n_test_draws - n_pos
    if n_pos == 0 or n_neg == 0:
        raise ValueError(f"all {n_test_draws} test draws fell under one hypothesis; increase n_test_draws")
    draws = np.empty((n_test_draws, fit_pos.dim))
    draws[labels] = _draw(sample_unlearned, rng_test, n_pos, "sample_unlearned")
    draws[~labels] = _draw(sample_counterpart, rng_test, n_neg, "sample_counterpart")

    llr = fit_pos.logpdf(draws) - fit_neg.logpdf(draws)
    if np.any(np.isnan(llr)):  # pragma: no cover - finite draws and floored covariances
        raise ValueError("NaN log-likelihood ratio: check the samplers for non-finite draws")
    predictions = llr > 0
    fp = int(np.count_nonzero(predictions & ~labels))
    fn = int(np.count_nonzero(~predictions & labels))

    pairwise, mu = confusion_bounds(fp, n_neg, fn, n_pos, zeta=zeta, delta=delta)
    alg1 = algorithm1_two_point(predictions == labels, zeta=zeta, delta=joint_delta, draws_per_run=1)

    return WeightSpaceAudit(
        fp=fp,
        n_neg=n_neg,
        fn=fn,
        n_pos=n_pos,
        n_calibration=n_calibration,
        zeta=float(zeta),
        delta=float(delta),
        joint_delta=float(joint_delta),
        pairwise=pairwise,
        joint=alg1.bound,
        mu=mu,
        mu_accuracy=alg1.mu,
        fit_unlearned=fit_pos,
        fit_counterpart=fit_neg,
        labels=labels if keep_draws else None,
        predictions=predictions if keep_draws else None,
        llr=llr if keep_draws else None,
    )


def audit_release(release, rng: SeedLike, **kwargs) -> WeightSpaceAudit:
    """:func:`audit_weight_space` on a pair with ``sample_unlearned`` / ``sample_counterpart`` samplers
    (e.g. :class:`~unlearn_audit.stats.gaussian_release.GaussianRelease`)."""
    return audit_weight_space(release.sample_unlearned, release.sample_counterpart, rng, **kwargs)


# --------------------------------------------------------------------------------------
# projection auditor (high-dimensional Gaussian pairs; the second paper's mechanism)
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class ProjectionSettings:
    """Sample sizes and levels of :func:`audit_projection`.

    Parameters
    ----------
    n_calibration : Γ, draws per side for the direction d̂.  The angle between d̂ and the true
        difference θ₁ − θ₀ has cos ≈ μ/sqrt(μ² + 2p/Γ), so Γ ≫ p/μ² is needed for a tight
        bound; a side of :class:`~unlearn_audit.stats.gaussian_release.GaussianRelease` makes Γ free, a plain sampler costs Γ·p normals.
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
        check_int(self.n_calibration, "n_calibration", 1)
        check_int(self.n_fit, "n_fit", 2)
        check_int(self.n_eval, "n_eval", 2)
        check_int(self.n_alg1_runs, "n_alg1_runs", 1)
        check_int(self.chunk_size, "chunk_size", 1)
        if not (0.0 < float(self.zeta) < 1.0):
            raise ValueError(f"zeta must lie in (0, 1), got {self.zeta!r}")


def _sample_mean(sampler: Sampler, rng: np.random.Generator, size: int, chunk: int, name: str) -> np.ndarray:
    if hasattr(sampler, "sample_mean"):
        return np.asarray(sampler.sample_mean(rng, size), dtype=float)
    total, done = None, 0
    while done < size:
        k = min(chunk, size - done)
        s = _draw(sampler, rng, k, name, scalar_ok=False).sum(axis=0)
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
        out[done : done + k] = _draw(sampler, rng, k, name, scalar_ok=False) @ direction
        done += k
    return out


@dataclass(frozen=True)
class ProjectionAudit:
    """Result of :func:`audit_projection`.

    Positives are side-1 (unlearned) draws.  ``fp`` counts side-0 draws classified as side 1
    (of ``n_neg``), ``fn`` side-1 draws classified as side 0 (of ``n_pos``).  ``pairwise`` (Eq. 3,
    δ = 0) and ``mu`` come from these counts (:func:`confusion_bounds`); ``alg1`` is Algorithm 1
    with m = r = 2 with two draws per run, its ``epsilon`` and ``mu`` bounds on the sides' ε and μ
    (:class:`TwoPointAlgorithm1`).  ``separation`` is the fitted (mean₁ − mean₀)/pooled sd of the
    projections: the μ the classifier can reach (up to sampling error).  The ``*_lb`` properties
    read the bounds' ``lb``.
    """

    fp: int
    n_neg: int
    fn: int
    n_pos: int
    pairwise: Bound
    mu: Bound
    alg1: TwoPointAlgorithm1
    separation: float
    direction_norm: float
    zeta: float

    @property
    def mu_lb(self) -> float:
        return self.mu.lb

    @property
    def epsilon_lb(self) -> float:
        return self.pairwise.epsilon_lb

    @property
    def mu_lb_alg1(self) -> float:
        return self.alg1.mu_lb

    @property
    def epsilon_lb_alg1(self) -> float:
        return self.alg1.epsilon_lb

    @property
    def alg1_correct(self) -> int:
        return self.alg1.correct

    @property
    def alg1_runs(self) -> int:
        return self.alg1.runs

    @property
    def accuracy(self) -> float:
        return 1.0 - (self.fp + self.fn) / (self.n_pos + self.n_neg)

    @property
    def alg1_accuracy(self) -> float:
        return self.alg1.correct / self.alg1.runs

    def delta_lb(self, epsilon: float) -> float:
        """δ(ε) of a μ_LB-GDP mechanism (:func:`~unlearn_audit.stats.bounds.gdp_delta`).

        For a Gaussian pair (exactly μ-GDP) δ(ε) is increasing in μ, so this lower-bounds the
        pair's δ(ε) whenever μ_LB ≤ μ.
        """
        return gdp_delta(self.mu_lb, epsilon)

    def epsilon_lb_gdp(self, delta: float) -> float:
        """ε(δ) of a μ_LB-GDP mechanism (:func:`~unlearn_audit.stats.bounds.gdp_epsilon`)."""
        return gdp_epsilon(self.mu_lb, delta)


def audit_projection(
    sample_retrained: Sampler,
    sample_unlearned: Sampler,
    seed: SeedLike,
    settings: ProjectionSettings = ProjectionSettings(),
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
    streams = [np.random.default_rng(c) for c in as_seed_sequence(seed).spawn(10)]
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
    fit0 = fit_gaussian(_sample_projection(sample_retrained, rng_fit0, s.n_fit, direction, s.chunk_size, names[0]))
    fit1 = fit_gaussian(_sample_projection(sample_unlearned, rng_fit1, s.n_fit, direction, s.chunk_size, names[1]))

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
    pairwise, mu = confusion_bounds(fp, n_neg, fn, n_pos, zeta=s.zeta, delta=0.0)

    # 4. Algorithm 1, m = r = 2: S = (+1,−1) iff the unlearned draw is presented first
    first_is_unlearned = rng_sgn.integers(0, 2, size=s.n_alg1_runs).astype(bool)
    a0 = llr(_sample_projection(samplers[0], rng_a0, s.n_alg1_runs, direction, s.chunk_size, names[0]))
    a1 = llr(_sample_projection(samplers[1], rng_a1, s.n_alg1_runs, direction, s.chunk_size, names[1]))
    first = np.where(first_is_unlearned, a1, a0)
    second = np.where(first_is_unlearned, a0, a1)
    guess_first = first > second  # ties: the second draw is guessed unlearned
    # both presented draws change side when S is swapped: two draws per run (TwoPointAlgorithm1)
    alg1 = algorithm1_two_point(guess_first == first_is_unlearned, zeta=s.zeta, delta=0.0, draws_per_run=2)

    pooled_sd = math.sqrt(0.5 * (fit0.var + fit1.var))
    return ProjectionAudit(
        fp=fp,
        n_neg=n_neg,
        fn=fn,
        n_pos=n_pos,
        pairwise=pairwise,
        mu=mu,
        alg1=alg1,
        separation=float((fit1.mean[0] - fit0.mean[0]) / pooled_sd),
        direction_norm=dnorm,
        zeta=float(s.zeta),
    )


