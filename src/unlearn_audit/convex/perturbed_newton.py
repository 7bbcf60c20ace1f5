"""Perturbed Newton unlearning (Sekhari et al. 2021, Algorithm 1), as audited in Section 8 / App. H.

Given the full-data ERM ŵ = A(D) and the forget set D_f ⊆ D (|D| = n, |D_f| = m):

    Ĥ  = (1/(n − m)) Σ_{z ∈ D_r} ∇²ℓ(ŵ; z)                    (retain Hessian at ŵ)
    w̄  = ŵ + (1/(n − m)) Ĥ⁻¹ Σ_{z ∈ D_f} ∇ℓ(ŵ; z)            (Newton correction)
    γ  = 2 M m² L² / (μ³ n²)                                  (Lemma 3: ‖w̄ − ŵ_r‖ ≤ γ)
    σ  = exact Gaussian mechanism with sensitivity γ at (ε, δ)   (docs/calibrations.md §9, §2)
    w̃  = w̄ + N(0, σ² I)

Sekhari et al. calibrate σ with the classic formula, valid only for ε < 1; the audit uses the
exact (analytic) Gaussian mechanism (Balle & Wang 2018) so that every ε is valid.  The
counterpart of Definition H.1 (empty forget set) is ŵ_r + N(0, σ²I) with the same σ, where
ŵ_r = A(D_r).  With a constant Hessian (M = 0) the correction is exact, w̄ = ŵ_r, and γ = 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..stats.gaussian_mechanism import gaussian_sigma
from .losses import ConvexData, ConvexLoss
from ..stats.gaussian_release import GaussianRelease

__all__ = [
    "NewtonUnlearning",
    "newton_sensitivity",
    "newton_correction",
    "perturbed_newton",
    "check_epsilon_delta",
]


def check_epsilon_delta(epsilon: float, delta: float) -> tuple[float, float]:
    """Validate a certified (ε, δ): ε finite and ≥ 0, δ ∈ (0, 1) (Gaussian mechanism)."""
    eps = float(epsilon)
    if not (math.isfinite(eps) and eps >= 0):
        raise ValueError(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    d = float(delta)
    if not (0.0 < d < 1.0):
        raise ValueError(f"delta must lie in (0, 1) for the Gaussian mechanism, got {delta!r}")
    return eps, d


def newton_sensitivity(mu: float, lipschitz: float, hessian_lipschitz: float, m: int, n: int) -> float:
    """γ = 2 M m² L² / (μ³ n²), Sekhari et al. (2021) Lemma 3 / App. H.3.

    Parameters
    ----------
    mu : strong convexity μ > 0.
    lipschitz : L, the Lipschitz constant of the per-sample loss.
    hessian_lipschitz : M ≥ 0.
    m : forget-set size (0 ≤ m < n).
    n : training-set size n = |D_r| + m.
    """
    mu, L, M = float(mu), float(lipschitz), float(hessian_lipschitz)
    if not (math.isfinite(mu) and mu > 0):
        raise ValueError(f"mu (strong convexity) must be > 0, got {mu!r}")
    if not (math.isfinite(M) and M >= 0):
        raise ValueError(f"hessian_lipschitz (M) must be a finite number >= 0, got {M!r}")
    m, n = int(m), int(n)
    if not (0 <= m < n):
        raise ValueError(f"need 0 <= m < n, got m = {m}, n = {n}")
    if M == 0:  # constant Hessian: the Newton step is exact whatever L is
        return 0.0
    if not (math.isfinite(L) and L >= 0):
        raise ValueError(f"lipschitz (L) must be a finite number >= 0, got {L!r}")
    return 2.0 * M * m**2 * L**2 / (mu**3 * n**2)


def newton_correction(loss: ConvexLoss, w_full: np.ndarray, retain: ConvexData, forget: ConvexData) -> np.ndarray:
    """w̄ = ŵ + (1/(n−m)) Ĥ⁻¹ Σ_{z∈D_f} ∇ℓ(ŵ; z) with Ĥ the mean retain Hessian at ŵ (Alg. 1)."""
    w_full = np.atleast_1d(np.asarray(w_full, dtype=float))
    if retain.n == 0:
        raise ValueError("the retain set is empty: the Newton step needs n - m > 0")
    if forget.n == 0:
        return w_full.copy()
    n_r = retain.n
    h_hat = loss.hessian(w_full, retain) / n_r
    g_f = loss.grad(w_full, forget)
    return w_full + np.linalg.solve(h_hat, g_f) / n_r


@dataclass(frozen=True, eq=False)
class NewtonUnlearning:
    """The deterministic part of perturbed Newton unlearning and its counterpart.

    Attributes
    ----------
    w_full : ŵ = A(D), the full-data ERM.
    w_bar : w̄, the Newton-corrected model (before noise).
    w_retain : ŵ_r = A(D_r), the retain-only ERM (counterpart with the empty forget set).
    gamma : the Lemma 3 sensitivity γ = 2Mm²L²/(μ³n²).
    n, m : |D| and |D_f|.
    mu, lipschitz, hessian_lipschitz : the loss constants used in γ.
    """

    w_full: np.ndarray
    w_bar: np.ndarray
    w_retain: np.ndarray
    gamma: float
    n: int
    m: int
    mu: float
    lipschitz: float
    hessian_lipschitz: float

    @property
    def distance(self) -> float:
        """‖w̄ − ŵ_r‖, the empirical side of Lemma 3."""
        return float(np.linalg.norm(self.w_bar - self.w_retain))

    @property
    def rho(self) -> float:
        """ρ = ‖w̄ − ŵ_r‖/γ (App. H.3; about 0.22 for the Table 2 cubic instance)."""
        return self.distance / self.gamma if self.gamma > 0 else (0.0 if self.distance == 0 else math.inf)

    def sigma(self, epsilon: float, delta: float) -> float:
        """σ of the exact Gaussian mechanism with sensitivity γ (0 when γ = 0: exact unlearning)."""
        epsilon, delta = check_epsilon_delta(epsilon, delta)
        if self.gamma == 0:
            return 0.0
        return gaussian_sigma(epsilon, delta, self.gamma)

    def release(self, epsilon: float, delta: float) -> GaussianRelease:
        """The audited pair: w̄ + N(0, σ²I) vs ŵ_r + N(0, σ²I) (Definition H.1)."""
        return GaussianRelease(self.w_bar, self.w_retain, self.sigma(epsilon, delta), sensitivity=self.gamma)


def perturbed_newton(loss: ConvexLoss, retain: ConvexData, forget: ConvexData) -> NewtonUnlearning:
    """Run Sekhari et al. (2021) Algorithm 1 up to the noise: train on D = D_r ∪ D_f, correct.

    Parameters
    ----------
    loss : a :class:`~unlearn_audit.convex.losses.ConvexLoss` (cubic, logistic, …).
    retain : D_r (n − m examples).
    forget : D_f (m examples).

    Returns
    -------
    NewtonUnlearning with ŵ, w̄, ŵ_r and γ; call ``.release(ε, δ)`` for the noisy pair.
    """
    loss.check_data(retain)
    loss.check_data(forget)
    full = retain.concat(forget)
    w_full = np.atleast_1d(loss.erm(full))
    w_retain = np.atleast_1d(loss.erm(retain))
    w_bar = newton_correction(loss, w_full, retain, forget)
    gamma = newton_sensitivity(loss.mu, loss.lipschitz, loss.hessian_lipschitz, forget.n, full.n)
    return NewtonUnlearning(
        w_full=w_full,
        w_bar=w_bar,
        w_retain=w_retain,
        gamma=gamma,
        n=full.n,
        m=forget.n,
        mu=float(loss.mu),
        lipschitz=float(loss.lipschitz),
        hessian_lipschitz=float(loss.hessian_lipschitz),
    )
