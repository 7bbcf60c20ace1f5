"""GLM losses and L2-regularised ERM fitted by exact Newton (docs/calibrations.md §12).

The model of "Gaussian Certified Unlearning in High Dimensions" (arXiv 2510.13094, §2–3):

    β̂ = argmin_β  L(β),   L(β) = λ·(ν/2)‖β‖² + Σ_{i=1}^n ℓ(y_i | x_iᵀβ),

with the regulariser counted **once** (not per example) and ν = 2 by default, so that the
penalty is λ‖β‖² and its Hessian is λνI = 2λI.  Every loss is a function of the linear
predictor η = xᵀβ and exposes

* ``value(y, η)`` — ℓ(y | η), the smooth loss used for fitting;
* ``derivative(y, η)`` — ∂ℓ/∂η, the per-example gradient weight (∇ℓ = ℓ'·x);
* ``curvature(y, η)`` — ∂²ℓ/∂η², the per-example Hessian weight (∇²ℓ = ℓ''·x xᵀ);
* ``error_value(y, η)`` — the loss used to measure accuracy (GED/UED).  It equals ``value``
  except for the log-loss with ``prob_clip`` set, where the predicted probability is clipped
  to [c, 1 − c] (docs/calibrations.md §13: a bounded loss is a knob; fitting always uses the smooth loss).

:func:`fit_newton` solves the ERM by Newton's method with an Armijo backtracking line search,
warm-startable, to ‖∇L‖ < 1e-10 (the paper retrains β̂_{\\M} this way).

Depends on numpy and scipy only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from ..checks import check_positive
from scipy.linalg import LinAlgError, cho_factor, cho_solve
from scipy.special import expit, log_expit

__all__ = [
    "GLMLoss",
    "LogisticLoss",
    "RidgeLoss",
    "PoissonLoss",
    "LOSSES",
    "get_loss",
    "error_loss_name",
    "RegularizedGLM",
    "NewtonFit",
    "fit_newton",
    "DEFAULT_TOL",
]

#: Gradient-norm tolerance of an exact fit (docs/calibrations.md §12: the exact retrain stops at ‖∇‖ < 1e-10).
DEFAULT_TOL = 1e-10


@runtime_checkable
class GLMLoss(Protocol):
    """A per-example GLM loss ℓ(y | η) of the linear predictor η = xᵀβ (vectorised)."""

    name: str

    def value(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray: ...

    def derivative(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray: ...

    def curvature(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray: ...

    def error_value(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray: ...


@dataclass(frozen=True)
class LogisticLoss:
    """Log-loss ℓ(y | η) = log(1 + e^η) − yη, y ∈ {0, 1} (the paper's main model, §5).

    ``prob_clip`` = c ∈ (0, 1/2) clips the predicted probability to [c, 1 − c] in
    :meth:`error_value` only, which bounds the accuracy loss by log((1 − c)/c) above its minimum
    (and makes its derivative in η vanish for |η| > log((1 − c)/c)); ``None`` leaves it
    unbounded.  The paper's GED-vs-m slopes (Gaussian ≈ 1.4, ℓ2-Laplace ≈ 0.24) appear with a
    bounded loss: c = 1e-6 reproduces both at n = p = 300…1500, c = 1e-3 gives a Laplace slope of
    ≈ 0.12 and no clip ≈ 1.5 (config/config.yaml, ``gaussian_unlearning.ged_vs_m.prob_clip``).
    """

    prob_clip: float | None = None
    name: str = "logistic"
    #: sup |ℓ‴(η)| = max σ(1 − σ)|1 − 2σ| = 1/(6√3): the Hessian's Lipschitz factor (:mod:`.removal`)
    third_derivative_bound: ClassVar[float] = 1.0 / (6.0 * math.sqrt(3.0))

    def __post_init__(self) -> None:
        if self.prob_clip is not None:
            c = float(self.prob_clip)
            if not (0.0 < c < 0.5):
                raise ValueError(f"prob_clip must lie in (0, 0.5) or be None, got {self.prob_clip!r}")

    def value(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray:
        return np.logaddexp(0.0, eta) - y * eta

    def derivative(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray:
        return expit(eta) - y

    def curvature(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray:
        s = expit(eta)
        return s * (1.0 - s)

    def error_value(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray:
        if self.prob_clip is None:
            return self.value(y, eta)
        c = float(self.prob_clip)
        log_p = np.clip(log_expit(eta), math.log(c), math.log1p(-c))
        log_q = np.clip(log_expit(-eta), math.log(c), math.log1p(-c))
        return -(y * log_p + (1.0 - y) * log_q)


@dataclass(frozen=True)
class RidgeLoss:
    """Squared loss ℓ(y | η) = (y − η)²/2 (ridge regression, §3); one Newton step is exact."""

    name: str = "ridge"
    third_derivative_bound: ClassVar[float] = 0.0

    def value(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray:
        return 0.5 * (y - eta) ** 2

    def derivative(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray:
        return eta - y

    def curvature(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray:
        return np.ones(np.broadcast(y, eta).shape)

    def error_value(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray:
        return self.value(y, eta)


@dataclass(frozen=True)
class PoissonLoss:
    """Poisson log-likelihood loss ℓ(y | η) = e^η − yη (the log y! constant dropped, §3)."""

    name: str = "poisson"
    #: ℓ‴ = e^η is unbounded: no global Newton contraction (:func:`.removal.newton_contraction`)
    third_derivative_bound: ClassVar[float] = math.inf

    def value(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return np.exp(eta) - y * eta

    def derivative(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return np.exp(eta) - y

    def curvature(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray:
        with np.errstate(over="ignore"):
            return np.exp(eta) * np.ones_like(y, dtype=float)

    def error_value(self, y: np.ndarray, eta: np.ndarray) -> np.ndarray:
        return self.value(y, eta)


LOSSES: dict[str, type] = {"logistic": LogisticLoss, "ridge": RidgeLoss, "poisson": PoissonLoss}


def error_loss_name(loss: GLMLoss) -> str:
    """How the accuracy loss of ``loss`` is named in tables and figures: ``logistic (unclipped)``,
    ``logistic, clipped (prob_clip = 1e-06)``, ``ridge``, ``poisson``."""
    clip = getattr(loss, "prob_clip", None)
    if loss.name != "logistic":
        return loss.name
    return "logistic (unclipped)" if clip is None else f"logistic, clipped (prob_clip = {float(clip):g})"


def get_loss(name: str, *, prob_clip: float | None = None) -> GLMLoss:
    """The loss registered under ``name`` (``logistic``, ``ridge`` or ``poisson``).

    ``prob_clip`` applies to the log-loss only; giving it for another loss is an error.
    """
    if name not in LOSSES:
        raise ValueError(f"loss must be one of {sorted(LOSSES)}, got {name!r}")
    if name == "logistic":
        return LogisticLoss(prob_clip=prob_clip)
    if prob_clip is not None:
        raise ValueError(f"prob_clip applies to the logistic loss only, not to loss={name!r}")
    return LOSSES[name]()


_positive = check_positive


@dataclass(frozen=True, eq=False)
class RegularizedGLM:
    """The objective L(β) = λ(ν/2)‖β‖² + Σ_i ℓ(y_i | x_iᵀβ) of one data set (docs/calibrations.md §12).

    Parameters
    ----------
    X : (n, p) design.
    y : (n,) responses.
    loss : a :class:`GLMLoss`.
    lam : λ > 0, counted once (not per example); the paper uses λ = 0.5.
    nu : ν > 0, the Hessian constant of the regulariser; ν = 2 gives λ‖β‖².
    """

    X: np.ndarray
    y: np.ndarray
    loss: GLMLoss
    lam: float = 0.5
    nu: float = 2.0

    def __post_init__(self) -> None:
        X = np.asarray(self.X, dtype=float)
        y = np.asarray(self.y, dtype=float)
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-d array (n, p), got shape {X.shape}")
        if y.shape != (X.shape[0],):
            raise ValueError(f"y must have shape ({X.shape[0]},), got {y.shape}")
        if not isinstance(self.loss, GLMLoss):
            raise ValueError(f"loss must implement GLMLoss, got {type(self.loss).__name__}")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)
        object.__setattr__(self, "lam", _positive(self.lam, "lam"))
        object.__setattr__(self, "nu", _positive(self.nu, "nu"))

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def p(self) -> int:
        return int(self.X.shape[1])

    @property
    def ridge(self) -> float:
        """λν, the curvature of the regulariser λ(ν/2)‖β‖²."""
        return self.lam * self.nu

    def without(self, removed: np.ndarray) -> "RegularizedGLM":
        """The objective L_{\\M} of the data set with the rows ``removed`` deleted."""
        keep = np.ones(self.n, dtype=bool)
        keep[np.asarray(removed, dtype=int)] = False
        return RegularizedGLM(self.X[keep], self.y[keep], self.loss, self.lam, self.nu)

    def objective(self, beta: np.ndarray) -> float:
        eta = self.X @ beta
        return float(0.5 * self.ridge * beta @ beta + np.sum(self.loss.value(self.y, eta)))

    def gradient(self, beta: np.ndarray) -> np.ndarray:
        """∇L(β) = λνβ + Xᵀ ℓ'(y, Xβ)."""
        eta = self.X @ beta
        return self.ridge * beta + self.X.T @ self.loss.derivative(self.y, eta)

    def hessian(self, beta: np.ndarray) -> np.ndarray:
        """∇²L(β) = λνI + Xᵀ diag(ℓ''(y, Xβ)) X."""
        eta = self.X @ beta
        w = self.loss.curvature(self.y, eta)
        H = (self.X.T * w) @ self.X
        H[np.diag_indices_from(H)] += self.ridge
        return H


@dataclass(frozen=True, eq=False)
class NewtonFit:
    """Result of :func:`fit_newton`: the minimiser, its gradient norm and the iterations used."""

    beta: np.ndarray
    grad_norm: float
    iterations: int


def fit_newton(
    problem: RegularizedGLM,
    beta0: np.ndarray | None = None,
    *,
    tol: float = DEFAULT_TOL,
    max_iter: int = 100,
) -> NewtonFit:
    """Minimise ``problem`` by damped Newton to ‖∇L‖₂ < ``tol`` (docs/calibrations.md §12).

    Each step solves ∇²L(β) s = ∇L(β) by Cholesky and backtracks on L (Armijo, factor 1/2)
    until the Newton decrement sᵀ∇L is below 1e-8, after which full steps are taken
    (quadratic convergence; the objective no longer resolves the decrease).  ``beta0``
    warm-starts the iteration (the paper retrains β̂_{\\M} from β̂).

    Raises
    ------
    RuntimeError if ``max_iter`` iterations do not reach the tolerance.
    """
    tol = _positive(tol, "tol")
    beta = np.zeros(problem.p) if beta0 is None else np.array(beta0, dtype=float, copy=True)
    if beta.shape != (problem.p,):
        raise ValueError(f"beta0 must have shape ({problem.p},), got {beta.shape}")
    f = problem.objective(beta)
    for it in range(max_iter + 1):
        g = problem.gradient(beta)
        gnorm = float(np.linalg.norm(g))
        if gnorm < tol:
            return NewtonFit(beta=beta, grad_norm=gnorm, iterations=it)
        if it == max_iter:
            break
        H = problem.hessian(beta)
        try:
            step = cho_solve(cho_factor(H, lower=True, check_finite=False), g, check_finite=False)
        except LinAlgError:  # pragma: no cover - λν > 0 keeps H positive definite
            step = np.linalg.solve(H, g)
        decrement = float(g @ step)
        t = 1.0
        if decrement > 1e-8:
            while True:
                candidate = beta - t * step
                f_new = problem.objective(candidate)
                if f_new <= f - 0.25 * t * decrement or t < 1e-12:
                    break
                t *= 0.5
        beta = beta - t * step
        f = problem.objective(beta)
    raise RuntimeError(f"Newton did not reach ||grad|| < {tol:g} in {max_iter} iterations (||grad|| = {gnorm:.3g})")
