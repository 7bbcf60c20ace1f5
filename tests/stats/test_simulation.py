"""Mechanisms with a known privacy level (stats/simulation.py): Algorithm 1 against k-ary
randomized response on S_m, exactly ε-LDP and the extremal mechanism of Theorem 4.2's posterior
bound (Eq. 7), optionally mixed with a δ-probability disclosure ((ε, δ)-LDP, Lemma C.1).

Checked against Theorem 4.2 / Lemma C.1's pointwise bound Pr[V = u] ≤ π_ε(u) = N_u·g(ε; δ)
(Eq. 6 / 11), which randomized response attains at u = r when r = m; against the law N_u/M' of V
when the response carries no information (ε = 0; N_u by enumeration of S_m); and the errors of
bad input.  The validity of the bounds on these overlaps is in test_bounds_validity.py."""

import math

import numpy as np
import pytest
from scipy.stats import chi2

from unlearn_audit.stats.bounds import log_num_guesses, log_num_sign_vectors, log_overlap_counts
from unlearn_audit.stats.signs import enumerate_sign_vectors
from unlearn_audit.stats.simulation import randomized_response_overlaps


def pointwise_bound(m, r, eps, delta=0.0):
    """π_ε(u) of Theorem 4.2 / Lemma C.1 for u = 0..r."""
    log_mp = log_num_sign_vectors(m)
    a = (1 - math.exp(-log_mp)) * math.exp(log_num_guesses(m, r)) * delta
    g = (math.exp(eps) + a) / (math.exp(eps) + math.exp(log_mp) - 1)
    return np.exp(log_overlap_counts(m, r)) * g


@pytest.mark.parametrize("m,r,eps,delta", [(6, 6, 2.0, 0.0), (8, 4, 3.0, 0.0), (6, 6, 1.0, 0.3), (12, 12, 6.0, 0.0)])
def test_pointwise_bound_holds_and_is_tight_at_perfect_overlap(m, r, eps, delta):
    """Pr[V = u] ≤ π_ε(u) (Eq. 6 / 11); for randomized response with r = m it is an equality at u = r."""
    n = 40_000
    rng = np.random.default_rng([m, r, n])
    v = randomized_response_overlaps(m, r, eps, n, rng, delta=delta)
    freq = np.bincount(v, minlength=r + 1) / n
    pi = pointwise_bound(m, r, eps, delta)
    se = np.sqrt(np.maximum(pi * (1 - np.minimum(pi, 1)), 1e-12) / n)
    assert np.all(freq <= pi + 4 * se + 1e-12)
    if r == m:
        assert freq[r] == pytest.approx(pi[r], abs=4 * se[r])


def test_pointwise_check_detects_an_understated_epsilon_or_dropped_delta():
    """The same check fails for a claim below the truth, and for δ > 0 treated as δ = 0."""
    n = 40_000
    v = randomized_response_overlaps(6, 6, 2.0, n, np.random.default_rng(3))
    assert np.mean(v == 6) > pointwise_bound(6, 6, 1.5)[6] + 0.02
    w = randomized_response_overlaps(6, 6, 1.0, n, np.random.default_rng(4), delta=0.3)
    assert np.mean(w == 6) > pointwise_bound(6, 6, 1.0, 0.0)[6] + 0.1


def enumerated_overlap_law(m, r):
    """N_u/M' by enumeration: the overlap of a uniform S with one fixed guess (r/2 of each sign)."""
    s = enumerate_sign_vectors(m)
    t = np.zeros(m, dtype=int)
    t[: r // 2], t[r // 2 : r] = 1, -1
    return np.bincount(np.maximum(s * t, 0).sum(axis=1), minlength=r + 1) / len(s)


@pytest.mark.parametrize("m,r", [(6, 4), (7, 2), (8, 8), (10, 6)])
def test_no_information_at_epsilon_zero(m, r):
    """ε = 0: the report is uniform on S_m whatever S (S itself w.p. 1/M', each other one w.p. 1/M'),
    so V has the law N_u/M'.  20,000 runs, χ² below its 99.9% quantile."""
    n = 20_000
    v = randomized_response_overlaps(m, r, 0.0, n, np.random.default_rng([m, r]))
    p = enumerated_overlap_law(m, r)
    support = p > 0
    assert np.all(np.bincount(v, minlength=r + 1)[~support] == 0)  # impossible overlaps never occur
    counts = np.bincount(v, minlength=r + 1)[support]
    stat = float(np.sum((counts - n * p[support]) ** 2 / (n * p[support])))
    assert stat < chi2.ppf(0.999, support.sum() - 1), (counts, n * p[support])


def test_keep_probability_and_disclosure():
    """m = r = 4 (M' = 6): V = 4 iff the report is S, w.p. δ + (1 − δ)·e^ε/(e^ε + 5), and V = 0 iff
    it is −S (w.p. (1 − δ)/(e^ε + 5)); 4σ binomial tolerance on 40,000 runs."""
    n = 40_000
    for eps, delta in ((0.0, 0.0), (1.0, 0.0), (1.0, 0.25), (3.0, 0.1)):
        v = randomized_response_overlaps(4, 4, eps, n, np.random.default_rng([int(10 * eps), int(100 * delta)]), delta=delta)
        p_keep = delta + (1 - delta) * math.exp(eps) / (math.exp(eps) + 5)
        p_neg = (1 - delta) / (math.exp(eps) + 5)
        for got, p in ((np.mean(v == 4), p_keep), (np.mean(v == 0), p_neg)):
            assert abs(got - p) < 4 * math.sqrt(p * (1 - p) / n), (eps, delta, got, p)
    # a very strong mechanism reports S every time
    assert np.all(randomized_response_overlaps(10, 6, 80.0, 500, np.random.default_rng(1)) == 6)


def test_output_shape_range_and_reproducibility():
    v = randomized_response_overlaps(9, 4, 1.5, 300, np.random.default_rng(7))
    assert v.shape == (300,) and np.issubdtype(v.dtype, np.integer) and v.min() >= 0 and v.max() <= 4
    np.testing.assert_array_equal(v, randomized_response_overlaps(9, 4, 1.5, 300, np.random.default_rng(7)))
    assert randomized_response_overlaps(6, 2, 1.0, 0, np.random.default_rng(0)).shape == (0,)
    # m = 2: M' = 2, the report is S or −S
    w = randomized_response_overlaps(2, 2, 1.0, 1000, np.random.default_rng(2))
    assert set(np.unique(w)) <= {0, 2}


@pytest.mark.parametrize(
    "m,r,eps,delta,message",
    [(6, 6, -0.5, 0.0, "epsilon must be >= 0"), (6, 6, 1.0, 1.0, r"delta must lie in \[0, 1\)"),
     (6, 6, 1.0, -0.1, r"delta must lie in \[0, 1\)"), (6, 3, 1.0, 0.0, r"r \(guess budget\) must be even"),
     (6, 8, 1.0, 0.0, r"r \(guess budget\) must be <= m"), (0, 2, 1.0, 0.0, r"m \(number of candidate batches\)")],
)
def test_bad_input(m, r, eps, delta, message):
    with pytest.raises(ValueError, match=message):
        randomized_response_overlaps(m, r, eps, 10, np.random.default_rng(0), delta=delta)
