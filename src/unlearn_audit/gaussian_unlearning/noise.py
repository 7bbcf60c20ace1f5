"""Noise calibration and samplers (docs/calibrations.md §12; arXiv 2510.13094, Thm 2; Zou et al. 2025).

* Radius r = c · sqrt(m³ / (2λνn)).  The paper's r = C₁(n)·sqrt(C₂(n) m³/(2λνn)) has
  polylog factors C₁, C₂ that it does not state; ``c`` stands for them (default 1).
* Gaussian mechanism (the paper): b ~ N(0, (r/ε)² I_p), which makes the pair
  (β̂_{\\M} + b, β̂⁽¹⁾ + b) exactly μ-GDP with μ = ‖β̂⁽¹⁾ − β̂_{\\M}‖ ε / r.
* Isotropic ℓ2-Laplace (Zou et al. 2025 baseline): density ∝ exp(−ε‖b‖/r), sampled as
  b = R·U with R ~ Gamma(shape p, scale r/ε) and U uniform on the unit sphere S^{p−1}.

Both samplers are built from the same primitives (a standard normal matrix Z and Gamma(p, 1)
radii G), so that experiments can share draws across ε, m and the two noise kinds
(common random numbers): Gaussian b = (r/ε) Z, Laplace b = (r/ε) G Z/‖Z‖.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..checks import check_int, check_positive

__all__ = [
    "NOISE_KINDS",
    "check_positive_epsilon",
    "noise_radius",
    "newton_step_radius",
    "noise_scale",
    "StandardNoise",
    "draw_standard_noise",
    "sample_gaussian_noise",
    "sample_l2_laplace_noise",
    "sample_noise",
]

NOISE_KINDS = ("gaussian", "laplace")


def check_positive_epsilon(epsilon: float) -> float:
    """ε must be a finite number > 0."""
    return check_positive(epsilon, "epsilon")


def _check_noise_kind(kind: str) -> str:
    if kind not in NOISE_KINDS:
        raise ValueError(f"noise must be one of {NOISE_KINDS}, got {kind!r}")
    return kind


def noise_radius(m: int, n: int, lam: float, *, nu: float = 2.0, c: float = 1.0) -> float:
    """r = c · sqrt(m³ / (2λνn)) (docs/calibrations.md §12; the paper's Thm 2 with C₁C₂^{1/2} → c)."""
    if isinstance(n, bool) or int(n) != n or int(n) < 2:
        raise ValueError(f"n must be an integer >= 2, got {n!r}")
    if isinstance(m, bool) or int(m) != m or not (1 <= int(m) < int(n)):
        raise ValueError(f"m must be an integer with 1 <= m < n = {n}, got {m!r}")
    for value, name in ((lam, "lam"), (nu, "nu"), (c, "c")):
        if not (math.isfinite(float(value)) and float(value) > 0):
            raise ValueError(f"{name} must be a finite number > 0, got {value!r}")
    return float(c) * math.sqrt(int(m) ** 3 / (2.0 * float(lam) * float(nu) * int(n)))


def newton_step_radius(r: float, contraction: float, steps: int) -> float:
    """The radius of a T-step Newton removal: r_1 = ``r`` (:func:`noise_radius`, the bound on the
    one-step error that the paper's calibration stands for) and r_{t+1} = κ r_t² (each further step
    squares the error bound, κ = :func:`.removal.newton_contraction`), so r_T = κ^(2^(T−1) − 1) r^(2^(T−1)).

    Zou et al. (2025) calibrate their two-step removal by constants of their own that neither paper's
    text at hand states; this is the classical Newton bound applied to the one-step radius."""
    steps = check_int(steps, "steps (Newton steps)", 1)
    radius = check_positive(r, "r")
    kappa = float(contraction)
    if not (math.isfinite(kappa) and kappa > 0):
        raise ValueError(f"contraction (kappa) must be a finite number > 0, got {contraction!r}")
    for _ in range(steps - 1):
        radius = kappa * radius**2
    return radius


def noise_scale(r: float, epsilon: float) -> float:
    """σ = r/ε: the Gaussian standard deviation, and the ℓ2-Laplace Gamma scale."""
    epsilon = check_positive_epsilon(epsilon)
    r = float(r)
    if not (math.isfinite(r) and r >= 0):
        raise ValueError(f"r must be a finite number >= 0, got {r!r}")
    return r / epsilon


@dataclass(frozen=True, eq=False)
class StandardNoise:
    """Unit-scale noise primitives: ``z`` (k, p) i.i.d. N(0, 1) and ``gamma`` (k,) Gamma(p, 1).

    :meth:`scaled` turns them into k draws of either noise kind at scale σ = r/ε.
    """

    z: np.ndarray
    gamma: np.ndarray

    @property
    def dim(self) -> int:
        return int(self.z.shape[1])

    def directions(self) -> np.ndarray:
        """U = Z/‖Z‖, uniform on the unit sphere."""
        return self.z / np.linalg.norm(self.z, axis=1, keepdims=True)

    def multipliers(self, kind: str) -> np.ndarray:
        """Per-draw factors a_k with b_k = σ a_k z_k: 1 (Gaussian) or G_k/‖z_k‖ (ℓ2-Laplace)."""
        _check_noise_kind(kind)
        if kind == "gaussian":
            return np.ones(self.z.shape[0])
        return self.gamma / np.linalg.norm(self.z, axis=1)

    def scaled(self, kind: str, scale: float) -> np.ndarray:
        """(k, p) noise draws b of ``kind`` at scale σ."""
        return float(scale) * self.multipliers(kind)[:, None] * self.z


def draw_standard_noise(rng: np.random.Generator, p: int, size: int) -> StandardNoise:
    """``size`` draws of the unit-scale primitives in dimension ``p``."""
    if int(p) < 1 or int(size) < 1:
        raise ValueError(f"p and size must be >= 1, got p={p!r}, size={size!r}")
    z = rng.standard_normal((int(size), int(p)))
    gamma = rng.gamma(shape=float(p), scale=1.0, size=int(size))
    return StandardNoise(z=z, gamma=gamma)


def sample_gaussian_noise(rng: np.random.Generator, p: int, r: float, epsilon: float, size: int = 1) -> np.ndarray:
    """(size, p) draws of b ~ N(0, (r/ε)² I_p) (the paper's mechanism, Thm 2)."""
    scale = noise_scale(r, epsilon)
    return scale * rng.standard_normal((int(size), int(p)))


def sample_l2_laplace_noise(rng: np.random.Generator, p: int, r: float, epsilon: float, size: int = 1) -> np.ndarray:
    """(size, p) draws of the isotropic ℓ2-Laplace density ∝ exp(−ε‖b‖/r) (Zou et al. 2025).

    b = R·U, R ~ Gamma(shape p, scale r/ε), U uniform on S^{p−1} (the radial density of
    exp(−‖b‖/s) in R^p is ∝ R^{p−1} e^{−R/s}).
    """
    scale = noise_scale(r, epsilon)
    return draw_standard_noise(rng, p, size).scaled("laplace", scale)


def sample_noise(kind: str, rng: np.random.Generator, p: int, r: float, epsilon: float, size: int = 1) -> np.ndarray:
    """Dispatch to :func:`sample_gaussian_noise` or :func:`sample_l2_laplace_noise`."""
    if _check_noise_kind(kind) == "gaussian":
        return sample_gaussian_noise(rng, p, r, epsilon, size)
    return sample_l2_laplace_noise(rng, p, r, epsilon, size)
