"""The pair of Gaussian releases that a convex certified-unlearning audit distinguishes.

Both convex mechanisms of Section 8 release a deterministic vector plus isotropic Gaussian
noise, and Definition H.1 compares two such releases of the *same* procedure:

* the unlearned model, U(D_f, A(D), S(D)) = w_f + N(0, σ²I) (non-empty forget set), and
* its counterpart,     U(∅, A(D_r), S(D_r)) = w_r + N(0, σ²I) (empty forget set).

A draw is therefore w + σ·N(0, I), sampled in one vectorised call.  The true Gaussian
differential-privacy parameter of the pair is μ = ‖w_f − w_r‖/σ (Dong, Roth & Su 2022), and
the pair is (ε, δ_G(ε; μ))-indistinguishable (:func:`unlearn_audit.stats.gaussian_mechanism.hockey_stick_delta`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..stats.gaussian_mechanism import hockey_stick_delta

__all__ = ["GaussianRelease"]


@dataclass(frozen=True, eq=False)
class GaussianRelease:
    """Two Gaussian releases N(mean_unlearned, σ²I) and N(mean_counterpart, σ²I).

    Parameters
    ----------
    mean_unlearned : w_f, the noiseless output with the non-empty forget set (d,).
    mean_counterpart : w_r, the noiseless output with the empty forget set (d,).
    sigma : noise standard deviation σ ≥ 0 per coordinate.
    sensitivity : the certified bound Δ ≥ ‖w_f − w_r‖ that σ was calibrated to (for reporting).
    """

    mean_unlearned: np.ndarray
    mean_counterpart: np.ndarray
    sigma: float
    sensitivity: float = math.nan

    def __post_init__(self) -> None:
        a = np.atleast_1d(np.asarray(self.mean_unlearned, dtype=float)).reshape(-1)
        b = np.atleast_1d(np.asarray(self.mean_counterpart, dtype=float)).reshape(-1)
        if a.shape != b.shape:
            raise ValueError(f"mean_unlearned {a.shape} and mean_counterpart {b.shape} differ in shape")
        sigma = float(self.sigma)
        if not (math.isfinite(sigma) and sigma >= 0):
            raise ValueError(f"sigma must be a finite number >= 0, got {sigma!r}")
        object.__setattr__(self, "mean_unlearned", a)
        object.__setattr__(self, "mean_counterpart", b)
        object.__setattr__(self, "sigma", sigma)
        object.__setattr__(self, "sensitivity", float(self.sensitivity))

    @property
    def dim(self) -> int:
        return int(self.mean_unlearned.shape[0])

    @property
    def distance(self) -> float:
        """‖w_f − w_r‖₂, the distance the noise has to hide."""
        return float(np.linalg.norm(self.mean_unlearned - self.mean_counterpart))

    @property
    def true_mu(self) -> float:
        """μ = ‖w_f − w_r‖/σ: the pair is exactly μ-GDP (∞ if σ = 0 and the means differ)."""
        if self.sigma == 0:
            return 0.0 if self.distance == 0 else math.inf
        return self.distance / self.sigma

    def true_delta(self, epsilon: float) -> float:
        """The tight δ(ε) = δ_G(ε; μ) of the pair."""
        return float(hockey_stick_delta(epsilon, self.true_mu))

    def _sample(self, mean: np.ndarray, rng: np.random.Generator, size: int) -> np.ndarray:
        size = int(size)
        if size < 0:
            raise ValueError(f"size must be >= 0, got {size}")
        return mean + self.sigma * rng.standard_normal((size, self.dim))

    def sample_unlearned(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` independent unlearned models w_f + σ·N(0, I), shape (size, d)."""
        return self._sample(self.mean_unlearned, rng, size)

    def sample_counterpart(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` independent empty-forget-set models w_r + σ·N(0, I), shape (size, d)."""
        return self._sample(self.mean_counterpart, rng, size)
