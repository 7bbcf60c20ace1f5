"""The claim's own ceiling (auditors/audit.py ``claim_ceiling``; App. F): the pre-registered test's
bound when every guess of all L runs is right, halved as the BOUNDS rows' ``epsilon_lb_test`` are.
It is Theorem 4.2's perfect-prediction ceiling under Theorem 4.2, never below it under the
reference test, and a bound on perfect overlaps equals it."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from unlearn_audit.auditors.audit import bounds_table, claim_ceiling
from unlearn_audit.stats.perfect_prediction import perfect_prediction_bound, perfect_prediction_epsilon_lb
from unlearn_audit.stats.selection import Cell

CELLS = [(6, 6, 10), (24, 8, 10), (100, 60, 10), (40, 20, 30)]


@pytest.mark.parametrize("m,r,L", CELLS)
@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_theorem42_claim_ceiling_is_the_perfect_prediction_ceiling(m, r, L, statistic):
    assert claim_ceiling(m, r, L, test="theorem4.2", statistic=statistic) == perfect_prediction_epsilon_lb(m, r, L, statistic=statistic)


@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_at_a_certified_delta_the_theorem42_claim_ceiling_is_lemma_c1s(statistic):
    """A joint audit's (r = m) claim at the certified delta of an unlearning claim: Lemma C.1 through
    Lemma 4.1 with delta, as the perfect-prediction bound reads it."""
    got = claim_ceiling(6, 6, 30, test="theorem4.2", statistic=statistic, delta=1e-3, delta_kind="unlearning")
    assert got == perfect_prediction_bound(6, 6, 30, statistic=statistic, delta=1e-3).epsilon_lb < perfect_prediction_epsilon_lb(6, 6, 30, statistic=statistic)


@pytest.mark.parametrize("m,r,L", CELLS)
def test_every_other_test_has_a_ceiling_at_least_theorem42s(m, r, L):
    theorem42 = perfect_prediction_epsilon_lb(m, r, L)
    for test in ("exact", "mgf", "adaptive"):
        assert claim_ceiling(m, r, L, test=test) >= theorem42 * (1 - 1e-9), test
    reference = claim_ceiling(m, r, L, test="reference")
    assert reference > theorem42  # no Lemma 4.1 halving: well above
    assert claim_ceiling(m, r, L, test="reference", delta=1e-5, delta_kind="unlearning") <= reference


@pytest.mark.parametrize("test", ["theorem4.2", "exact", "adaptive", "reference"])
@pytest.mark.parametrize("statistic", ["mean", "median"])
def test_a_bound_on_perfect_overlaps_equals_its_claims_ceiling(test, statistic):
    m, r, L = 24, 8, 10
    overlaps = pd.DataFrame({"experiment": "x", "auditor": "batchwise", "score": "logit", "run": np.arange(L, dtype=np.int32),
                             "sign_index": np.arange(L), "m": m, "r": r, "overlap": r})
    row = bounds_table(overlaps, m, statistics=[statistic], primary=Cell(r, statistic, "logit", test)).iloc[0]
    assert row.epsilon_lb_test == claim_ceiling(m, r, L, test=test, statistic=statistic) > 0
    # one wrong guess in one run: below it
    missed = bounds_table(overlaps.assign(overlap=[r - 2] + [r] * (L - 1)), m, statistics=[statistic], primary=Cell(r, statistic, "logit", test))
    assert missed.epsilon_lb_test.iloc[0] < row.epsilon_lb_test or statistic == "median"  # a median ignores one run of ten


def test_the_ceiling_is_cached_and_refuses_what_the_claim_refuses():
    from unlearn_audit.auditors import audit

    claim_ceiling(24, 8, 10, test="reference")
    before = audit._claim_ceiling.cache_info().hits
    assert claim_ceiling(24.0, 8, 10, test="reference") == claim_ceiling(24, 8, 10, test="reference")
    assert audit._claim_ceiling.cache_info().hits >= before + 2
    with pytest.raises(ValueError, match="delta = 0 only"):
        claim_ceiling(24, 8, 10, test="exact", delta=1e-5)
    with pytest.raises(ValueError, match="test"):
        claim_ceiling(24, 8, 10, test="eq3")
