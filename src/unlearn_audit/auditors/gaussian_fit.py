"""The one Gaussian fit of every auditor (Algorithm 2 step 7, Algorithm 3, App. H.1;
docs/workflow.md#the-dag-step-by-step, step 5).

Every auditor fits, per side (the example's batch in the forget set or not; the unlearned model
or its counterpart), a Gaussian by sample mean and **unbiased** variance (ddof = 1), and scores a
new observation by the log-likelihood ratio of the two fits, log σ terms included.

**The variance floor (one rule for all auditors).**  With deterministic training a score can
repeat exactly across calibration runs, and a zero variance would give an infinite likelihood
ratio.  With

    floor = rel_var_floor · v̄ + abs_var_floor,     rel_var_floor = 1e-10, abs_var_floor = 1e-300,

where v̄ is the mean of the unfloored variances of the fit (over examples and both sides for the
per-example fits, over the diagonal for a covariance), every per-example variance is raised to
at least ``floor``, and ``floor`` is added to the diagonal of a covariance (so that a degenerate
direction, not only a degenerate coordinate, cannot make it singular).  The floor is relative, so it means the
same whatever the units of the scores (logits, losses, weights of σ = 1e-3); it is far below the
sampling error of any variance estimated from Γ ≥ 2 runs, so it only ever acts on degenerate
directions.  It is a property of the predictor, fitted on calibration runs only, so the bounds
stay valid whatever the floor.

* :func:`fit_per_example` — N(μ⁺, σ⁺²) and N(μ⁻, σ⁻²) per example from (Γ, n) calibration scores;
* :func:`fit_per_class` — N(μ_k, σ_k²) per class k and example (Algorithm 3 step 7: one class per
  candidate sign vector S̃; the floor's v̄ is over all K·n variances);
* :func:`fit_gaussian` — N(mean, Σ) of (Γ, d) draws (full covariance; d = 1 is the scalar case);
* :func:`log_normal` — log N(x; μ, σ) elementwise.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.linalg import solve_triangular

__all__ = [
    "REL_VAR_FLOOR",
    "ABS_VAR_FLOOR",
    "variance_floor",
    "log_normal",
    "PerExampleFit",
    "fit_per_example",
    "PerClassFit",
    "fit_per_class",
    "Gaussian",
    "fit_gaussian",
]

REL_VAR_FLOOR = 1e-10
ABS_VAR_FLOOR = 1e-300


def variance_floor(variances: np.ndarray, *, rel_var_floor: float = REL_VAR_FLOOR, abs_var_floor: float = ABS_VAR_FLOOR) -> float:
    """The floor of the module docstring: ``rel_var_floor · mean(variances) + abs_var_floor``."""
    v = np.asarray(variances, dtype=float)
    scale = float(np.mean(v)) if v.size else 0.0
    return rel_var_floor * max(scale, 0.0) + abs_var_floor


def log_normal(x, mu, sd):
    """log N(x; μ, σ²) elementwise, σ a standard deviation."""
    return -0.5 * ((x - mu) / sd) ** 2 - np.log(sd) - 0.5 * math.log(2 * math.pi)


@dataclass(frozen=True)
class PerExampleFit:
    """Per-example in/out Gaussian parameters fitted on calibration runs (Algorithm 2, step 7)."""

    mu_in: np.ndarray
    sd_in: np.ndarray
    n_in: np.ndarray
    mu_out: np.ndarray
    sd_out: np.ndarray
    n_out: np.ndarray

    def log_likelihood_ratio(self, scores: np.ndarray) -> np.ndarray:
        """log N(s; μ⁺, σ⁺) − log N(s; μ⁻, σ⁻) for scores (..., n)."""
        return log_normal(scores, self.mu_in, self.sd_in) - log_normal(scores, self.mu_out, self.sd_out)


def fit_per_example(
    scores: np.ndarray,
    in_forget: np.ndarray,
    *,
    pooled_variance: bool = False,
    rel_var_floor: float = REL_VAR_FLOOR,
) -> PerExampleFit:
    """Fit N(μ⁺, σ⁺²) and N(μ⁻, σ⁻²) per example from calibration scores.

    Parameters
    ----------
    scores : (Γ, n) scores of n candidate examples in Γ calibration runs.
    in_forget : (Γ, n) bool, True where the example's batch was in the forget set (S_j = +1).
    pooled_variance : one variance per side pooled over all examples (LiRA's fixed-variance
        variant) instead of per-example variances.
    rel_var_floor : relative variance floor (module docstring).

    Each example needs ≥ 2 calibration runs on each side.
    """
    scores = np.asarray(scores, dtype=float)
    inside = np.asarray(in_forget, dtype=bool)
    if scores.shape != inside.shape or scores.ndim != 2:
        raise ValueError(f"scores and in_forget must both be (runs, examples); got {scores.shape} and {inside.shape}")
    if not np.all(np.isfinite(scores)):
        raise ValueError("calibration scores contain NaN or infinite values")
    sides = {}
    for side, mask in (("in", inside), ("out", ~inside)):
        n = mask.sum(axis=0)
        if np.any(n < 2):
            raise ValueError(
                f"some examples have fewer than 2 calibration runs with their batch {side} the forget set; "
                "increase the number of calibration runs"
            )
        mu = np.where(mask, scores, 0.0).sum(axis=0) / n
        ss = np.where(mask, (scores - mu) ** 2, 0.0).sum(axis=0)
        var = ss / (n - 1)
        if pooled_variance:
            var = np.full_like(var, ss.sum() / (n - 1).sum())
        sides[side] = (mu, var, n)
    floor = variance_floor(np.concatenate([sides["in"][1], sides["out"][1]]), rel_var_floor=rel_var_floor)
    out = [x for side in ("in", "out") for x in (sides[side][0], np.sqrt(np.maximum(sides[side][1], floor)), sides[side][2])]
    return PerExampleFit(*out)


@dataclass(frozen=True, eq=False)
class Gaussian:
    """A Gaussian N(mean, cov) with a vectorised log-density."""

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
    def fit(cls, samples: np.ndarray, *, rel_var_floor: float = REL_VAR_FLOOR) -> "Gaussian":
        """:func:`fit_gaussian` as a constructor."""
        return fit_gaussian(samples, rel_var_floor=rel_var_floor)

    @property
    def dim(self) -> int:
        return int(self.mean.size)

    @property
    def var(self) -> float:
        """The variance of a 1-d Gaussian."""
        if self.dim != 1:
            raise ValueError("var is defined for a 1-d Gaussian; use cov")
        return float(self.cov[0, 0])

    def logpdf(self, x: np.ndarray) -> np.ndarray:
        """log N(x; mean, cov) for every row of ``x`` (N, d); a 1-d array is N scalars when d = 1."""
        x = np.asarray(x, dtype=float)
        if x.ndim == 1:
            x = x[:, None] if self.dim == 1 else x[None, :]
        z = solve_triangular(self._chol, (x - self.mean).T, lower=True, check_finite=False)
        maha = np.einsum("ij,ij->j", z, z)
        return -0.5 * (maha + self._log_det + self.dim * math.log(2.0 * math.pi))


def fit_gaussian(samples: np.ndarray, *, rel_var_floor: float = REL_VAR_FLOOR) -> Gaussian:
    """Sample mean and unbiased (ddof = 1) covariance of ``samples`` (Γ, d) or (Γ,), floored.

    The floor (module docstring, v̄ = trace/d) is added to the diagonal, so a degenerate direction
    cannot make Σ singular.
    """
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
    floor = variance_floor(np.diag(cov), rel_var_floor=rel_var_floor)
    return Gaussian(mean=mean, cov=cov + floor * np.eye(d), n_samples=int(x.shape[0]))


@dataclass(frozen=True)
class PerClassFit:
    """Per-class, per-example Gaussians fitted on calibration runs (Algorithm 3, step 7).

    ``mu``, ``sd`` are (K, n): class k's mean and floored standard deviation of each of the n
    examples; ``n`` (K,) is the number of calibration runs of each class.
    """

    mu: np.ndarray
    sd: np.ndarray
    n: np.ndarray

    @property
    def n_classes(self) -> int:
        return int(self.mu.shape[0])

    def log_likelihood(self, scores: np.ndarray) -> np.ndarray:
        """Λ_k = Σ_i log N(s_i; μ_{k,i}, σ_{k,i}) for scores (..., n) → (..., K) (Algorithm 3, step 11).

        The log σ terms are included (classes have different variances).
        """
        scores = np.asarray(scores, dtype=float)
        if scores.shape[-1] != self.mu.shape[1]:
            raise ValueError(f"scores have {scores.shape[-1]} examples but the fit has {self.mu.shape[1]}")
        out = np.empty(scores.shape[:-1] + (self.n_classes,))
        for k in range(self.n_classes):  # one class at a time: memory (..., n), not (..., K, n)
            out[..., k] = log_normal(scores, self.mu[k], self.sd[k]).sum(axis=-1)
        return out


def fit_per_class(
    scores: np.ndarray,
    classes: np.ndarray,
    n_classes: int,
    *,
    rel_var_floor: float = REL_VAR_FLOOR,
) -> PerClassFit:
    """Fit N(μ_k, σ_k²) per class k and example from calibration scores (Algorithm 3, step 7).

    Parameters
    ----------
    scores : (N, n) scores of n candidate examples in N calibration runs.
    classes : (N,) class of each run, integers in [0, n_classes) (for Algorithm 3 the rank of
        the run's sign vector, :func:`unlearn_audit.stats.signs.sign_vector_rank`).
    n_classes : K; every class needs ≥ 2 calibration runs.
    rel_var_floor : relative variance floor (module docstring; v̄ over all K·n variances).

    Sample mean and unbiased (ddof = 1) variance per class and example, floored as in
    :func:`fit_per_example`.
    """
    scores = np.asarray(scores, dtype=float)
    classes = np.asarray(classes)
    if scores.ndim != 2 or classes.shape != (scores.shape[0],):
        raise ValueError(f"scores must be (runs, examples) and classes (runs,); got {scores.shape} and {classes.shape}")
    if isinstance(n_classes, bool) or not isinstance(n_classes, (int, np.integer)) or n_classes < 1:
        raise ValueError(f"n_classes must be an integer >= 1, got {n_classes!r}")
    if classes.size and not np.issubdtype(classes.dtype, np.integer):
        raise ValueError(f"classes must be integers in [0, {n_classes}), got dtype {classes.dtype}")
    if classes.size and (classes.min() < 0 or classes.max() >= n_classes):
        raise ValueError(f"classes must lie in [0, {n_classes}); got min {classes.min()}, max {classes.max()}")
    if not np.all(np.isfinite(scores)):
        raise ValueError("calibration scores contain NaN or infinite values")
    counts = np.bincount(classes.astype(np.int64), minlength=n_classes)
    short = np.flatnonzero(counts < 2)
    if short.size:
        k = int(short[0])
        more = f" (and {short.size - 1} more classes)" if short.size > 1 else ""
        raise ValueError(
            f"class {k} has {int(counts[k])} calibration run(s){more}; every class needs at least 2 "
            "to fit a variance: increase calibration runs per candidate"
        )
    mu = np.empty((n_classes, scores.shape[1]))
    var = np.empty_like(mu)
    for k in range(n_classes):
        block = scores[classes == k]
        mu[k] = block.mean(axis=0)
        var[k] = ((block - mu[k]) ** 2).sum(axis=0) / (block.shape[0] - 1)
    floor = variance_floor(var, rel_var_floor=rel_var_floor)
    return PerClassFit(mu=mu, sd=np.sqrt(np.maximum(var, floor)), n=counts)
