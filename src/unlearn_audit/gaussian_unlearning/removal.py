"""One-step Newton removal and exact retraining (DESIGN §7; arXiv 2510.13094, Eq. of §3).

For a removal set M ⊂ {1, …, n} of size m, the unlearned (noise-free) model is one Newton
step on the objective without M, started at the full-data minimiser β̂:

    β̂⁽¹⁾_{\\M} = β̂ − [∇²L_{\\M}(β̂)]⁻¹ ∇L_{\\M}(β̂),

with ∇²L_{\\M}(β̂) = ∇²L(β̂) − Σ_{i∈M} ℓ''(y_i | x_iᵀβ̂) x_i x_iᵀ (the full Hessian minus the
removed points' part) and ∇L_{\\M}(β̂) = ∇L(β̂) − Σ_{i∈M} ℓ'(y_i | x_iᵀβ̂) x_i.  The released
model adds noise b to it (:mod:`.noise`).  The reference is the exactly retrained
β̂_{\\M} (warm-started Newton from β̂ to ‖∇‖ < 1e-10).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from .glm import DEFAULT_TOL, RegularizedGLM, fit_newton

__all__ = ["check_removal_set", "sample_removal_set", "newton_removal", "retrain", "RemovalResult", "remove"]


def check_removal_set(removed, n: int) -> np.ndarray:
    """Validate a removal set: distinct integer indices in [0, n), 1 ≤ m < n."""
    idx = np.asarray(removed)
    if idx.ndim != 1 or idx.size == 0:
        raise ValueError("removed (the removal set M) must be a non-empty 1-d array of row indices")
    if not np.issubdtype(idx.dtype, np.integer):
        raise ValueError("removed (the removal set M) must hold integer row indices")
    if idx.size >= n:
        raise ValueError(f"m = |M| = {idx.size} must be < n = {n}")
    if idx.min() < 0 or idx.max() >= n:
        raise ValueError(f"removed (the removal set M) indices must lie in [0, {n})")
    if np.unique(idx).size != idx.size:
        raise ValueError("removed (the removal set M) contains duplicate indices")
    return idx.astype(np.intp)


def sample_removal_set(rng: np.random.Generator, n: int, m: int) -> np.ndarray:
    """M: ``m`` distinct indices drawn uniformly from {0, …, n−1} (sorted)."""
    if isinstance(m, bool) or int(m) != m or not (1 <= int(m) < int(n)):
        raise ValueError(f"m must be an integer with 1 <= m < n = {n}, got {m!r}")
    return np.sort(rng.choice(int(n), size=int(m), replace=False))


def newton_removal(
    problem: RegularizedGLM,
    beta_hat: np.ndarray,
    removed: np.ndarray,
    *,
    hessian: np.ndarray | None = None,
) -> np.ndarray:
    """β̂⁽¹⁾_{\\M}: one Newton step on L_{\\M} from β̂ (DESIGN §7).

    Parameters
    ----------
    problem : the full-data objective L.
    beta_hat : β̂, the full-data minimiser (the step's starting point).
    removed : indices of M.
    hessian : ∇²L(β̂), if already computed (it is shared by every removal set of one data set).
    """
    idx = check_removal_set(removed, problem.n)
    beta_hat = np.asarray(beta_hat, dtype=float)
    H = problem.hessian(beta_hat) if hessian is None else np.array(hessian, dtype=float, copy=True)
    XM, yM = problem.X[idx], problem.y[idx]
    etaM = XM @ beta_hat
    wM = problem.loss.curvature(yM, etaM)
    H -= (XM.T * wM) @ XM
    g = problem.gradient(beta_hat) - XM.T @ problem.loss.derivative(yM, etaM)
    step = cho_solve(cho_factor(H, lower=True, check_finite=False), g, check_finite=False)
    return beta_hat - step


def retrain(problem: RegularizedGLM, beta_hat: np.ndarray, removed: np.ndarray, *, tol: float = DEFAULT_TOL) -> np.ndarray:
    """β̂_{\\M}: exact minimiser of L_{\\M}, Newton warm-started at β̂ to ‖∇‖ < ``tol``."""
    idx = check_removal_set(removed, problem.n)
    return fit_newton(problem.without(idx), beta_hat, tol=tol).beta


@dataclass(frozen=True, eq=False)
class RemovalResult:
    """β̂⁽¹⁾_{\\M} (``unlearned``), β̂_{\\M} (``retrained``) and the removal set."""

    removed: np.ndarray
    unlearned: np.ndarray
    retrained: np.ndarray

    @property
    def newton_error(self) -> float:
        """‖β̂⁽¹⁾_{\\M} − β̂_{\\M}‖₂, the sensitivity that the noise must hide."""
        return float(np.linalg.norm(self.unlearned - self.retrained))


def remove(
    problem: RegularizedGLM,
    beta_hat: np.ndarray,
    removed: np.ndarray,
    *,
    hessian: np.ndarray | None = None,
    tol: float = DEFAULT_TOL,
) -> RemovalResult:
    """Both the one-step Newton removal and the exact retrain for one removal set."""
    idx = check_removal_set(removed, problem.n)
    return RemovalResult(
        removed=idx,
        unlearned=newton_removal(problem, beta_hat, idx, hessian=hessian),
        retrained=retrain(problem, beta_hat, idx, tol=tol),
    )
