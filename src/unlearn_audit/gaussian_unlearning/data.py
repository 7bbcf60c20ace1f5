"""Synthetic GLM designs of the paper's simulations (docs/calibrations.md §12; arXiv 2510.13094, §5).

x_i ~ N(0, I_p/n) (so ‖x_i‖ ≈ sqrt(p/n) = 1 at n = p), β* ~ N(0, I_p), and

* logistic: y_i ~ Bernoulli(sigmoid(x_iᵀβ*));
* ridge:    y_i = x_iᵀβ* + ξ_i, ξ_i ~ N(0, noise_sd²);
* Poisson:  y_i ~ Poisson(exp(x_iᵀβ*)).

Test points for the GED are fresh draws from the same distribution with the same β*.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.special import expit

__all__ = ["GLMData", "sample_true_beta", "sample_features", "sample_responses", "make_data", "make_test_points"]

_RESPONSES = ("logistic", "ridge", "poisson")


@dataclass(frozen=True, eq=False)
class GLMData:
    """A data set (X, y) drawn with the true coefficients ``beta_star``."""

    X: np.ndarray
    y: np.ndarray
    beta_star: np.ndarray

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    @property
    def p(self) -> int:
        return int(self.X.shape[1])


def _check_dims(n: int, p: int) -> tuple[int, int]:
    for value, name in ((n, "n"), (p, "p")):
        if isinstance(value, bool) or int(value) != value or int(value) < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return int(n), int(p)


def sample_true_beta(rng: np.random.Generator, p: int) -> np.ndarray:
    """β* ~ N(0, I_p)."""
    return rng.standard_normal(int(p))


def sample_features(rng: np.random.Generator, n_rows: int, p: int, n_scale: int) -> np.ndarray:
    """``n_rows`` rows x ~ N(0, I_p/n_scale); ``n_scale`` is the training-set size n."""
    return rng.standard_normal((int(n_rows), int(p))) / np.sqrt(float(n_scale))


def sample_responses(
    rng: np.random.Generator, eta: np.ndarray, loss: str, *, noise_sd: float = 1.0
) -> np.ndarray:
    """Responses of the GLM ``loss`` at the linear predictor η = Xβ*."""
    if loss == "logistic":
        return (rng.random(eta.shape) < expit(eta)).astype(float)
    if loss == "ridge":
        return eta + float(noise_sd) * rng.standard_normal(eta.shape)
    if loss == "poisson":
        return rng.poisson(np.exp(eta)).astype(float)
    raise ValueError(f"loss must be one of {_RESPONSES}, got {loss!r}")


def make_data(rng: np.random.Generator, n: int, p: int, loss: str = "logistic", *, noise_sd: float = 1.0) -> GLMData:
    """A training set of the paper's design (see module docstring)."""
    n, p = _check_dims(n, p)
    if loss not in _RESPONSES:
        raise ValueError(f"loss must be one of {_RESPONSES}, got {loss!r}")
    beta_star = sample_true_beta(rng, p)
    X = sample_features(rng, n, p, n)
    y = sample_responses(rng, X @ beta_star, loss, noise_sd=noise_sd)
    return GLMData(X=X, y=y, beta_star=beta_star)


def make_test_points(
    rng: np.random.Generator, data: GLMData, n_test: int, loss: str = "logistic", *, noise_sd: float = 1.0
) -> tuple[np.ndarray, np.ndarray]:
    """``n_test`` fresh points (x0, y0) from the distribution that generated ``data``."""
    if isinstance(n_test, bool) or int(n_test) != n_test or int(n_test) < 1:
        raise ValueError(f"n_test must be a positive integer, got {n_test!r}")
    X0 = sample_features(rng, n_test, data.p, data.n)
    y0 = sample_responses(rng, X0 @ data.beta_star, loss, noise_sd=noise_sd)
    return X0, y0
