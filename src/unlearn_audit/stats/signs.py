"""Balanced sign vectors, guesses and overlaps (paper Section 4, Algorithm 1).

S_m = {s ∈ {±1}^m : #(−1) − #(+1) ∈ {0, 1}}: vectors with ⌊m/2⌋ entries +1 and
⌈m/2⌉ entries −1.  An entry S_j = +1 puts candidate batch j into the forget set.
A guess Ŝ ∈ {−1, 0, +1}^m has exactly r/2 entries +1 and r/2 entries −1; its
overlap with S is V = Σ_j max(0, Ŝ_j S_j) ∈ {0, …, r}.

Depends on numpy only.
"""

from __future__ import annotations

import itertools
import math
from typing import Iterator

import numpy as np

__all__ = [
    "check_m_r",
    "num_sign_vectors",
    "num_plus",
    "sample_sign_vectors",
    "enumerate_sign_vectors",
    "iter_sign_vectors",
    "sign_vector_rank",
    "sign_vector_unrank",
    "is_balanced",
    "guess_from_scores",
    "overlap",
]


#: The largest guess budget the tests compute: their laws on {0..r} are held in memory (r = 10^8
#: took 10 CPU-minutes and 7.8 GB); the paper's largest is 3,000.
MAX_R = 1_000_000


def check_m_r(m: int, r: int | None = None) -> None:
    """Validate m ≥ 1 and, if given, an even guess budget 0 < r ≤ m (Theorem 4.2), r ≤ :data:`MAX_R`."""
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"m (number of candidate batches) must be an integer >= 1, got {m!r}")
    if r is None:
        return
    if isinstance(r, (int, np.integer)) and not isinstance(r, bool) and r > MAX_R:
        raise ValueError(f"r (guess budget) = {r:,} is beyond the {MAX_R:,} the tests compute in memory (their laws "
                         f"live on 0..r); audit with a smaller r: the bound at r = {MAX_R:,} is already far above any useful claim")
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)):
        raise ValueError(f"r (guess budget) must be an integer, got {r!r}")
    if r <= 0:
        raise ValueError(f"r (guess budget) must be > 0, got {r}")
    if r % 2:
        raise ValueError(f"r (guess budget) must be even (r/2 guesses of each sign), got {r}")
    if r > m:
        raise ValueError(f"r (guess budget) must be <= m = {m}, got {r}")


def num_plus(m: int) -> int:
    """Number of +1 entries of every s ∈ S_m, ⌊m/2⌋."""
    check_m_r(m)
    return m // 2


def num_sign_vectors(m: int) -> int:
    """M' = |S_m| = C(m, ⌊m/2⌋), as an exact Python integer."""
    check_m_r(m)
    return math.comb(m, m // 2)


def sample_sign_vectors(m: int, size: int, rng: np.random.Generator) -> np.ndarray:
    """Draw ``size`` sign vectors uniformly from S_m; returns an int8 array (size, m)."""
    check_m_r(m)
    if size < 0:
        raise ValueError(f"size must be >= 0, got {size}")
    base = np.full(m, -1, dtype=np.int8)
    base[: m // 2] = 1
    return rng.permuted(np.broadcast_to(base, (size, m)), axis=1).astype(np.int8)


def iter_sign_vectors(m: int) -> Iterator[np.ndarray]:
    """Iterate over S_m in rank order (positions of the +1 entries in lexicographic order)."""
    check_m_r(m)
    k = m // 2
    for plus in itertools.combinations(range(m), k):
        s = np.full(m, -1, dtype=np.int8)
        s[list(plus)] = 1
        yield s


def enumerate_sign_vectors(m: int, max_count: int = 2_000_000) -> np.ndarray:
    """All of S_m as an int8 array (M', m), row i being ``sign_vector_unrank(i, m)``."""
    count = num_sign_vectors(m)
    if count > max_count:
        raise ValueError(f"S_m has {count} elements for m={m}; too many to enumerate (max_count={max_count})")
    return np.stack(list(iter_sign_vectors(m))) if count else np.zeros((0, m), dtype=np.int8)


def is_balanced(s) -> bool:
    """True iff ``s`` ∈ S_m."""
    s = np.asarray(s)
    if s.ndim != 1 or s.size == 0 or not np.all(np.isin(s, (-1, 1))):
        return False
    d = int(np.sum(s == -1)) - int(np.sum(s == 1))
    return d in (0, 1)


def sign_vector_rank(s) -> int:
    """Index of ``s`` in the lexicographic order of its +1 positions (exact integer)."""
    s = np.asarray(s)
    if not is_balanced(s):
        raise ValueError("s is not a balanced sign vector (entries ±1, #(−1) − #(+1) ∈ {0, 1})")
    m = s.size
    k = m // 2
    plus = np.flatnonzero(s == 1)
    rank, prev = 0, -1
    for i, p in enumerate(plus):
        # count combinations that start with a smaller element at position i
        for q in range(prev + 1, int(p)):
            rank += math.comb(m - q - 1, k - i - 1)
        prev = int(p)
    return rank


def sign_vector_unrank(index: int, m: int) -> np.ndarray:
    """Inverse of :func:`sign_vector_rank`."""
    total = num_sign_vectors(m)
    index = int(index)
    if not 0 <= index < total:
        raise ValueError(f"index must lie in [0, {total}) for m={m}, got {index}")
    k = m // 2
    s = np.full(m, -1, dtype=np.int8)
    q = 0
    for i in range(k):
        while True:
            c = math.comb(m - q - 1, k - i - 1)
            if index < c:
                break
            index -= c
            q += 1
        s[q] = 1
        q += 1
    return s


def guess_from_scores(scores, r: int) -> np.ndarray:
    """The guess Ŝ of Algorithm 2: +1 for the r/2 highest scores, −1 for the r/2 lowest.

    ``scores`` has shape (m,) or (L, m).  Ties are broken deterministically by batch
    index: among equal scores the lower index ranks higher.  NaN scores are refused.
    """
    scores = np.asarray(scores, dtype=float)
    squeeze = scores.ndim == 1
    scores2 = np.atleast_2d(scores)
    if scores2.ndim != 2:
        raise ValueError(f"scores must be 1-d or 2-d, got shape {scores.shape}")
    m = scores2.shape[1]
    check_m_r(m, r)
    if np.isnan(scores2).any():
        raise ValueError("scores contain NaN; cannot rank batches")
    order = np.argsort(-scores2, axis=1, kind="stable")  # descending score, ascending index on ties
    guess = np.zeros(scores2.shape, dtype=np.int8)
    rows = np.arange(scores2.shape[0])[:, None]
    guess[rows, order[:, : r // 2]] = 1
    guess[rows, order[:, m - r // 2 :]] = -1
    return guess[0] if squeeze else guess


def overlap(guess, signs) -> np.ndarray | int:
    """V = Σ_j max(0, Ŝ_j S_j), the number of correct non-zero guesses (Algorithm 1, step 3)."""
    guess = np.asarray(guess, dtype=np.int64)
    signs = np.asarray(signs, dtype=np.int64)
    if guess.shape != signs.shape:
        raise ValueError(f"guess and signs must have the same shape, got {guess.shape} and {signs.shape}")
    v = np.maximum(guess * signs, 0).sum(axis=-1)
    return int(v) if np.ndim(v) == 0 else v
