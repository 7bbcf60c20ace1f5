"""One test, one level in ``bounds_table`` (auditors/audit.py with stats/selection.py): the
pre-registered cell is reported at level ζ, or every cell is tested at ζ/K and the largest bound
is reported (Bonferroni).

An audit tries K cells (r, statistic, score); each bound is a level-ζ test but their maximum is
not.  The Monte-Carlo test simulates no-signal audits (batchwise guesses → overlaps → Theorem 4.2
at ζ/K) and checks that the corrected maximum rejects at rate ≤ ζ; the first audits go through the
real code path (OVERLAPS frame → ``bounds_table``) and must give the same verdicts cell by cell.
"""

import math

import numpy as np
import pandas as pd
import pytest

from batchwise_audits import L, M, R_VALUES, SCORE_NAMES, frame_of_overlaps, overlaps_frame
from per_statistic import per_distinct_statistic
from unlearn_audit import schemas
from unlearn_audit.auditors import audit
from unlearn_audit.auditors.audit import bounds_table
from unlearn_audit.auditors.batchwise import batchwise_overlaps
from unlearn_audit.stats.bounds import STATISTICS, epsilon_lower_bound
from unlearn_audit.stats.selection import Cell, cell_zeta
from unlearn_audit.stats.signs import sample_sign_vectors

ZETA = 0.05


@pytest.fixture
def memoized_bounds(monkeypatch):
    """Memoize the bounds inside ``bounds_table`` so that many audits run in seconds.

    Each bound depends on the overlaps only through L and the statistic (their sum for the mean,
    the median), which take few values at m = 40; the key holds exactly those, and every 200th
    cache hit is recomputed by the real function and compared, so the shortcut cannot hide a
    change of ``epsilon_lower_bound`` or ``mu_lower_bound``.  ``bounds_table``'s grouping, levels
    ζ/K and roles run as is.
    """
    cache: dict = {}
    hits = [0]

    def memoized(real, name):
        def memo(overlaps, m, r, **kw):
            v = np.asarray(overlaps)
            stat = int(v.sum()) if kw.get("statistic", "mean") == "mean" else float(np.median(v))
            key = (name, int(m), int(r), tuple(sorted(kw.items())), v.size, stat)
            if key not in cache:
                cache[key] = real(overlaps, m, r, **kw)
            else:
                hits[0] += 1
                if hits[0] % 200 == 0:
                    assert real(overlaps, m, r, **kw) == cache[key]
            return cache[key]

        return memo

    monkeypatch.setattr(audit, "epsilon_lower_bound", memoized(audit.epsilon_lower_bound, "epsilon"))
    monkeypatch.setattr(audit, "mu_lower_bound", memoized(audit.mu_lower_bound, "mu"))
    return hits


def _cell_verdicts(cells: dict, level: float) -> dict:
    """{(score, r, statistic): (reps,) bool}: whether Theorem 4.2 at ``level`` rejects ε = 0 in each
    audit; ``epsilon_lower_bound`` runs once per distinct statistic (tests/support/per_statistic.py)."""
    return {(score, r, statistic): per_distinct_statistic(v, statistic, lambda o: epsilon_lower_bound(o, M, r, zeta=level, statistic=statistic).rejected)
            for (score, r), v in cells.items() for statistic in STATISTICS}


def test_bonferroni_maximum_rejects_at_most_at_rate_zeta_without_signal(memoized_bounds):
    """No signal, 16 cells (4 r × mean/median × logit/loss): P(corrected max rejects) ≤ ζ.

    2,000 no-signal audits (as before), limit ζ + 3·sqrt(ζ(1 − ζ)/2000) = 0.0646 (binomial 3σ).
    The audits are simulated at once: the batch scores of all 2000 × L runs are one (20000, 40)
    matrix per score and ``batchwise_overlaps`` guesses them all in one call; the per-cell verdicts
    come from ``epsilon_lower_bound``, once per distinct statistic.  The first 100 audits also go
    through ``bounds_table`` (Bonferroni per audit, and pre-registered in chunks of 25), whose
    ``rejected`` must equal those verdicts row by row.
    """
    rng = np.random.default_rng(20240601)
    reps, n_cells, n_real = 2000, len(R_VALUES) * len(STATISTICS) * len(SCORE_NAMES), 100
    signs = sample_sign_vectors(M, reps * L, rng)
    cells = {}
    for score in SCORE_NAMES:
        lam = rng.normal(size=(reps * L, M))  # Λ independent of S: a 0-DP mechanism
        for r, v in batchwise_overlaps(lam, signs, R_VALUES).items():
            cells[score, r] = v.reshape(reps, L)
    at_k = _cell_verdicts(cells, ZETA / n_cells)
    at_zeta = _cell_verdicts(cells, ZETA)
    corrected = np.any(np.stack(list(at_k.values())), axis=0)
    uncorrected = np.any(np.stack(list(at_zeta.values())), axis=0)

    # the real code path: OVERLAPS frames → bounds_table, the same verdicts cell by cell
    audits = []
    for i in range(n_real):
        ov = frame_of_overlaps(f"rep{i}", [s for s in SCORE_NAMES for _ in R_VALUES for _ in range(L)],
                               [r for _ in SCORE_NAMES for r in R_VALUES for _ in range(L)],
                               np.concatenate([cells[s, r][i] for s in SCORE_NAMES for r in R_VALUES]))
        bonf = bounds_table(ov, M, zeta=ZETA, selection="bonferroni")  # one audit: K = 16 cells
        assert len(bonf) == 16 and np.allclose(bonf.zeta, ZETA / 16)
        for row in bonf.itertuples():
            assert row.rejected == at_k[row.score, row.r, row.statistic][i]
        assert bonf.rejected.any() == corrected[i]
        audits.append(ov)
    # uncorrected: every cell at ζ, whatever K, so repetitions can share a call (in chunks: fast)
    pre = pd.concat([bounds_table(pd.concat(audits[i:i + 25], ignore_index=True), M, zeta=ZETA, selection="preregistered")
                     for i in range(0, n_real, 25)], ignore_index=True)
    assert len(pre) == 16 * n_real and (pre.zeta == ZETA).all()
    for row in pre.itertuples():
        assert row.rejected == at_zeta[row.score, row.r, row.statistic][int(row.experiment[3:])]
    assert memoized_bounds[0] >= 200  # the memo's spot check against the real functions ran

    assert not (corrected & ~uncorrected).any()  # a rejection at ζ/K is a rejection at ζ (same overlaps)
    n_corrected, n_uncorrected = int(corrected.sum()), int(uncorrected.sum())
    rate_c, rate_u = n_corrected / reps, n_uncorrected / reps
    limit = ZETA + 3 * math.sqrt(ZETA * (1 - ZETA) / reps)
    msg = f"no-signal rejection rate: Bonferroni-corrected max {rate_c:.4f}, uncorrected max {rate_u:.4f} ({reps} reps, limit {limit:.4f})"
    print(msg)
    assert rate_c <= limit, msg
    assert n_uncorrected >= n_corrected, msg


def test_preregistered_protocol_marks_exactly_the_requested_cell():
    ov = overlaps_frame(np.random.default_rng(1), signal=0.5)
    cell = Cell(20, "median", "loss")
    b = bounds_table(ov, M, zeta=ZETA, primary=cell)
    assert sorted(b.columns) == sorted(schemas.BOUNDS.names)
    pre = b[b.role == "preregistered"]
    assert len(pre) == 1
    assert Cell(int(pre.r.iloc[0]), pre.statistic.iloc[0], pre.score.iloc[0]) == cell
    assert set(b.role) == {"preregistered", "exploratory"} and (b.selection == "preregistered").all()
    assert (b.zeta == ZETA).all()
    # no pre-registered cell given: nothing is a claim
    assert set(bounds_table(ov, M, zeta=ZETA).role) == {"exploratory"}


def test_bonferroni_rows_are_tested_at_zeta_over_k():
    ov = overlaps_frame(np.random.default_rng(2), signal=0.5)
    b = bounds_table(ov, M, zeta=ZETA, selection="bonferroni")
    k = len(b)
    assert k == len(R_VALUES) * 2 * len(SCORE_NAMES)
    np.testing.assert_allclose(b.zeta, ZETA / k)
    assert cell_zeta(ZETA, k, "bonferroni") == pytest.approx(ZETA / k)
    assert (b.role == "selected").sum() == 1 and set(b.role) == {"selected", "candidate"}
    assert b.loc[b.role == "selected", "epsilon_ldp"].iloc[0] == b.epsilon_ldp.max()
    assert (b.selection == "bonferroni").all()


def test_bounds_table_refuses_a_run_twice_and_unknown_selection():
    ov = overlaps_frame(np.random.default_rng(3))
    dup = pd.concat([ov, ov.iloc[[0]]], ignore_index=True)
    with pytest.raises(ValueError, match="run twice"):
        bounds_table(dup, M)
    # the same run id under another r or score is fine (one row per (experiment, auditor, score, r, run))
    bounds_table(ov, M)
    with pytest.raises(ValueError, match="selection"):
        bounds_table(ov, M, selection="max")


def test_strong_signal_bonferroni_bound_is_positive_but_costs_power():
    ov = overlaps_frame(np.random.default_rng(4), signal=1.5)
    bonf = bounds_table(ov, M, zeta=ZETA, selection="bonferroni")
    pre = bounds_table(ov, M, zeta=ZETA, selection="preregistered")
    selected = bonf[bonf.role == "selected"].iloc[0]
    assert selected.rejected and selected.epsilon_lb > 0
    assert selected.epsilon_lb < pre.epsilon_lb.max()
    # cell by cell, ζ/K gives a smaller bound than ζ wherever ζ rejects
    merged = pre.merge(bonf, on=["experiment", "auditor", "score", "statistic", "r"], suffixes=("_pre", "_bonf"))
    hit = merged.rejected_pre
    assert hit.any() and (merged.epsilon_lb_bonf[hit] < merged.epsilon_lb_pre[hit]).all()


def test_the_exact_test_can_be_the_preregistered_claim():
    """test: exact makes epsilon_lb_exact the claim: the cell says so, Bonferroni selects on it,
    and it is refused for a delta > 0 audit (the exact test is a delta = 0 test)."""
    rng = np.random.default_rng(5)
    ov = overlaps_frame(rng, signal=0.6)
    b = bounds_table(ov, M, zeta=ZETA, primary=Cell(40, "mean", "logit", "exact"))
    row = b[b.role == "preregistered"].iloc[0]
    assert (row.r, row.test) == (40, "exact") and (b.test == "exact").all()
    assert row.epsilon_lb_exact >= row.epsilon_lb > 0 and row.mu_lb > 0  # the exact test is never looser
    bonf = bounds_table(ov, M, zeta=ZETA, selection="bonferroni", test="exact")
    assert bonf.loc[bonf.role == "selected", "epsilon_ldp_exact"].iloc[0] == bonf.epsilon_ldp_exact.max()
    with pytest.raises(ValueError, match="delta = 0 only"):
        bounds_table(ov, M, zeta=ZETA, delta=1e-6, test="exact")
    with_delta = bounds_table(ov, M, zeta=ZETA, delta=1e-6)
    assert with_delta.epsilon_lb_exact.isna().all() and with_delta.mu_lb.notna().all()
