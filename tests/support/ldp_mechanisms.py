"""Mechanisms on S_m with a known ε (Algorithm 1's runs against them, for the validity tests of the
bounds): per-coordinate randomized response, the exponential mechanism with Hamming utility, and the
two-level "extreme" mechanism that attains q_ε (docs/bounds.md §1, §7)."""

import math

import numpy as np

from unlearn_audit.stats.signs import enumerate_sign_vectors, sample_sign_vectors


def guesses_from_scores(score, r, rng):
    """+1 on the r/2 largest scores, −1 on the r/2 smallest (random tie-breaks): post-processing."""
    order = np.argsort(-(score + 1e-9 * rng.random(score.shape)), axis=1)
    g = np.zeros(score.shape, dtype=np.int64)
    rows = np.arange(score.shape[0])[:, None]
    g[rows, order[:, : r // 2]] = 1
    g[rows, order[:, score.shape[1] - r // 2 :]] = -1
    return g


def overlap(g, s):
    return np.maximum(g * s, 0).sum(axis=1)


def coordinate_rr(m, r, n, eps_coord, rng):
    """Each sign flipped w.p. 1/(1 + e^{ε_c}): (m·ε_c)-LDP on S_m for even m (s vs −s)."""
    s = sample_sign_vectors(m, n, rng)
    y = np.where(rng.random(s.shape) < 1 / (1 + math.exp(eps_coord)), -s, s)
    return overlap(guesses_from_scores(y.astype(float), r, rng), s)


def sample_rows(prob, idx, rng):
    cdf = np.cumsum(prob[idx], axis=1)
    return np.minimum((rng.random((idx.size, 1)) > cdf).sum(axis=1), prob.shape[1] - 1)


def exponential_mechanism(m, r, n, beta, rng):
    """Output t ∈ S_m w.p. ∝ exp(−β·Hamming(s, t)): (β·m)-LDP for even m."""
    S = enumerate_sign_vectors(m)
    prob = np.exp(-beta * (S[:, None, :] != S[None, :, :]).sum(-1))
    prob /= prob.sum(axis=1, keepdims=True)
    i = rng.integers(len(S), size=n)
    t = S[sample_rows(prob, i, rng)]
    return overlap(guesses_from_scores(t.astype(float), r, rng), S[i])


def extreme_mechanism(m, vstar, eps, n, rng):
    """r = m; P(t | s) ∝ e^ε if V(s, t) ≥ v* else 1: ε-LDP, posterior two-level, P(V ≥ v*) = q_ε(v*)."""
    S = enumerate_sign_vectors(m)
    V = np.maximum(S[:, None, :] * S[None, :, :], 0).sum(-1)
    prob = np.where(V >= vstar, math.exp(eps), 1.0)
    prob /= prob.sum(axis=1, keepdims=True)
    i = rng.integers(len(S), size=n)
    return V[i, sample_rows(prob, i, rng)]
