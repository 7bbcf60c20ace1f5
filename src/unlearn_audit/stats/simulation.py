"""Mechanisms with a known privacy level, for checking the validity of the bounds.

:func:`randomized_response_overlaps` simulates Algorithm 1 against k-ary randomized
response on S_m, which is exactly ε-LDP (the extremal mechanism of Theorem 4.2's
posterior bound, Eq. 7), optionally mixed with a δ-probability full disclosure, which
is (ε, δ)-LDP (Lemma C.1).  Guesses are post-processing of the response, so the
overlaps obey Theorem 4.2 with the given (ε, δ).
"""

from __future__ import annotations

import math

import numpy as np

from .signs import check_m_r, num_sign_vectors, sample_sign_vectors

__all__ = ["randomized_response_overlaps"]


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
    # post-processing: random r/2 of the reported +1's and r/2 of the reported −1's
    key = rng.random(report.shape)
    plus_rank = np.argsort(np.where(report == 1, key, np.inf), axis=1)
    minus_rank = np.argsort(np.where(report == -1, key, np.inf), axis=1)
    guess = np.zeros_like(report)
    rows = np.arange(n_runs)[:, None]
    guess[rows, plus_rank[:, : r // 2]] = 1
    guess[rows, minus_rank[:, : r // 2]] = -1
    return np.maximum(guess.astype(np.int64) * truth, 0).sum(axis=1)
