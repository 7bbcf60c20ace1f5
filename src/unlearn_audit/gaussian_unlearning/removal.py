"""Newton removal (one step, or T steps) and exact retraining (docs/calibrations.md §12; arXiv 2510.13094, Eq. of §3).

For a removal set M ⊂ {1, …, n} of size m, the unlearned (noise-free) model is one Newton
step on the objective without M, started at the full-data minimiser β̂:

    β̂⁽¹⁾_{\\M} = β̂ − [∇²L_{\\M}(β̂)]⁻¹ ∇L_{\\M}(β̂),

with ∇²L_{\\M}(β̂) = ∇²L(β̂) − Σ_{i∈M} ℓ''(y_i | x_iᵀβ̂) x_i x_iᵀ (the full Hessian minus the
removed points' part) and ∇L_{\\M}(β̂) = ∇L(β̂) − Σ_{i∈M} ℓ'(y_i | x_iᵀβ̂) x_i.  The released
model adds noise b to it (:mod:`.noise`).  The reference is the exactly retrained
β̂_{\\M} (warm-started Newton from β̂ to ‖∇‖ < 1e-10).  Zou et al. (2025) take T = 2 steps (each
further step at the previous iterate); :func:`newton_contraction` gives the factor κ by which a
step squares the error, from which :func:`.noise.newton_step_radius` calibrates a T-step removal.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.linalg import cho_factor, cho_solve
from scipy.sparse.linalg import svds

from ..checks import check_int
from .glm import DEFAULT_TOL, RegularizedGLM, fit_newton

__all__ = ["check_removal_set", "sample_removal_set", "newton_iterates", "newton_removal", "newton_contraction", "retrain",
           "RemovalResult", "remove"]


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


def _newton_step(beta: np.ndarray, hessian: np.ndarray, gradient: np.ndarray) -> np.ndarray:
    return beta - cho_solve(cho_factor(hessian, lower=True, check_finite=False), gradient, check_finite=False)


def newton_iterates(
    problem: RegularizedGLM,
    beta_hat: np.ndarray,
    removed: np.ndarray,
    *,
    steps: int = 1,
    hessian: np.ndarray | None = None,
) -> tuple[np.ndarray, ...]:
    """β̂⁽¹⁾_{\\M}, …, β̂⁽ᵀ⁾_{\\M}: ``steps`` = T Newton steps on L_{\\M} from β̂ (T = 1: docs/calibrations.md §12;
    T = 2: the two-step removal of Zou et al. 2025, each step t ≥ 2 at the previous iterate).

    Parameters
    ----------
    problem : the full-data objective L.
    beta_hat : β̂, the full-data minimiser (the first step's starting point).
    removed : indices of M.
    steps : T ≥ 1.
    hessian : ∇²L(β̂), if already computed (it is shared by every removal set of one data set).
    """
    idx = check_removal_set(removed, problem.n)
    steps = check_int(steps, "steps (Newton steps)", 1)
    beta_hat = np.asarray(beta_hat, dtype=float)
    H = problem.hessian(beta_hat) if hessian is None else np.array(hessian, dtype=float, copy=True)
    XM, yM = problem.X[idx], problem.y[idx]
    etaM = XM @ beta_hat
    H -= (XM.T * problem.loss.curvature(yM, etaM)) @ XM
    g = problem.gradient(beta_hat) - XM.T @ problem.loss.derivative(yM, etaM)
    iterates = [_newton_step(beta_hat, H, g)]
    if steps > 1:
        reduced = problem.without(idx)
        while len(iterates) < steps:
            beta = iterates[-1]
            iterates.append(_newton_step(beta, reduced.hessian(beta), reduced.gradient(beta)))
    return tuple(iterates)


def newton_removal(
    problem: RegularizedGLM,
    beta_hat: np.ndarray,
    removed: np.ndarray,
    *,
    hessian: np.ndarray | None = None,
    steps: int = 1,
) -> np.ndarray:
    """β̂⁽ᵀ⁾_{\\M}: the last of :func:`newton_iterates` (T = ``steps``; one step by default, docs/calibrations.md §12)."""
    return newton_iterates(problem, beta_hat, removed, steps=steps, hessian=hessian)[-1]


def newton_contraction(problem: RegularizedGLM) -> float:
    """κ such that one Newton step on any L_{\\M} maps an error e = ‖β − β̂_{\\M}‖ to at most κe².

    The objective is λν-strongly convex and its Hessian L_H-Lipschitz, so
    β⁺ − β* = ∇²L(β)⁻¹ ∫₀¹ [∇²L(β) − ∇²L(β* + t(β − β*))](β − β*) dt has norm ≤ L_H e²/(2λν).
    For a GLM, ∇²L(β) − ∇²L(β') = Σ_i (ℓ''(η_i) − ℓ''(η'_i)) x_i x_iᵀ with |ℓ''(η_i) − ℓ''(η'_i)|
    ≤ sup|ℓ‴| ‖x_i‖ ‖β − β'‖, so L_H = sup|ℓ‴| · max_i‖x_i‖ · ‖XᵀX‖; deleting rows lowers both
    factors, so the full data's κ = L_H/(2λν) serves every removal set.  Needs a loss with a
    finite ``third_derivative_bound`` (logistic: 1/(6√3); ridge: 0, one step is exact).
    """
    bound = getattr(problem.loss, "third_derivative_bound", None)
    if bound is None or not np.isfinite(bound):
        raise ValueError(
            f"the {problem.loss.name!r} loss has no bounded third derivative, so no Newton contraction: "
            "several Newton steps need a loss such as logistic"
        )
    X = problem.X
    row = float(np.sqrt(np.max(np.einsum("ij,ij->i", X, X))))
    if min(X.shape) > 2:
        v0 = np.ones(min(X.shape)) / np.sqrt(min(X.shape))  # fixed start: the same κ on every call
        top = float(svds(X, k=1, v0=v0, return_singular_vectors=False)[0])
    else:
        top = float(np.linalg.norm(X, 2))
    return float(bound) * row * top**2 / (2.0 * problem.ridge)


def retrain(problem: RegularizedGLM, beta_hat: np.ndarray, removed: np.ndarray, *, tol: float = DEFAULT_TOL) -> np.ndarray:
    """β̂_{\\M}: exact minimiser of L_{\\M}, Newton warm-started at β̂ to ‖∇‖ < ``tol``."""
    idx = check_removal_set(removed, problem.n)
    return fit_newton(problem.without(idx), beta_hat, tol=tol).beta


@dataclass(frozen=True, eq=False)
class RemovalResult:
    """β̂⁽¹⁾_{\\M} (``unlearned``), β̂_{\\M} (``retrained``), the removal set, and the iterates of
    further Newton steps β̂⁽²⁾_{\\M}, … (``later_steps``; empty for the one-step removal)."""

    removed: np.ndarray
    unlearned: np.ndarray
    retrained: np.ndarray
    later_steps: tuple[np.ndarray, ...] = ()

    def iterate(self, steps: int = 1) -> np.ndarray:
        """β̂⁽ᵀ⁾_{\\M} for T = ``steps``."""
        if not (1 <= int(steps) <= 1 + len(self.later_steps)):
            raise ValueError(f"steps must lie in [1, {1 + len(self.later_steps)}] (Newton steps computed), got {steps!r}")
        return self.unlearned if int(steps) == 1 else self.later_steps[int(steps) - 2]

    def error_after(self, steps: int = 1) -> float:
        """‖β̂⁽ᵀ⁾_{\\M} − β̂_{\\M}‖₂, the sensitivity that the noise of a T-step removal must hide."""
        return float(np.linalg.norm(self.iterate(steps) - self.retrained))

    @property
    def newton_error(self) -> float:
        """‖β̂⁽¹⁾_{\\M} − β̂_{\\M}‖₂, the sensitivity that the noise must hide."""
        return self.error_after(1)


def remove(
    problem: RegularizedGLM,
    beta_hat: np.ndarray,
    removed: np.ndarray,
    *,
    hessian: np.ndarray | None = None,
    tol: float = DEFAULT_TOL,
    steps: int = 1,
) -> RemovalResult:
    """The Newton removal (``steps`` iterates) and the exact retrain for one removal set."""
    idx = check_removal_set(removed, problem.n)
    iterates = newton_iterates(problem, beta_hat, idx, steps=steps, hessian=hessian)
    return RemovalResult(removed=idx, unlearned=iterates[0], retrained=retrain(problem, beta_hat, idx, tol=tol),
                         later_steps=iterates[1:])
