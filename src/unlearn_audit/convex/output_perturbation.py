"""Output perturbation (App. I.1) on linear regression.

Given a trained model x̂, the unlearned model is

    x_u = Π_{C0}(x̂) + ξ,   ξ ~ N(0, σ² I),

with Π_{C0} the Euclidean projection onto the ℓ2 ball of radius C0.  Every clipped output lies
in that ball, so any two differ by at most Δ = 2·C0, and σ is the exact Gaussian mechanism for
sensitivity 2·C0 at the certified (ε, δ) (docs/calibrations.md §10, §2; σ does not depend on the data).
The unlearned model uses x̂ = A(D) (trained with the forget set); its counterpart of
Definition H.1 is the same mechanism with the empty forget set, x̂ = A(D_r).  Training is least
squares with no regulariser (App. I.1: "an MSE loss and no regulariser").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..stats.gaussian_mechanism import gaussian_sigma
from .losses import ConvexData, SquaredLoss, add_intercept
from .perturbed_newton import check_epsilon_delta
from ..stats.gaussian_release import GaussianRelease

__all__ = [
    "project_l2_ball",
    "output_perturbation_sigma",
    "OutputPerturbation",
    "output_perturbation",
]


def _check_clip_radius(clip_radius: float) -> float:
    c = float(clip_radius)
    if not (math.isfinite(c) and c > 0):
        raise ValueError(f"clip_radius (C0) must be a finite number > 0, got {clip_radius!r}")
    return c


def project_l2_ball(w: np.ndarray, radius: float) -> np.ndarray:
    """Π_C(w) = w · min(1, C/‖w‖₂), the projection onto the ℓ2 ball of radius C."""
    radius = _check_clip_radius(radius)
    w = np.asarray(w, dtype=float)
    norm = float(np.linalg.norm(w))
    return w.copy() if norm <= radius else w * (radius / norm)


def output_perturbation_sigma(epsilon: float, delta: float, clip_radius: float) -> float:
    """σ of output perturbation: the exact Gaussian mechanism with Δ = 2·C0 (App. I.1)."""
    epsilon, delta = check_epsilon_delta(epsilon, delta)
    return gaussian_sigma(epsilon, delta, 2.0 * _check_clip_radius(clip_radius))


@dataclass(frozen=True, eq=False)
class OutputPerturbation:
    """The deterministic part of output perturbation and its counterpart.

    Attributes
    ----------
    w_full : x̂ = A(D), trained with the forget set.
    w_retain : A(D_r), trained on the retain set only.
    clip_radius : C0.
    fit_intercept : whether a constant feature was appended (the intercept is then a
        released coordinate, clipped and noised with the others).
    """

    w_full: np.ndarray
    w_retain: np.ndarray
    clip_radius: float
    fit_intercept: bool

    @property
    def clipped_full(self) -> np.ndarray:
        """Π_{C0}(A(D))."""
        return project_l2_ball(self.w_full, self.clip_radius)

    @property
    def clipped_retain(self) -> np.ndarray:
        """Π_{C0}(A(D_r))."""
        return project_l2_ball(self.w_retain, self.clip_radius)

    @property
    def sensitivity(self) -> float:
        """Δ = 2·C0."""
        return 2.0 * self.clip_radius

    @property
    def distance(self) -> float:
        """‖Π(A(D)) − Π(A(D_r))‖ ≤ 2·C0."""
        return float(np.linalg.norm(self.clipped_full - self.clipped_retain))

    @property
    def rho(self) -> float:
        """distance / Δ: how much of the certified sensitivity is actually used."""
        return self.distance / self.sensitivity

    def sigma(self, epsilon: float, delta: float) -> float:
        return output_perturbation_sigma(epsilon, delta, self.clip_radius)

    def release(self, epsilon: float, delta: float) -> GaussianRelease:
        """The audited pair Π(A(D)) + N(0, σ²I) vs Π(A(D_r)) + N(0, σ²I)."""
        return GaussianRelease(self.clipped_full, self.clipped_retain, self.sigma(epsilon, delta), sensitivity=self.sensitivity)


def output_perturbation(
    retain: ConvexData,
    forget: ConvexData,
    *,
    clip_radius: float,
    fit_intercept: bool = True,
    lam: float = 0.0,
) -> OutputPerturbation:
    """Train linear regression on D = D_r ∪ D_f and on D_r; return the clipped pair (App. I).

    Parameters
    ----------
    retain, forget : D_r and D_f (features X, continuous targets y).
    clip_radius : C0 > 0 (Table 2: 0.1).
    fit_intercept : append a constant feature before training.
    lam : ridge coefficient (0 in the paper).
    """
    clip_radius = _check_clip_radius(clip_radius)
    loss = SquaredLoss(lam=lam)
    full = retain.concat(forget)
    if fit_intercept:
        full, retain = add_intercept(full), add_intercept(retain)
    return OutputPerturbation(
        w_full=np.atleast_1d(loss.erm(full)),
        w_retain=np.atleast_1d(loss.erm(retain)),
        clip_radius=clip_radius,
        fit_intercept=bool(fit_intercept),
    )
