"""Accuracy of Gaussian certified unlearning: GED and UED (docs/calibrations.md §13; arXiv 2510.13094, Def. 3).

The generalisation error divergence of a released model β̃ = β̂⁽¹⁾_{\\M} + b is

    GED = E | ℓ(y0 | x0ᵀ β̂_{\\M}) − ℓ(y0 | x0ᵀ β̃) |,

the expectation over a fresh test point (x0, y0) and the noise b, with β̂_{\\M} the exactly
retrained model.  The unlearning error divergence (UED) is the same average over the removed
points (x_i, y_i), i ∈ M.  Both are estimated by the empirical mean over the given points and
noise draws.  The loss used is ``loss.error_value`` (the clipped log-loss if configured);
:func:`estimate_error_divergences` can evaluate several such losses (e.g. the log-loss unclipped
and clipped) on the same predictors.

Linear predictors are formed once, x0ᵀβ̃ = x0ᵀβ̂⁽¹⁾ + σ a_k x0ᵀz_k, so that one set of
standard-normal draws serves every ε, every m and both noise kinds (common random numbers).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..checks import check_int
from .glm import DEFAULT_TOL, GLMLoss, RegularizedGLM, error_loss_name
from .noise import NOISE_KINDS, StandardNoise, check_positive_epsilon, newton_step_radius, noise_radius, noise_scale
from .removal import check_removal_set, newton_contraction, remove

__all__ = [
    "error_divergence",
    "error_divergence_from_predictors",
    "generalization_error_divergence",
    "unlearning_error_divergence",
    "RemovalPlan",
    "estimate_error_divergences",
]


def error_divergence_from_predictors(
    loss: GLMLoss,
    y: np.ndarray,
    eta_reference: np.ndarray,
    eta_released: np.ndarray,
) -> float:
    """mean_{i,k} |ℓ(y_i | η_ref,i) − ℓ(y_i | η_rel,i,k)|.

    Parameters
    ----------
    y : (N,) responses.
    eta_reference : (N,) predictors of the retrained model.
    eta_released : (N,) or (N, K) predictors of the released model (K noise draws).
    """
    y = np.asarray(y, dtype=float)
    eta_reference = np.asarray(eta_reference, dtype=float)
    eta_released = np.asarray(eta_released, dtype=float)
    if eta_released.ndim == 1:
        eta_released = eta_released[:, None]
    if eta_reference.shape != y.shape or eta_released.shape[0] != y.shape[0]:
        raise ValueError(
            f"shape mismatch: y {y.shape}, eta_reference {eta_reference.shape}, eta_released {eta_released.shape}"
        )
    ref = loss.error_value(y, eta_reference)[:, None]
    rel = loss.error_value(y[:, None], eta_released)
    return float(np.mean(np.abs(ref - rel)))


def error_divergence(
    loss: GLMLoss,
    X: np.ndarray,
    y: np.ndarray,
    beta_reference: np.ndarray,
    beta_unlearned: np.ndarray,
    noise: np.ndarray | None = None,
) -> float:
    """mean over the rows of (X, y) and the rows b_k of ``noise`` of
    |ℓ(y | xᵀβ_reference) − ℓ(y | xᵀ(β_unlearned + b_k))| (no noise if ``noise`` is None)."""
    X = np.asarray(X, dtype=float)
    eta_ref = X @ np.asarray(beta_reference, dtype=float)
    eta_un = X @ np.asarray(beta_unlearned, dtype=float)
    if noise is None:
        eta_rel = eta_un[:, None]
    else:
        noise = np.atleast_2d(np.asarray(noise, dtype=float))
        if noise.shape[1] != X.shape[1]:
            raise ValueError(f"noise must have shape (K, {X.shape[1]}), got {noise.shape}")
        eta_rel = eta_un[:, None] + X @ noise.T
    return error_divergence_from_predictors(loss, y, eta_ref, eta_rel)


def generalization_error_divergence(
    loss: GLMLoss,
    X_test: np.ndarray,
    y_test: np.ndarray,
    beta_retrained: np.ndarray,
    beta_unlearned: np.ndarray,
    noise: np.ndarray | None = None,
) -> float:
    """GED estimated on fresh test points (x0, y0) and noise draws (Def. 3 of the paper)."""
    return error_divergence(loss, X_test, y_test, beta_retrained, beta_unlearned, noise)


def unlearning_error_divergence(
    problem: RegularizedGLM,
    removed: np.ndarray,
    beta_retrained: np.ndarray,
    beta_unlearned: np.ndarray,
    noise: np.ndarray | None = None,
) -> float:
    """UED: the error divergence on the removed points (x_i, y_i), i ∈ M."""
    idx = check_removal_set(removed, problem.n)
    return error_divergence(problem.loss, problem.X[idx], problem.y[idx], beta_retrained, beta_unlearned, noise)


@dataclass(frozen=True, eq=False)
class RemovalPlan:
    """Removal sets and noise primitives for one data set.

    ``orders[k]`` is a random permutation of the rows; the removal set of size m for
    replicate k is ``orders[k][:m]`` (nested in m).  ``noise[k]`` are the K unit-scale
    noise primitives of replicate k, shared by every m, ε and noise kind.
    """

    orders: tuple[np.ndarray, ...]
    noise: tuple[StandardNoise, ...]

    @classmethod
    def sample(
        cls, rngs: Sequence[np.random.Generator], n: int, p: int, max_m: int, n_noise_draws: int
    ) -> "RemovalPlan":
        """One plan per generator in ``rngs`` (one generator per removal replicate)."""
        if not (1 <= int(max_m) < int(n)):
            raise ValueError(f"m must satisfy 1 <= m < n = {n}, got max m = {max_m}")
        orders, noise = [], []
        for rng in rngs:
            # a full permutation consumes the same draws whatever max_m is, so the removal
            # sets and noise of replicate k do not depend on the grid of m
            orders.append(rng.permutation(int(n)))
            z = rng.standard_normal((int(n_noise_draws), int(p)))
            g = rng.gamma(shape=float(p), scale=1.0, size=int(n_noise_draws))
            noise.append(StandardNoise(z=z, gamma=g))
        return cls(orders=tuple(orders), noise=tuple(noise))

    def removal_set(self, k: int, m: int) -> np.ndarray:
        return np.sort(self.orders[k][: int(m)])


def estimate_error_divergences(
    problem: RegularizedGLM,
    beta_hat: np.ndarray,
    X_test: np.ndarray,
    y_test: np.ndarray,
    plan: RemovalPlan,
    ms: Sequence[int],
    epsilons: Sequence[float],
    *,
    noises: Sequence[str] = NOISE_KINDS,
    c: float = 1.0,
    hessian: np.ndarray | None = None,
    tol: float = DEFAULT_TOL,
    error_losses: Sequence[GLMLoss] | None = None,
    newton_steps: Sequence[int] = (1,),
) -> list[dict]:
    """GED and UED of every (m, removal replicate, Newton steps T, noise kind, ε, error loss) of one
    fitted data set.

    For each m and replicate k the Newton removal's iterates β̂⁽ᵀ⁾_{\\M} (T ∈ ``newton_steps``) and
    the exact retrain β̂_{\\M} are computed once; σ = r_T/ε with r_1 = c·sqrt(m³/(2λνn))
    (:func:`.noise.noise_radius`) and, for T ≥ 2, r_T from r_1 and the data set's Newton contraction
    κ (:func:`.noise.newton_step_radius`, :func:`.removal.newton_contraction`).
    ``error_losses`` are the losses whose ``error_value`` measures the divergence (default: the
    problem's own loss); they share every fit, removal and noise draw, so e.g. the unclipped and
    the clipped log-loss are compared on identical released models.

    Returns
    -------
    One record per (m, k, T, noise, ε, error loss) with fields ``m, removal_set, newton_steps, noise,
    epsilon, r, scale, error_loss, prob_clip, ged, ued, newton_error, true_mu`` (``error_loss`` from
    :func:`.glm.error_loss_name`, ``prob_clip`` NaN when unclipped; ``newton_error`` =
    ‖β̂⁽ᵀ⁾ − β̂_{\\M}‖; ``true_mu`` = ``newton_error``/σ for Gaussian noise, the exact μ of the
    released pair; NaN for Laplace noise).
    """
    epsilons = [check_positive_epsilon(e) for e in epsilons]
    error_losses = (problem.loss,) if error_losses is None else tuple(error_losses)
    if not error_losses:
        raise ValueError("error_losses is empty")
    for loss in error_losses:
        if not isinstance(loss, GLMLoss):
            raise ValueError(f"error_losses must implement GLMLoss, got {type(loss).__name__}")
    names = [error_loss_name(loss) for loss in error_losses]
    if len(set(names)) != len(names):
        raise ValueError(f"error_losses must be distinct, got {names}")
    for kind in noises:
        if kind not in NOISE_KINDS:
            raise ValueError(f"noise must be one of {NOISE_KINDS}, got {kind!r}")
    newton_steps = sorted({check_int(t, "newton_steps", 1) for t in newton_steps})
    if not newton_steps:
        raise ValueError("newton_steps is empty")
    kappa = newton_contraction(problem) if newton_steps[-1] > 1 else None
    H = problem.hessian(beta_hat) if hessian is None else hessian
    X_test = np.asarray(X_test, dtype=float)
    records: list[dict] = []
    for k, std in enumerate(plan.noise):
        test_noise = X_test @ std.z.T  # (n_test, K)
        for m in ms:
            m = int(m)
            removed = plan.removal_set(k, m)
            res = remove(problem, beta_hat, removed, hessian=H, tol=tol, steps=newton_steps[-1])
            r1 = noise_radius(m, problem.n, problem.lam, nu=problem.nu, c=c)
            XM, yM = problem.X[res.removed], problem.y[res.removed]
            eta_test_ref, eta_rm_ref = X_test @ res.retrained, XM @ res.retrained
            removed_noise = XM @ std.z.T  # (m, K)
            for steps in newton_steps:
                r = r1 if steps == 1 else newton_step_radius(r1, kappa, steps)
                beta_un, newton_error = res.iterate(steps), res.error_after(steps)
                eta_test_un, eta_rm_un = X_test @ beta_un, XM @ beta_un
                for kind in noises:
                    a = std.multipliers(kind)
                    for eps in epsilons:
                        scale = noise_scale(r, eps)
                        eta_test_rel = eta_test_un[:, None] + scale * a * test_noise
                        eta_rm_rel = eta_rm_un[:, None] + scale * a * removed_noise
                        for loss, name in zip(error_losses, names):
                            clip = getattr(loss, "prob_clip", None)
                            records.append(
                                {
                                    "m": m,
                                    "removal_set": k,
                                    "newton_steps": steps,
                                    "noise": kind,
                                    "epsilon": eps,
                                    "r": r,
                                    "scale": scale,
                                    "error_loss": name,
                                    "prob_clip": float("nan") if clip is None else float(clip),
                                    "ged": error_divergence_from_predictors(loss, y_test, eta_test_ref, eta_test_rel),
                                    "ued": error_divergence_from_predictors(loss, yM, eta_rm_ref, eta_rm_rel),
                                    "newton_error": newton_error,
                                    "true_mu": newton_error / scale if kind == "gaussian" else float("nan"),
                                }
                            )
    return records
