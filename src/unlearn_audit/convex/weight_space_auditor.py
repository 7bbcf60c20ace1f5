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
     i.i.d. runs; the bound is ``epsilon_ldp`` of :func:`unlearn_audit.bounds.epsilon_lower_bound`,
     not halved (App. H.1: "no division by 2 is needed since no transitivity step is used").
     With all 2L = 200,000 guesses correct it saturates at ε = log(g/(1−g)),
     g = ζ^{1/2L}, i.e. 11.109 at ζ = 0.05, matching Table 2b's 11.1039 (one run per *pair*
     of draws, L' = 100,000, could not exceed 10.416);
   * μ-GDP: μ_LB = Φ⁻¹(1 − FP_hi) − Φ⁻¹(FN_hi) from the same counts, and 2Φ⁻¹(acc_LB) from
     the accuracy (:func:`unlearn_audit.bounds.gdp_mu_lower_bound`, ``…_from_accuracy``).

Calibration and test draws come from separate child generators of ``np.random.SeedSequence``
spawning (one each for the two calibration sets, the test labels and the test draws), so the
predictor is independent of the data it is evaluated on, as the bounds require.
Everything is vectorised: 2L = 200,000 draws take a fraction of a second.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable, Union

import numpy as np
from scipy.linalg import solve_triangular

from ..bounds import (
    EpsilonBound,
    PairwiseBound,
    epsilon_lower_bound,
    gdp_mu_lower_bound,
    gdp_mu_lower_bound_from_accuracy,
    pairwise_epsilon_lower_bound,
)
from .release import GaussianRelease

__all__ = [
    "Sampler",
    "SeedLike",
    "WeightGaussian",
    "WeightSpaceAudit",
    "audit_weight_space",
    "audit_release",
    "spawn_generators",
    "DEFAULT_REL_VAR_FLOOR",
    "DEFAULT_ABS_VAR_FLOOR",
]

#: ``sampler(rng, size) -> array (size, d)``: ``size`` independent draws of one hypothesis.
Sampler = Callable[[np.random.Generator, int], np.ndarray]
SeedLike = Union[np.random.Generator, np.random.SeedSequence, int]

# Fitted covariances get (rel · trace/d + abs) added to the diagonal: a degenerate direction
# (or σ = 0) would otherwise give a singular Σ and infinite likelihoods.  The relative part is
# far below the sampling error of any covariance estimated from Γ ≤ 10⁸ draws.
DEFAULT_REL_VAR_FLOOR = 1e-10
DEFAULT_ABS_VAR_FLOOR = 1e-24


def spawn_generators(seed: SeedLike, n: int) -> list[np.random.Generator]:
    """``n`` independent child generators (SeedSequence spawning) of a Generator, SeedSequence or int."""
    if isinstance(seed, np.random.Generator):
        return list(seed.spawn(n))
    if isinstance(seed, np.random.SeedSequence):
        return [np.random.default_rng(s) for s in seed.spawn(n)]
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return [np.random.default_rng(s) for s in np.random.SeedSequence(int(seed)).spawn(n)]
    raise ValueError(f"rng must be a numpy Generator, a SeedSequence or an int seed, got {type(seed).__name__}")


@dataclass(frozen=True, eq=False)
class WeightGaussian:
    """A Gaussian N(mean, cov) fitted to weight vectors, with a vectorised log-density."""

    mean: np.ndarray
    cov: np.ndarray
    n_samples: int

    def __post_init__(self) -> None:
        mean = np.atleast_1d(np.asarray(self.mean, dtype=float))
        cov = np.atleast_2d(np.asarray(self.cov, dtype=float))
        if cov.shape != (mean.size, mean.size):
            raise ValueError(f"cov must have shape {(mean.size, mean.size)}, got {cov.shape}")
        chol = np.linalg.cholesky(cov)  # raises LinAlgError if not positive definite
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "cov", cov)
        object.__setattr__(self, "_chol", chol)
        object.__setattr__(self, "_log_det", float(2.0 * np.sum(np.log(np.diag(chol)))))

    @classmethod
    def fit(
        cls,
        samples: np.ndarray,
        *,
        rel_var_floor: float = DEFAULT_REL_VAR_FLOOR,
        abs_var_floor: float = DEFAULT_ABS_VAR_FLOOR,
    ) -> "WeightGaussian":
        """Sample mean and unbiased (ddof = 1) covariance of ``samples`` (Γ, d), floored."""
        x = np.asarray(samples, dtype=float)
        if x.ndim == 1:
            x = x[:, None]
        if x.ndim != 2 or x.shape[0] < 2:
            raise ValueError(f"need at least 2 calibration draws of shape (n, d) to fit a Gaussian, got {x.shape}")
        if not np.all(np.isfinite(x)):
            raise ValueError("calibration draws contain NaN or infinite values")
        mean = x.mean(axis=0)
        centred = x - mean
        cov = centred.T @ centred / (x.shape[0] - 1)
        d = cov.shape[0]
        floor = rel_var_floor * max(float(np.trace(cov)) / d, 0.0) + abs_var_floor
        return cls(mean=mean, cov=cov + floor * np.eye(d), n_samples=int(x.shape[0]))

    @property
    def dim(self) -> int:
        return int(self.mean.size)

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        """log N(x; mean, cov) for every row of ``x`` (N, d)."""
        x = np.asarray(x, dtype=float)
        if x.ndim == 1:
            x = x[:, None] if self.dim == 1 else x[None, :]
        z = solve_triangular(self._chol, (x - self.mean).T, lower=True, check_finite=False)
        maha = np.einsum("ij,ij->j", z, z)
        return -0.5 * (maha + self._log_det + self.dim * math.log(2.0 * math.pi))


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
    pairwise: PairwiseBound
    joint: EpsilonBound
    mu_lb: float
    mu_lb_accuracy: float
    fit_unlearned: WeightGaussian
    fit_counterpart: WeightGaussian
    labels: np.ndarray | None = None
    predictions: np.ndarray | None = None
    llr: np.ndarray | None = None

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


def _check_positive_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or int(value) != value or int(value) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


def _draw(sampler: Sampler, rng: np.random.Generator, size: int, name: str) -> np.ndarray:
    x = np.asarray(sampler(rng, size), dtype=float)
    if x.ndim == 1:
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
    rel_var_floor: float = DEFAULT_REL_VAR_FLOOR,
    abs_var_floor: float = DEFAULT_ABS_VAR_FLOOR,
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
    n_calibration = _check_positive_int(n_calibration, "n_calibration (Gamma)", 2)
    n_test_draws = _check_positive_int(n_test_draws, "n_test_draws (2L)", 2)
    rng_cal_pos, rng_cal_neg, rng_labels, rng_test = spawn_generators(rng, 4)

    fit_pos = WeightGaussian.fit(
        _draw(sample_unlearned, rng_cal_pos, n_calibration, "sample_unlearned"),
        rel_var_floor=rel_var_floor,
        abs_var_floor=abs_var_floor,
    )
    fit_neg = WeightGaussian.fit(
        _draw(sample_counterpart, rng_cal_neg, n_calibration, "sample_counterpart"),
        rel_var_floor=rel_var_floor,
        abs_var_floor=abs_var_floor,
    )
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
    correct = n_test_draws - fp - fn

    pairwise = pairwise_epsilon_lower_bound(fp, n_neg, fn, n_pos, zeta=zeta, delta=delta)
    overlaps = np.where(predictions == labels, 2, 0)
    joint = epsilon_lower_bound(overlaps, 2, 2, zeta=zeta, statistic="mean", delta=joint_delta)
    mu_lb = gdp_mu_lower_bound(fp, n_neg, fn, n_pos, zeta=zeta)
    mu_lb_acc = gdp_mu_lower_bound_from_accuracy(correct, n_test_draws, zeta=zeta)

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
        joint=joint,
        mu_lb=float(mu_lb),
        mu_lb_accuracy=float(mu_lb_acc),
        fit_unlearned=fit_pos,
        fit_counterpart=fit_neg,
        labels=labels if keep_draws else None,
        predictions=predictions if keep_draws else None,
        llr=llr if keep_draws else None,
    )


def audit_release(release: GaussianRelease, rng: SeedLike, **kwargs) -> WeightSpaceAudit:
    """:func:`audit_weight_space` on a :class:`~unlearn_audit.convex.release.GaussianRelease` pair."""
    return audit_weight_space(release.sample_unlearned, release.sample_counterpart, rng, **kwargs)
