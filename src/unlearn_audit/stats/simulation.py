"""Mechanisms with a known privacy level, for checking the validity of the bounds.

:func:`randomized_response_overlaps` simulates Algorithm 1 against k-ary randomized
response on S_m, which is exactly ε-LDP (the extremal mechanism of Theorem 4.2's
posterior bound, Eq. 7), optionally mixed with a δ-probability full disclosure, which
is (ε, δ)-LDP (Lemma C.1).  :func:`hamming_exponential_overlaps` simulates it against the
exponential mechanism with Hamming utility, whose leakage spreads over all coordinates (V near r
often, V = r rarely).  Guesses are post-processing of the response, so the overlaps obey
Theorem 4.2 with the given (ε, δ).
"""

from __future__ import annotations

import math

import numpy as np

from .signs import check_m_r, enumerate_sign_vectors, num_sign_vectors, sample_sign_vectors

__all__ = ["hamming_exponential_overlaps", "randomized_response_overlaps"]


def randomized_response_overlaps(
    m: int,
    r: int,
    epsilon: float,
    n_runs: int,
    rng: np.random.Generator,
    *,
    delta: float = 0.0,
) -> np.ndarray:
    """Overlaps V of ``n_runs`` independent runs of Algorithm 1 against randomized response.

    Each run draws S ~ Unif(S_m); the mechanism reports S itself with probability
    e^ε/(e^ε + M' − 1) and otherwise a uniformly random other element of S_m (and, with
    probability δ beforehand, reports S regardless).  The guess puts +1 on r/2 random
    +1-positions of the report and −1 on r/2 random −1-positions.
    """
    check_m_r(m, r)
    if epsilon < 0:
        raise ValueError(f"epsilon must be >= 0, got {epsilon}")
    if not 0 <= delta < 1:
        raise ValueError(f"delta must lie in [0, 1), got {delta}")
    m_prime = num_sign_vectors(m)
    log_keep = epsilon - np.logaddexp(epsilon, math.log(m_prime - 1)) if m_prime > 1 else 0.0
    truth = sample_sign_vectors(m, n_runs, rng)
    keep = (rng.random(n_runs) < math.exp(log_keep)) | (rng.random(n_runs) < delta)
    report = truth.copy()
    todo = np.flatnonzero(~keep)
    while todo.size:  # uniform over S_m \ {S} by rejection
        draw = sample_sign_vectors(m, todo.size, rng)
        ok = np.any(draw != truth[todo], axis=1)
        report[todo[ok]] = draw[ok]
        todo = todo[~ok]
    return _overlaps_of_reports(report, truth, r, rng)


def _overlaps_of_reports(report: np.ndarray, truth: np.ndarray, r: int, rng: np.random.Generator) -> np.ndarray:
    """V of the guess that puts +1 on r/2 random +1-positions of each report and −1 on r/2 random
    −1-positions (post-processing of the mechanism's output)."""
    n_runs = report.shape[0]
    key = rng.random(report.shape)
    plus_rank = np.argsort(np.where(report == 1, key, np.inf), axis=1)
    minus_rank = np.argsort(np.where(report == -1, key, np.inf), axis=1)
    guess = np.zeros_like(report)
    rows = np.arange(n_runs)[:, None]
    guess[rows, plus_rank[:, : r // 2]] = 1
    guess[rows, minus_rank[:, : r // 2]] = -1
    return np.maximum(guess.astype(np.int64) * truth, 0).sum(axis=1)


#: Largest m for :func:`hamming_exponential_overlaps` (it holds an n_runs × M' table).
HAMMING_MAX_M = 12


def hamming_exponential_overlaps(m: int, r: int, epsilon: float, n_runs: int, rng: np.random.Generator) -> np.ndarray:
    """Overlaps V of ``n_runs`` independent runs of Algorithm 1 against the exponential mechanism
    with Hamming utility: report t ∈ S_m with probability ∝ exp(−β·Hamming(S, t)).

    Two elements of S_m differ in at most D = 2⌊m/2⌋ coordinates, so with β = ε/D the mechanism is
    exactly ε-LDP (the ratio e^{βD} is reached at t = S against S' with Hamming(S, S') = D).
    """
    check_m_r(m, r)
    if not 0 <= epsilon < math.inf:
        raise ValueError(f"epsilon must be finite and >= 0, got {epsilon}")
    if m > HAMMING_MAX_M:
        raise ValueError(f"hamming_exponential_overlaps enumerates S_m; m = {m} is above {HAMMING_MAX_M}")
    support = enumerate_sign_vectors(m)
    beta = epsilon / (2 * (m // 2))
    truth_index = rng.integers(len(support), size=n_runs)
    truth = support[truth_index]
    distance = (truth[:, None, :] != support[None, :, :]).sum(axis=2)
    weights = np.exp(-beta * (distance - distance.min(axis=1, keepdims=True)))
    cdf = np.cumsum(weights, axis=1)
    pick = (rng.random((n_runs, 1)) * cdf[:, -1:] > cdf).sum(axis=1)
    return _overlaps_of_reports(support[np.minimum(pick, len(support) - 1)], truth, r, rng)
