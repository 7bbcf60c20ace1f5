"""The Gaussian privacy pair every weight-space audit distinguishes: two releases of the same
procedure, one mean plus isotropic Gaussian noise each (Definition H.1; docs/calibrations.md §2,
§12).

* The convex mechanisms of Section 8 release w_f + N(0, σ²I) (the unlearned model, non-empty
  forget set) against w_r + N(0, σ²I) (the empty forget set) (:mod:`unlearn_audit.convex`).
* Gaussian certified unlearning releases β̂⁽¹⁾_{\\M} + b (one Newton step) against β̂_{\\M} + b
  (the retrained model), b ~ N(0, σ²I_p) (:mod:`unlearn_audit.gaussian_unlearning`).

The pair's true Gaussian differential-privacy parameter is μ = ‖mean₁ − mean₀‖/σ (Dong, Roth &
Su 2022), and it is (ε, δ_G(ε; μ))-indistinguishable
(:func:`unlearn_audit.stats.gaussian_mechanism.hockey_stick_delta`).  Each side is a
:class:`GaussianSide`: a sampler ``side(rng, size) -> (size, d)`` that also samples the mean of
``size`` draws and their projections on a direction exactly in distribution, so that an audit's
memory stays O(d + size) (:mod:`unlearn_audit.auditors.weight_space`).  A data type of the statistics
layer (numpy and scipy, never torch): the mechanisms that release such a pair import it from here,
not from the auditors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .gaussian_mechanism import hockey_stick_delta

__all__ = ["GaussianSide", "GaussianRelease"]


def _sigma(value: float) -> float:
    sigma = float(value)
    if not (math.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"sigma must be a finite number >= 0, got {value!r}")
    return sigma


@dataclass(frozen=True, eq=False)
class GaussianSide:
    """Draws of ``mean + sigma · z``, z ~ N(0, I_d): one side of a Gaussian privacy pair."""

    mean: np.ndarray
    sigma: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "mean", np.atleast_1d(np.asarray(self.mean, dtype=float)).reshape(-1))
        object.__setattr__(self, "sigma", _sigma(self.sigma))

    @property
    def dim(self) -> int:
        return int(self.mean.shape[0])

    def __call__(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` independent draws, shape (size, d)."""
        size = int(size)
        if size < 0:
            raise ValueError(f"size must be >= 0, got {size}")
        return self.mean + self.sigma * rng.standard_normal((size, self.dim))

    def sample_mean(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """The sample mean of ``size`` draws: N(mean, σ²/size · I)."""
        return self.mean + self.sigma / math.sqrt(int(size)) * rng.standard_normal(self.dim)

    def sample_projection(self, rng: np.random.Generator, size: int, direction: np.ndarray) -> np.ndarray:
        """dᵀx for ``size`` draws x: N(dᵀmean, σ²‖d‖²)."""
        direction = np.asarray(direction, dtype=float)
        loc = float(direction @ self.mean)
        return loc + self.sigma * float(np.linalg.norm(direction)) * rng.standard_normal(int(size))


@dataclass(frozen=True, eq=False)
class GaussianRelease:
    """Two Gaussian releases N(mean_unlearned, σ²I) and N(mean_counterpart, σ²I).

    Parameters
    ----------
    mean_unlearned : the noiseless unlearned output (d,): w_f, or β̂⁽¹⁾_{\\M}.
    mean_counterpart : the noiseless output it is compared with (d,): w_r, or β̂_{\\M}.
    sigma : noise standard deviation σ ≥ 0 per coordinate.
    sensitivity : the certified bound Δ ≥ ‖mean_unlearned − mean_counterpart‖ that σ was
        calibrated to (for reporting; NaN where none).
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
        object.__setattr__(self, "mean_unlearned", a)
        object.__setattr__(self, "mean_counterpart", b)
        object.__setattr__(self, "sigma", _sigma(self.sigma))
        object.__setattr__(self, "sensitivity", float(self.sensitivity))

    @property
    def dim(self) -> int:
        return int(self.mean_unlearned.shape[0])

    @property
    def unlearned(self) -> GaussianSide:
        """The unlearned side (the positive hypothesis of an audit)."""
        return GaussianSide(self.mean_unlearned, self.sigma)

    @property
    def counterpart(self) -> GaussianSide:
        """The side it is compared with (the negative hypothesis)."""
        return GaussianSide(self.mean_counterpart, self.sigma)

    @property
    def distance(self) -> float:
        """‖mean_unlearned − mean_counterpart‖₂, the distance the noise has to hide."""
        return float(np.linalg.norm(self.mean_unlearned - self.mean_counterpart))

    @property
    def true_mu(self) -> float:
        """μ = distance/σ: the pair is exactly μ-GDP (∞ if σ = 0 and the means differ)."""
        if self.sigma == 0:
            return 0.0 if self.distance == 0 else math.inf
        return self.distance / self.sigma

    def true_delta(self, epsilon: float) -> float:
        """The tight δ(ε) = δ_G(ε; μ) of the pair."""
        return float(hockey_stick_delta(epsilon, self.true_mu))

    def sample_unlearned(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` independent unlearned releases, shape (size, d)."""
        return self.unlearned(rng, size)

    def sample_counterpart(self, rng: np.random.Generator, size: int) -> np.ndarray:
        """``size`` independent counterpart releases, shape (size, d)."""
        return self.counterpart(rng, size)
