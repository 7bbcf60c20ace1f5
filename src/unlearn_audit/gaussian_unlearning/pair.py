"""The privacy pair of one removal in Gaussian certified unlearning (docs/calibrations.md §12–13):
the retrained β̂_{\\M}, the one-Newton-step unlearned β̂⁽¹⁾_{\\M} and the noise radius r of the
removal, on the paper's synthetic data (arXiv 2510.13094, Def. 2 / Thm 2).  :meth:`PrivacyPair.release`
makes its Gaussian pair at a noise σ (:mod:`.calibration` chooses σ; :mod:`.audit` audits it)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..stats.gaussian_release import GaussianRelease
from ..seeds import SeedLike, as_seed_sequence
from .data import make_data
from .glm import DEFAULT_TOL, RegularizedGLM, fit_newton, get_loss
from .noise import noise_radius
from .removal import remove, sample_removal_set

__all__ = ["PrivacyPair", "make_privacy_pair"]


@dataclass(frozen=True, eq=False)
class PrivacyPair:
    """β̂_{\\M} (``retrained``), β̂⁽¹⁾_{\\M} (``unlearned``) and the radius r of one removal."""

    retrained: np.ndarray
    unlearned: np.ndarray
    r: float
    n: int
    m: int

    @property
    def sensitivity(self) -> float:
        """‖β̂⁽¹⁾_{\\M} − β̂_{\\M}‖₂."""
        return float(np.linalg.norm(self.unlearned - self.retrained))

    def true_mu(self, sigma: float) -> float:
        """The exact μ of (β̂_{\\M} + b, β̂⁽¹⁾_{\\M} + b), b ~ N(0, σ²I)."""
        return self.sensitivity / float(sigma)

    def release(self, sigma: float) -> GaussianRelease:
        """The mechanism's privacy pair at noise σ: β̂⁽¹⁾_{\\M} + b against β̂_{\\M} + b (certified
        bound: the radius r)."""
        return GaussianRelease(self.unlearned, self.retrained, sigma, sensitivity=self.r)


def make_privacy_pair(
    seed: SeedLike,
    n: int,
    p: int,
    m: int,
    *,
    loss: str = "logistic",
    lam: float = 0.5,
    nu: float = 2.0,
    c: float = 1.0,
    tol: float = DEFAULT_TOL,
) -> PrivacyPair:
    """Draw the paper's synthetic data set, fit β̂, remove m random points (docs/calibrations.md §12).

    Two spawned streams: data, removal set.
    """
    model = get_loss(loss)
    r = noise_radius(m, n, lam, nu=nu, c=c)  # validates m, n, λ, ν, c
    rng_data, rng_removal = (np.random.default_rng(s) for s in as_seed_sequence(seed).spawn(2))
    data = make_data(rng_data, n, p, loss)
    problem = RegularizedGLM(data.X, data.y, model, lam, nu)
    beta_hat = fit_newton(problem, tol=tol).beta
    res = remove(problem, beta_hat, sample_removal_set(rng_removal, n, m), tol=tol)
    return PrivacyPair(retrained=res.retrained, unlearned=res.unlearned, r=r, n=int(n), m=int(m))
