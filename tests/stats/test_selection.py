"""Cell selection (unlearn_audit.stats.selection): the Bonferroni-corrected maximum is level ζ.

An audit tries K cells (r, statistic, score); each bound is a level-ζ test but their maximum is
not.  These tests simulate no-signal audits through the real code path (batchwise guesses →
OVERLAPS frame → ``bounds_table``) and check that the corrected maximum rejects at rate ≤ ζ.
"""

import math

import numpy as np
import pandas as pd
import pytest

from unlearn_audit import schemas
from unlearn_audit.auditors import batchwise
from unlearn_audit.auditors.batchwise import batchwise_overlaps, bounds_table
from unlearn_audit.report.nn_figures import epsilon_vs_r_figure
from unlearn_audit.report.nn_tables import table1, table3, table4, table5, table7
from unlearn_audit.stats.selection import Cell, cell_zeta
from unlearn_audit.stats.signs import sample_sign_vectors

M, L, R_VALUES, ZETA = 40, 10, (10, 20, 30, 40), 0.05
SCORE_NAMES = ("logit", "loss")


def overlaps_frame(rng, signal: float = 0.0, experiment: str = "x") -> pd.DataFrame:
    """OVERLAPS frame of one simulated audit: L evaluation runs on m batches, two scores, all r.

    The batch scores are Λ = signal · S + N(0, 1), drawn independently for each score; with
    ``signal = 0`` Λ is independent of S (no membership signal, a 0-DP mechanism).
    """
    signs = sample_sign_vectors(M, L, rng)
    score_col, r_col, overlap_col = [], [], []
    for score in SCORE_NAMES:
        lam = signal * signs + rng.normal(size=(L, M))
        for r, v in batchwise_overlaps(lam, signs, R_VALUES).items():
            score_col += [score] * L
            r_col.append(np.full(L, r, dtype=np.int32))
            overlap_col.append(v.astype(np.int32))
    n = len(score_col)
    runs = np.tile(np.arange(L), n // L)
    frame = pd.DataFrame({"experiment": [experiment] * n, "auditor": ["batchwise"] * n, "score": score_col,
                          "run": runs.astype(np.int32), "sign_index": runs.astype(np.int64),
                          "r": np.concatenate(r_col), "overlap": np.concatenate(overlap_col)})
    assert list(frame.columns) == schemas.OVERLAPS.names
    return frame


@pytest.fixture
def memoized_bounds(monkeypatch):
    """Memoize the bounds inside ``bounds_table`` so that thousands of audits run in seconds.

    Each bound depends on the overlaps only through L and the statistic (their sum for the mean,
    the median), which take few values at m = 40; the key holds exactly those, and every 200th
    cache hit is recomputed by the real function and compared, so the shortcut cannot hide a
    change of ``epsilon_lower_bound`` or ``mu_lower_bound``.  ``bounds_table``'s grouping, levels
    ζ/K and roles run as is.
    """
    cache: dict = {}

    def memoized(real, name):
        hits = [0]

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

    monkeypatch.setattr(batchwise, "epsilon_lower_bound", memoized(batchwise.epsilon_lower_bound, "epsilon"))
    monkeypatch.setattr(batchwise, "mu_lower_bound", memoized(batchwise.mu_lower_bound, "mu"))
    return cache


def test_bonferroni_maximum_rejects_at_most_at_rate_zeta_without_signal(memoized_bounds):
    """No signal, 16 cells (4 r × mean/median × logit/loss): P(corrected max rejects) ≤ ζ."""
    rng = np.random.default_rng(20240601)
    reps = 2000
    corrected = np.zeros(reps, dtype=bool)
    audits = []
    for i in range(reps):
        ov = overlaps_frame(rng, experiment=f"rep{i}")
        bonf = bounds_table(ov, M, zeta=ZETA, selection="bonferroni")  # one audit: K = 16 cells
        assert len(bonf) == 16
        corrected[i] = bonf.rejected.any()
        audits.append(ov)
    # uncorrected: every cell at ζ, whatever K, so repetitions can share a call (in chunks: fast)
    pre = pd.concat([bounds_table(pd.concat(audits[i:i + 25], ignore_index=True), M, zeta=ZETA, selection="preregistered")
                     for i in range(0, reps, 25)], ignore_index=True)
    assert len(pre) == 16 * reps and (pre.zeta == ZETA).all()
    uncorrected = pre.groupby("experiment").rejected.any().reindex([f"rep{i}" for i in range(reps)]).to_numpy()
    assert not (corrected & ~uncorrected).any()  # a rejection at ζ/K is a rejection at ζ (same overlaps)
    corrected, uncorrected = int(corrected.sum()), int(uncorrected.sum())
    rate_c, rate_u = corrected / reps, uncorrected / reps
    limit = ZETA + 3 * math.sqrt(ZETA * (1 - ZETA) / reps)
    msg = f"no-signal rejection rate: Bonferroni-corrected max {rate_c:.4f}, uncorrected max {rate_u:.4f} ({reps} reps, limit {limit:.4f})"
    print(msg)
    assert rate_c <= limit, msg
    assert uncorrected >= corrected, msg


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


# --------------------------------------------------------------------------------------
# the tables and the figure report the pre-registered cell
# --------------------------------------------------------------------------------------
def _bounds_and_metrics(primary: Cell | None = None, selection: str = "preregistered"):
    rng = np.random.default_rng(5)
    frames = [bounds_table(overlaps_frame(rng, signal=s, experiment=name), M, zeta=ZETA, selection=selection,
                           primary=primary or Cell(40, "mean", "logit"))
              for name, s in (("a", 0.8), ("b", 0.3))]
    bounds = pd.concat(frames, ignore_index=True)
    metrics = pd.DataFrame([{"experiment": e, "phase": "eval", "run": i, "retain_acc": 0.9, "forget_acc": 0.8, "test_acc": 0.7}
                            for e in ("a", "b") for i in range(L)])
    experiments = {
        name: {"design": "d", "dataset": "digits", "split": "uniform", "batch_size": bs, "m": M, "method": "forget_ascent",
               "label": f"method {name}", "params": {"sigma": sigma}, "report_r": (primary.r if primary else 40), "r": list(R_VALUES)}
        for name, bs, sigma in (("a", 1, 0.1), ("b", 2, 0.2))
    }
    return bounds, metrics, experiments


def test_tables_report_the_preregistered_row_and_label_cells(tmp_path):
    bounds, metrics, experiments = _bounds_and_metrics()
    t1 = table1(bounds, metrics, experiments)
    assert list(t1.columns) == ["method", "params", "split", "epsilon_lb", "epsilon_ldp", "epsilon_lb_exact", "mu_lb", "r", "m", "L",
                                "retain_acc", "forget_acc", "test_acc", "cell"]
    for _, row in t1.iterrows():
        name = row.method.split()[-1]
        want = bounds[(bounds.experiment == name) & (bounds.role == "preregistered")].iloc[0]
        assert (want.r, want.score, want.statistic) == (40, "logit", "mean")  # the default cell
        assert row.epsilon_lb == want.epsilon_lb and row.epsilon_ldp == want.epsilon_ldp and row.r == 40
        assert row.epsilon_lb_exact == want.epsilon_lb_exact and row.mu_lb == want.mu_lb
        assert row.cell == "preregistered: logit/mean"
    t7 = table7(bounds, metrics, experiments)
    assert list(t7.columns) == ["sigma", "split", "epsilon_lb", "epsilon_ldp", "epsilon_lb_exact", "mu_lb", "r", "retain_acc", "forget_acc", "test_acc", "cell"]
    assert set(t7.epsilon_lb) == set(t1.epsilon_lb) and set(t7.cell) == {"preregistered: logit/mean"}

    t3, t4, t5 = (f(bounds, metrics, experiments) for f in (table3, table4, table5))
    assert list(t3.columns) == ["method", "split", "r", "epsilon_lb_logit", "epsilon_lb_loss", "cell"]
    assert list(t4.columns) == ["method", "split", "r", "epsilon_lb_mean", "epsilon_lb_median", "cell"]
    assert list(t5.columns) == ["batch_size", "m", "r", "r_times_B", "epsilon_lb", "cell"]
    for t in (t3, t4):
        assert (t.loc[t.r == 40, "cell"] == "preregistered: logit/mean").all()
        assert (t.loc[t.r != 40, "cell"] == "exploratory").all()
    assert (t5.loc[t5.r == 40, "cell"] == "preregistered").all() and (t5.loc[t5.r != 40, "cell"] == "exploratory").all()

    # a non-default pre-registered cell: Table 1 follows the role, Table 4 names the column
    bounds, metrics, experiments = _bounds_and_metrics(primary=Cell(20, "median", "logit"))
    t1 = table1(bounds, metrics, experiments)
    assert t1.r.tolist() == [20, 20] and set(t1.cell) == {"preregistered: logit/median"}
    want = bounds[(bounds.experiment == "a") & (bounds.r == 20) & (bounds.statistic == "median") & (bounds.score == "logit")]
    assert t1.epsilon_lb.iloc[0] == want.epsilon_lb.iloc[0]
    t3, t4 = table3(bounds, metrics, experiments), table4(bounds, metrics, experiments)
    assert set(t4.loc[t4.r == 20, "cell"]) == {"preregistered: logit/median"}
    assert set(t3.cell) == {"exploratory"}  # Table 3 shows only mean cells
    assert set(table5(bounds, metrics, experiments).cell) == {"exploratory"}

    # Bonferroni: Table 1 reports the selected (largest, ζ/K) bound
    bounds, metrics, experiments = _bounds_and_metrics(selection="bonferroni")
    t1 = table1(bounds, metrics, experiments)
    for name, row in zip(experiments, t1.itertuples()):
        sub = bounds[bounds.experiment == name]
        assert row.epsilon_ldp == sub.epsilon_ldp.max() and row.cell.startswith("bonferroni-selected: ")

    # the figure marks the reported points; bounds without roles are refused
    paths = epsilon_vs_r_figure(bounds, experiments, tmp_path / "fig")
    assert all(p.stat().st_size > 1000 for p in paths)
    with pytest.raises(ValueError, match="role"):
        table1(bounds.drop(columns="role"), metrics, experiments)
    with pytest.raises(ValueError, match="exactly one"):
        table1(bounds.assign(role="exploratory"), metrics, experiments)


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
