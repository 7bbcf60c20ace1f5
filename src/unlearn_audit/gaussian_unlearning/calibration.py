"""σ of each mechanism the Gaussian-unlearning audit table audits (docs/calibrations.md §13): the
certified mechanism's σ = r/ε and the two positive controls built from the pair's exact distance."""

from __future__ import annotations

import math

import numpy as np

from .noise import check_positive_epsilon, noise_scale
from .pair import PrivacyPair

__all__ = ["MECHANISMS", "mechanism_sigma"]

MECHANISMS = ("certified", "control_tight", "control_undernoised")


def mechanism_sigma(pair: PrivacyPair, epsilon: float, mechanism: str, *, undernoise_factor: float = 10.0) -> float:
    """σ of a mechanism in the audit table.

    ``certified``: σ = r/ε (the paper's calibration); ``control_tight``: σ = ‖β̂⁽¹⁾ − β̂_{\\M}‖/ε,
    so that the true μ equals the claimed ε; ``control_undernoised``: the tight σ divided by
    ``undernoise_factor`` (true μ = factor · ε, which the audit must detect).
    """
    epsilon = check_positive_epsilon(epsilon)
    if mechanism == "certified":
        return noise_scale(pair.r, epsilon)
    if mechanism not in MECHANISMS:
        raise ValueError(f"mechanism must be one of {MECHANISMS}, got {mechanism!r}")
    scale = max(float(np.linalg.norm(pair.retrained)), 1.0)
    if not pair.sensitivity > 1e-12 * scale:
        raise ValueError(
            "the privacy pair has (numerically) zero sensitivity: the Newton step is exact "
            "(e.g. the ridge loss), so the controls with true μ = ε are undefined"
        )
    tight = pair.sensitivity / epsilon
    if mechanism == "control_tight":
        return tight
    if not (math.isfinite(float(undernoise_factor)) and float(undernoise_factor) > 1):
        raise ValueError(f"undernoise_factor must be a finite number > 1, got {undernoise_factor!r}")
    return tight / float(undernoise_factor)
