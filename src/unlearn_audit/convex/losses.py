"""Convex losses of the Section 8 / App. H audits, with the constants of Sekhari et al. (2021).

Every loss is a per-sample loss ℓ(w; z) that already contains its ℓ2 regulariser (the
paper's "per-sample regularisation" λ), so the empirical risk of a data set D is
F̂(w) = (1/|D|) Σ_{z∈D} ℓ(w; z).  ``value``/``grad``/``hessian`` return **sums** over
the examples of a :class:`ConvexData` set; ``erm`` returns argmin F̂.

Each loss exposes the three constants that enter Sekhari et al. (2021), Lemma 3:

* ``mu`` — strong convexity of ℓ on the domain,
* ``lipschitz`` (L) — a bound on ‖∇ℓ(w; z)‖ over the domain and the admissible data,
* ``hessian_lipschitz`` (M) — Lipschitz constant of w ↦ ∇²ℓ(w; z).

Losses
------
:class:`CubicLoss`
    App. H.2, Eq. 18: ℓ(w; z) = (λ/2)w² + (M/6)w³ − zw on |w| ≤ B (d = 1), with
    μ = λ − MB, L = λB + MB²/2 + R for |z| ≤ R (docs/calibrations.md §9).
:class:`LogisticLoss`
    App. H.4.2: ℓ(w; x, y) = log(1 + exp(−s·xᵀw)) + (λ/2)‖w‖², s = 2y − 1, for ‖x‖ ≤ X.
:class:`SquaredLoss`
    App. I: ℓ(w; x, y) = ½(y − xᵀw)² + (λ/2)‖w‖² (λ = 0 in the paper).  Its Hessian is
    constant (M = 0), so a Newton step is exact (App. H.1, "Why MSE is excluded").

Depends on numpy only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

__all__ = [
    "ConvexData",
    "ConvexLoss",
    "CubicLoss",
    "LogisticLoss",
    "SquaredLoss",
    "add_intercept",
]


def _finite_number(value: float, name: str) -> float:
    value = float(value)
    if not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    return value


@dataclass(frozen=True, eq=False)
class ConvexData:
    """A data set of n examples: features ``X`` (n, d) and targets ``y`` (n,).

    For the 1-d cubic loss the "feature" is the data point z itself (``X[:, 0] = z``) and
    ``y`` is unused (all zeros, App. H.4.1).
    """

    X: np.ndarray
    y: np.ndarray

    def __post_init__(self) -> None:
        X = np.asarray(self.X, dtype=float)
        y = np.asarray(self.y, dtype=float)
        if X.ndim == 1:
            X = X[:, None]
        if X.ndim != 2:
            raise ValueError(f"X must be a 2-d array (n, d), got shape {X.shape}")
        y = y.reshape(-1)
        if y.shape[0] != X.shape[0]:
            raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} entries")
        if not (np.all(np.isfinite(X)) and np.all(np.isfinite(y))):
            raise ValueError("X and y must be finite")
        object.__setattr__(self, "X", X)
        object.__setattr__(self, "y", y)

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def dim(self) -> int:
        return int(self.X.shape[1])

    def concat(self, other: "ConvexData") -> "ConvexData":
        """D = self ∪ other (retain set first, then forget set)."""
        if other.dim != self.dim:
            raise ValueError(f"cannot join data sets of dimension {self.dim} and {other.dim}")
        return ConvexData(np.vstack([self.X, other.X]), np.concatenate([self.y, other.y]))


def add_intercept(data: ConvexData) -> ConvexData:
    """Append a constant-1 feature: the intercept becomes an ordinary coordinate of w
    (regularised like the others when λ > 0, and clipped/noised with them in App. I)."""
    return ConvexData(np.column_stack([data.X, np.ones(data.n)]), data.y)


@runtime_checkable
class ConvexLoss(Protocol):
    """Interface of a per-sample convex loss used by :mod:`unlearn_audit.convex.perturbed_newton`."""

    @property
    def mu(self) -> float: ...

    @property
    def lipschitz(self) -> float: ...

    @property
    def hessian_lipschitz(self) -> float: ...

    def value(self, w: np.ndarray, data: ConvexData) -> float: ...

    def grad(self, w: np.ndarray, data: ConvexData) -> np.ndarray: ...

    def hessian(self, w: np.ndarray, data: ConvexData) -> np.ndarray: ...

    def erm(self, data: ConvexData) -> np.ndarray: ...

    def check_data(self, data: ConvexData) -> None: ...


# --------------------------------------------------------------------------------------
# cubic loss (App. H.2, Eq. 18)
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CubicLoss:
    """ℓ(w; z) = (λ/2)w² + (M/6)w³ − zw on the box |w| ≤ B, d = 1 (App. H.2, Eq. 18).

    Parameters
    ----------
    lam : λ0 > 0, the per-sample ℓ2 coefficient (paper: 0.2).
    M : Hessian-Lipschitz constant M ≥ 0 (Table 2 uses 0.001).
    B : box radius B > 0 (2.5).
    R : data radius, |z| ≤ R (10).

    Constants (Sekhari et al. 2021, Lemma 3; docs/calibrations.md §9): ∇ℓ = λw + (M/2)w² − z,
    ∇²ℓ = λ + Mw, so μ = λ − MB (must be > 0), L = λB + MB²/2 + R, and M.
    """

    lam: float
    M: float
    B: float
    R: float

    def __post_init__(self) -> None:
        lam = _finite_number(self.lam, "lam (lambda_0)")
        M = _finite_number(self.M, "M")
        B = _finite_number(self.B, "B")
        R = _finite_number(self.R, "R")
        if lam <= 0:
            raise ValueError(f"lam (lambda_0) must be > 0, got {lam!r}")
        if M < 0:
            raise ValueError(f"M (Hessian-Lipschitz constant) must be >= 0, got {M!r}")
        if B <= 0:
            raise ValueError(f"B (box radius) must be > 0, got {B!r}")
        if R < 0:
            raise ValueError(f"R (data radius) must be >= 0, got {R!r}")
        if lam - M * B <= 0:
            raise ValueError(
                f"mu = lam - M*B must be > 0 for the cubic loss to be strongly convex on |w| <= B; "
                f"got mu = {lam} - {M}*{B} = {lam - M * B:g}"
            )
        for name, val in (("lam", lam), ("M", M), ("B", B), ("R", R)):
            object.__setattr__(self, name, val)

    @property
    def mu(self) -> float:
        """μ = λ − MB."""
        return self.lam - self.M * self.B

    @property
    def lipschitz(self) -> float:
        """L = λB + MB²/2 + R, a bound on |∇ℓ| for |w| ≤ B, |z| ≤ R."""
        return self.lam * self.B + 0.5 * self.M * self.B**2 + self.R

    @property
    def hessian_lipschitz(self) -> float:
        return self.M

    def check_data(self, data: ConvexData) -> None:
        if data.dim != 1:
            raise ValueError(f"the cubic loss is one-dimensional (d = 1); data has d = {data.dim}")
        if data.n and np.max(np.abs(data.X)) > self.R * (1 + 1e-12):
            raise ValueError(f"data points must satisfy |z| <= R = {self.R}; got max |z| = {np.max(np.abs(data.X)):g}")

    def _w(self, w) -> float:
        w = np.asarray(w, dtype=float).reshape(-1)
        if w.shape != (1,):
            raise ValueError(f"w must have one coordinate for the cubic loss, got shape {w.shape}")
        return float(w[0])

    def value(self, w, data: ConvexData) -> float:
        x = self._w(w)
        z = data.X[:, 0]
        return float(np.sum(0.5 * self.lam * x**2 + self.M / 6.0 * x**3 - z * x))

    def grad(self, w, data: ConvexData) -> np.ndarray:
        x = self._w(w)
        z = data.X[:, 0]
        return np.array([float(np.sum(self.lam * x + 0.5 * self.M * x**2 - z))])

    def hessian(self, w, data: ConvexData) -> np.ndarray:
        x = self._w(w)
        return np.array([[data.n * (self.lam + self.M * x)]])

    def erm(self, data: ConvexData) -> np.ndarray:
        """argmin_{|w|≤B} F̂(w): the root of λw + (M/2)w² = z̄ nearest 0, in closed form.

        Written as w = 2z̄ / (λ + sqrt(λ² + 2Mz̄)) (stable, and exact for M = 0).  The
        stationary point must lie inside the box (App. H.4.1: otherwise ∇F̂(ŵ) = 0 fails and
        the Newton step of Sekhari et al. is not the analysed one); a ValueError says so.
        """
        self.check_data(data)
        if data.n == 0:
            raise ValueError("cannot train on an empty data set")
        zbar = float(np.mean(data.X[:, 0]))
        disc = self.lam**2 + 2.0 * self.M * zbar
        if disc < 0:
            raise ValueError(
                f"no stationary point of the cubic risk (mean z = {zbar:g}): the minimiser is on the box "
                f"boundary |w| = B; choose a larger lam or a smaller R"
            )
        w = 2.0 * zbar / (self.lam + math.sqrt(disc))
        if abs(w) > self.B:
            raise ValueError(
                f"the ERM solution w = {w:.6g} lies outside the box |w| <= B = {self.B}; "
                "App. H.4.1 requires an interior optimum (raise B or lam, or lower R)"
            )
        return np.array([w])


# --------------------------------------------------------------------------------------
# logistic loss (App. H.4.2)
# --------------------------------------------------------------------------------------
def _log1pexp(t: np.ndarray) -> np.ndarray:
    return np.logaddexp(0.0, t)


def _sigmoid(t: np.ndarray) -> np.ndarray:
    out = np.empty_like(t)
    pos = t >= 0
    out[pos] = 1.0 / (1.0 + np.exp(-t[pos]))
    e = np.exp(t[~pos])
    out[~pos] = e / (1.0 + e)
    return out


def _newton_minimize(loss, data: ConvexData, w0: np.ndarray, *, tol: float, max_iter: int) -> np.ndarray:
    """Damped Newton's method with backtracking for a smooth strongly convex sum-loss."""
    w = np.array(w0, dtype=float)
    f = loss.value(w, data)
    for _ in range(max_iter):
        g = loss.grad(w, data)
        if np.linalg.norm(g) <= tol * max(1, data.n):
            return w
        step = np.linalg.solve(loss.hessian(w, data), g)
        t = 1.0
        while True:
            w_new = w - t * step
            f_new = loss.value(w_new, data)
            if f_new <= f - 0.25 * t * float(g @ step) or t < 1e-12:
                break
            t *= 0.5
        w, f = w_new, f_new
    g = loss.grad(w, data)
    if np.linalg.norm(g) > 1e3 * tol * max(1, data.n):  # pragma: no cover - strongly convex: converges
        raise RuntimeError(f"Newton's method did not converge (|grad| = {np.linalg.norm(g):g})")
    return w


@dataclass(frozen=True)
class LogisticLoss:
    """ℓ(w; x, y) = log(1 + exp(−s xᵀw)) + (λ/2)‖w‖², s = 2y − 1 ∈ {±1}, y ∈ {0, 1} (App. H.4.2).

    Parameters
    ----------
    lam : λ > 0, the per-sample ℓ2 coefficient.
    x_max : X, a bound on the feature norms ‖x‖ of every admissible example
        (:meth:`for_data` takes the largest norm in a data set).

    Constants.  μ = λ.  The ERM solution satisfies λŵ = −(1/n)Σ ∇(log-loss), so
    ‖ŵ‖ ≤ X/λ; on that ball ‖∇ℓ‖ ≤ ‖x‖ + λ‖w‖ ≤ 2X =: L.  The logistic curvature
    σ(1−σ) has derivative bounded by 1/(6√3), hence M = X³/(6√3).
    """

    lam: float
    x_max: float

    def __post_init__(self) -> None:
        lam = _finite_number(self.lam, "lam")
        x_max = _finite_number(self.x_max, "x_max")
        if lam <= 0:
            raise ValueError(f"lam must be > 0 (it is the strong convexity mu of the logistic loss), got {lam!r}")
        if x_max <= 0:
            raise ValueError(f"x_max (feature-norm bound) must be > 0, got {x_max!r}")
        object.__setattr__(self, "lam", lam)
        object.__setattr__(self, "x_max", x_max)

    @classmethod
    def for_data(cls, lam: float, *datasets: ConvexData) -> "LogisticLoss":
        """The loss with X = the largest feature norm in ``datasets``."""
        norms = [np.max(np.linalg.norm(d.X, axis=1)) for d in datasets if d.n]
        if not norms:
            raise ValueError("need at least one non-empty data set to bound the feature norm")
        return cls(lam=lam, x_max=float(max(norms)))

    @property
    def mu(self) -> float:
        return self.lam

    @property
    def lipschitz(self) -> float:
        return 2.0 * self.x_max

    @property
    def hessian_lipschitz(self) -> float:
        return self.x_max**3 / (6.0 * math.sqrt(3.0))

    def check_data(self, data: ConvexData) -> None:
        if data.n and np.max(np.linalg.norm(data.X, axis=1)) > self.x_max * (1 + 1e-12):
            raise ValueError(f"feature norms must be <= x_max = {self.x_max:g}")
        if data.n and not np.all((data.y == 0) | (data.y == 1)):
            raise ValueError("logistic labels y must be 0 or 1")

    def _margins(self, w, data: ConvexData) -> np.ndarray:
        s = 2.0 * data.y - 1.0
        return s * (data.X @ np.asarray(w, dtype=float))

    def value(self, w, data: ConvexData) -> float:
        w = np.asarray(w, dtype=float)
        return float(np.sum(_log1pexp(-self._margins(w, data))) + 0.5 * self.lam * data.n * float(w @ w))

    def grad(self, w, data: ConvexData) -> np.ndarray:
        w = np.asarray(w, dtype=float)
        s = 2.0 * data.y - 1.0
        coef = -s * _sigmoid(-self._margins(w, data))
        return data.X.T @ coef + self.lam * data.n * w

    def hessian(self, w, data: ConvexData) -> np.ndarray:
        w = np.asarray(w, dtype=float)
        p = _sigmoid(data.X @ w)
        curv = p * (1.0 - p)
        return (data.X * curv[:, None]).T @ data.X + self.lam * data.n * np.eye(data.dim)

    def erm(self, data: ConvexData, *, tol: float = 1e-13, max_iter: int = 200) -> np.ndarray:
        """argmin F̂ by damped Newton's method (strongly convex, so unique)."""
        self.check_data(data)
        if data.n == 0:
            raise ValueError("cannot train on an empty data set")
        return _newton_minimize(self, data, np.zeros(data.dim), tol=tol, max_iter=max_iter)


# --------------------------------------------------------------------------------------
# squared loss (App. I)
# --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SquaredLoss:
    """ℓ(w; x, y) = ½(y − xᵀw)² + (λ/2)‖w‖² (App. I: MSE, λ = 0 "no regulariser").

    The Hessian Σ xxᵀ + nλI is constant, so ``hessian_lipschitz`` is 0.  ``mu`` and
    ``lipschitz`` are data-dependent and not needed by output perturbation; they are
    reported as λ and ``nan`` respectively.
    """

    lam: float = 0.0

    def __post_init__(self) -> None:
        lam = _finite_number(self.lam, "lam")
        if lam < 0:
            raise ValueError(f"lam must be >= 0, got {lam!r}")
        object.__setattr__(self, "lam", lam)

    @property
    def mu(self) -> float:
        return self.lam

    @property
    def lipschitz(self) -> float:
        return math.nan

    @property
    def hessian_lipschitz(self) -> float:
        return 0.0

    def check_data(self, data: ConvexData) -> None:
        return None

    def value(self, w, data: ConvexData) -> float:
        w = np.asarray(w, dtype=float)
        res = data.y - data.X @ w
        return float(0.5 * res @ res + 0.5 * self.lam * data.n * float(w @ w))

    def grad(self, w, data: ConvexData) -> np.ndarray:
        w = np.asarray(w, dtype=float)
        return -data.X.T @ (data.y - data.X @ w) + self.lam * data.n * w

    def hessian(self, w, data: ConvexData) -> np.ndarray:
        return data.X.T @ data.X + self.lam * data.n * np.eye(data.dim)

    def erm(self, data: ConvexData) -> np.ndarray:
        """Least squares (ridge when λ > 0); the minimum-norm solution if X is rank deficient."""
        if data.n == 0:
            raise ValueError("cannot train on an empty data set")
        if self.lam > 0:
            return np.linalg.solve(self.hessian(None, data), data.X.T @ data.y)
        return np.linalg.lstsq(data.X, data.y, rcond=None)[0]
