"""The perfect-guess count (statistic="perfect", docs/bounds.md §4a): K = #{runs with V = r} against
Binomial(L, q_ε(r)).  Its p-value is the binomial tail at q_ε(r) computed from enumeration of S_m; its
type-I error is at most ζ on mechanisms with a known ε (and equals the exact binomial rate on
randomized response, which attains q_ε(r)); it wins on randomized-response leakage and loses on
Hamming-type leakage against the mean; the CLI and the errors say what is allowed."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.stats import binom

from ldp_mechanisms import coordinate_rr, extreme_mechanism
from reference_bounds import overlaps_by_enumeration
from unlearn_audit import cli, epsilon_lower_bound
from unlearn_audit.stats import posterior_tests as pt
from unlearn_audit.stats.simulation import hamming_exponential_overlaps, randomized_response_overlaps

ZETA = 0.05


def q_perfect(m, r, eps):
    """max P(V = r) of an ε-LDP mechanism, from the counts of V(s, t) over S_m (Lemma 1 at v = r)."""
    v = overlaps_by_enumeration(m, r)
    top, total = int(np.sum(v == r)), v.size
    return math.exp(eps) * top / (math.exp(eps) * top + total - top)


@pytest.mark.parametrize("m,r,L,k,eps", [(6, 6, 100, 19, 1.0), (8, 4, 30, 5, 0.5), (10, 6, 10, 3, 2.0), (6, 2, 5, 5, 0.0)])
def test_p_value_is_the_binomial_tail_at_the_largest_perfect_probability(m, r, L, k, eps):
    expected = binom.sf(k - 1, L, q_perfect(m, r, eps))
    got = pt.posterior_tail_bound(k, m, r, L, eps, statistic="perfect")
    assert got == pytest.approx(expected, rel=1e-9)
    assert pt.posterior_tail_bound(0, m, r, L, eps, statistic="perfect") == 1.0
    assert pt.posterior_tail_bound(L + 1, m, r, L, eps, statistic="perfect") == 0.0


def test_bound_is_the_largest_rejected_epsilon_and_monotone():
    overlaps = [6] * 25 + [4] * 75
    res = epsilon_lower_bound(overlaps, 6, 6, statistic="perfect", method="exact")
    assert res.statistic == "perfect" and res.statistic_value == 25 and res.rejected
    p = [pt.posterior_tail_bound(25, 6, 6, 100, e, statistic="perfect") for e in np.linspace(0, 3, 31)]
    assert all(a <= b + 1e-15 for a, b in zip(p, p[1:]))
    assert pt.posterior_tail_bound(25, 6, 6, 100, res.epsilon_ldp, statistic="perfect") <= ZETA
    assert pt.posterior_tail_bound(25, 6, 6, 100, res.epsilon_ldp + 1e-6, statistic="perfect") > ZETA
    # no perfect guess: nothing to claim, whatever the mean
    assert epsilon_lower_bound([5] * 100, 6, 6, statistic="perfect", method="exact").epsilon_ldp == 0.0


def test_type_one_error_on_randomized_response_is_the_exact_binomial_rate():
    """Randomized response attains q_ε(r): K ~ Binomial(L, q_ε(r)), so the rate is known exactly."""
    m = r = 6
    L, eps, audits = 100, 1.0, 3000
    k_star = next(k for k in range(L + 2) if binom.sf(k - 1, L, q_perfect(m, r, eps)) <= ZETA)
    exact_rate = binom.sf(k_star - 1, L, q_perfect(m, r, eps))
    V = randomized_response_overlaps(m, r, eps, audits * L, np.random.default_rng(11)).reshape(audits, L)
    rejected = np.array([epsilon_lower_bound(v, m, r, statistic="perfect", method="exact").epsilon_ldp > eps
                         for v in V[:400]])
    counts = (V == r).sum(axis=1)
    assert np.array_equal(rejected, counts[:400] >= k_star)  # the solver rejects ε exactly when the test does
    rate = float(np.mean(counts >= k_star))
    assert exact_rate <= ZETA
    assert abs(rate - exact_rate) < 3 * math.sqrt(exact_rate * (1 - exact_rate) / audits)


@pytest.mark.parametrize("kind", ["coordinate_rr", "hamming", "extreme_v4"])
def test_type_one_error_at_most_zeta_on_other_mechanisms(kind):
    m = r = 6
    L, audits = 50, 2000
    rng = np.random.default_rng(len(kind))
    if kind == "coordinate_rr":
        eps = 6 * 0.4
        V = coordinate_rr(m, r, audits * L, 0.4, rng)
    elif kind == "hamming":
        eps = 2.0
        V = hamming_exponential_overlaps(m, r, eps, audits * L, rng)
    else:
        eps = 1.5
        V = extreme_mechanism(m, 4, eps, audits * L, rng)
    counts = (V.reshape(audits, L) == r).sum(axis=1)
    verdict = {k: pt.posterior_log_p_value(k, m, r, L, eps, statistic="perfect") <= math.log(ZETA) for k in np.unique(counts)}
    rate = float(np.mean([verdict[k] for k in counts]))
    assert rate <= ZETA + 3 * math.sqrt(ZETA * (1 - ZETA) / audits), f"{kind}: rejected the true eps in {rate:.3f}"


def test_wins_on_randomized_response_and_loses_on_hamming_leakage():
    """m = r = 6, L = 100, ε = 1: the count uses the V = r runs that randomized response produces; the
    exponential mechanism spreads its leakage and the mean sees more of it."""
    m = r = 6
    L, eps, audits = 100, 1.0, 60

    def mean_bounds(V, statistic, method):
        return float(np.mean([epsilon_lower_bound(v, m, r, statistic=statistic, method=method).epsilon_ldp for v in V]))

    rr = randomized_response_overlaps(m, r, eps, audits * L, np.random.default_rng(5)).reshape(audits, L)
    ham = hamming_exponential_overlaps(m, r, eps, audits * L, np.random.default_rng(6)).reshape(audits, L)
    assert mean_bounds(rr, "perfect", "exact") > 2 * mean_bounds(rr, "mean", "exact")
    assert mean_bounds(ham, "perfect", "exact") < mean_bounds(ham, "mean", "exact")


def test_hamming_mechanism_is_exactly_epsilon_ldp():
    """The empirical law of the report's Hamming distance matches exp(−β·d) weights with β = ε/m."""
    m, eps = 6, 1.5
    V = hamming_exponential_overlaps(m, m, eps, 40000, np.random.default_rng(2))
    # with r = m the guess is the report t, and V counts the coordinates where t agrees with S: m − d
    d = np.arange(0, m + 1, 2)  # Hamming distances between elements of S_6
    mult = np.array([1, 9, 9, 1])  # elements of S_6 at each distance from a given one
    law = mult * np.exp(-eps / m * d)
    law /= law.sum()
    got = np.array([np.mean(V == m - k) for k in d])
    assert np.allclose(got, law, atol=0.01)


def test_errors_name_the_allowed_method():
    with pytest.raises(ValueError, match=r"statistic='perfect' .* method='exact' only"):
        epsilon_lower_bound([6, 6], 6, 6, statistic="perfect")
    with pytest.raises(ValueError, match=r"method='exact' only"):
        epsilon_lower_bound([6, 6], 6, 6, statistic="perfect", method="adaptive")
    with pytest.raises(ValueError, match=r"statistic must be one of \('mean', 'median', 'perfect'\)"):
        epsilon_lower_bound([6, 6], 6, 6, statistic="max")


def test_cli_bound_with_the_perfect_count(capsys):
    rc = cli.main(["bound", "--m", "6", "--r", "6", "--overlaps", ",".join(["6"] * 25 + ["4"] * 75),
                   "--statistic", "perfect", "--method", "exact"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["statistic"] == "perfect" and out["statistic_value"] == 25 and out["mu_lb"] is None
    assert out["epsilon_ldp"] == epsilon_lower_bound([6] * 25 + [4] * 75, 6, 6, statistic="perfect", method="exact").epsilon_ldp
    rc = cli.main(["bound", "--m", "6", "--r", "6", "--overlaps", "6,6,4", "--statistic", "perfect"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1 and "method='exact' only" in err[0]
