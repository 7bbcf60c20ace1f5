"""Batchwise inclusion/exclusion prediction, Algorithm 2 (auditors/batchwise.py; Section 5,
Instantiation I): the batch score Λ_j = Σ log N(s; μ⁺, σ⁺) − log N(s; μ⁻, σ⁻) with its log σ terms
(step 11), the top/bottom-r/2 guesses and their overlaps for every r, the Theorem 4.2 bounds table
(BOUNDS schema, ε_lb = ε_ldp / 2 by Lemma 4.1, the exact test and μ-GDP beside it, δ of the LDP
mechanism or of the unlearning claim), and ``fit_table`` / ``audit_tables`` end to end on
synthetic SCORES frames with the phase guards.  The pre-registered / Bonferroni selection of
``bounds_table`` is in test_batchwise_selection.py."""

import math

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from unlearn_audit import schemas
from unlearn_audit.auditors import batch_scores, batchwise_overlaps, bounds_table
from unlearn_audit.auditors.batchwise import fit_table
from unlearn_audit.auditors.tables import audit_tables
from unlearn_audit.auditors.gaussian_fit import fit_per_example
from unlearn_audit.auditors.runs import sign_matrix, sign_table
from unlearn_audit.stats.bounds import epsilon_lower_bound, unlearning_epsilon_lower_bound
from unlearn_audit.stats.gdp_overlaps import mu_lower_bound
from unlearn_audit.stats.selection import Cell
from unlearn_audit.stats.signs import sample_sign_vectors


def simulate(rng, runs, m, per_batch, shift, noise=1.0):
    """Scores of m·per_batch examples: in-forget examples are shifted by ``shift``."""
    signs = sample_sign_vectors(m, runs, rng)
    batch = np.repeat(np.arange(m), per_batch)
    base = rng.normal(0, 2, size=batch.size)  # example-specific means
    inside = signs[:, batch] == 1
    scores = base + shift * inside + rng.normal(0, noise, size=inside.shape)
    return signs, batch, scores, inside


def overlaps_rows(ov: dict, experiment="x", score="logit") -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"experiment": experiment, "auditor": "batchwise", "score": score, "run": i, "sign_index": i, "r": r, "overlap": int(v)}
            for r, vs in ov.items()
            for i, v in enumerate(vs)
        ]
    )


# ---------------------------------------------------------------------------------------------
# batch scores and overlaps (Algorithm 2, steps 11–13)
# ---------------------------------------------------------------------------------------------
def test_batch_score_is_sum_of_log_likelihood_ratios_with_log_sigma_terms():
    scores = np.array([[0.0, 1.0, 2.0]])
    inside = np.array([[True, True, True], [True, True, True], [False] * 3, [False] * 3])
    calib = np.array([[0.0, 0.0, 0.0], [2.0, 2.0, 2.0], [0.0, 0.0, 0.0], [4.0, 4.0, 4.0]])
    fit = fit_per_example(calib, inside)
    lam = batch_scores(scores, fit, np.array([0, 0, 1]), 2)

    llr = norm.logpdf(scores[0], 1.0, math.sqrt(2)) - norm.logpdf(scores[0], 2.0, math.sqrt(8))
    np.testing.assert_allclose(lam[0], [llr[0] + llr[1], llr[2]])


def test_batch_scores_of_several_runs_and_an_empty_batch():
    rng = np.random.default_rng(7)
    _, batch, sc, inside = simulate(rng, 20, 4, 2, 1.0)
    fit = fit_per_example(sc, inside)
    x = rng.normal(size=(4, batch.size))
    lam = batch_scores(x, fit, batch, 5)  # batch 4 has no examples: Λ_4 = 0
    assert lam.shape == (4, 5) and np.all(lam[:, 4] == 0.0)
    llr = norm.logpdf(x, fit.mu_in, fit.sd_in) - norm.logpdf(x, fit.mu_out, fit.sd_out)
    np.testing.assert_allclose(lam[:, :4], llr.reshape(4, 4, 2).sum(axis=2), rtol=1e-12)
    np.testing.assert_allclose(batch_scores(x[0], fit, batch, 5), lam[:1])  # one run as a 1-d array


def test_overlaps_count_correct_top_and_bottom_guesses_for_every_r():
    rng = np.random.default_rng(8)
    m, runs = 12, 5
    signs = sample_sign_vectors(m, runs, rng)
    lam = rng.normal(size=(runs, m)) + signs  # distinct values: no ties
    ov = batchwise_overlaps(lam, signs, [2, 6, 12])
    assert sorted(ov) == [2, 6, 12]
    for r, v in ov.items():
        order = np.argsort(-lam, axis=1)
        top, bottom = order[:, : r // 2], order[:, m - r // 2 :]
        want = (np.take_along_axis(signs, top, 1) == 1).sum(axis=1) + (np.take_along_axis(signs, bottom, 1) == -1).sum(axis=1)
        np.testing.assert_array_equal(v, want)
        assert np.all((0 <= v) & (v <= r))
    one = batchwise_overlaps(lam[0], signs[0], [4])  # one run
    assert one[4].shape == (1,)
    # a perfect predictor (Λ = S) gets every guess right
    assert np.all(batchwise_overlaps(signs.astype(float), signs, [12])[12] == 12)


def test_bad_inputs():
    fit = fit_per_example(np.arange(8.0).reshape(4, 2), np.array([[True, False], [True, False], [False, True], [False, True]]))
    with pytest.raises(ValueError, match="batch ids"):
        batch_scores(np.zeros((1, 2)), fit, np.array([0, 5]), 2)
    with pytest.raises(ValueError, match=r"batch ids must lie in \[0, 2\)"):
        batch_scores(np.zeros((1, 2)), fit, np.array([-1, 0]), 2)
    with pytest.raises(ValueError, match="scores have 3 examples but batch ids have 2"):
        batch_scores(np.zeros((1, 3)), fit, np.array([0, 1]), 2)


# ---------------------------------------------------------------------------------------------
# bounds_table (BOUNDS schema)
# ---------------------------------------------------------------------------------------------
def test_strong_signal_gives_large_bound_and_null_gives_none():
    rng = np.random.default_rng(0)
    m, per_batch, gamma, L = 60, 3, 40, 10
    for shift, expect_positive in ((3.0, True), (0.0, False)):
        s_cal, batch, sc_cal, in_cal = simulate(rng, gamma, m, per_batch, shift)
        fit = fit_per_example(sc_cal, in_cal)
        s_ev, _, sc_ev, _ = simulate(rng, L, m, per_batch, shift)
        lam = batch_scores(sc_ev, fit, batch, m)
        ov = batchwise_overlaps(lam, s_ev, [20, 40, 60])
        df = overlaps_rows(ov)
        table = bounds_table(df, m, primary=Cell(60, "mean", "logit"))
        assert set(table["statistic"]) == {"mean", "median"} and len(table) == 6
        assert sorted(table.columns) == sorted(schemas.BOUNDS.names)
        assert (table["selection"] == "preregistered").all() and (table["zeta"] == 0.05).all()
        assert table.loc[table.role == "preregistered", ["r", "statistic", "score"]].values.tolist() == [[60, "mean", "logit"]]
        assert (table.role == "exploratory").sum() == 5
        np.testing.assert_allclose(table["epsilon_lb"], table["epsilon_ldp"] / 2)
        if expect_positive:
            assert table["epsilon_lb"].max() > 5
        else:
            assert table["epsilon_lb"].max() == 0.0


def test_null_mechanism_validity():
    """No membership signal: a positive bound appears in at most ~ζ of repeated audits.

    150 audits, limit ζ + 3·sqrt(ζ(1 − ζ)/150) = 0.0034 + 0.05 (a binomial 3σ slack)."""
    rng = np.random.default_rng(1)
    m, per_batch, gamma, L, reps = 40, 2, 20, 5, 150
    positives = 0
    for _ in range(reps):
        s_cal, batch, sc_cal, in_cal = simulate(rng, gamma, m, per_batch, 0.0)
        fit = fit_per_example(sc_cal, in_cal)
        s_ev, _, sc_ev, _ = simulate(rng, L, m, per_batch, 0.0)
        v = batchwise_overlaps(batch_scores(sc_ev, fit, batch, m), s_ev, [20])[20]
        positives += epsilon_lower_bound(v, m, 20).rejected
    assert positives / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)


def _planted_overlaps(seed=9, m=30, r_values=(10, 30), L=12, shift=1.2):
    rng = np.random.default_rng(seed)
    signs = sample_sign_vectors(m, L, rng)
    return overlaps_rows(batchwise_overlaps(shift * signs + rng.normal(size=(L, m)), signs, r_values)), m


def test_every_row_is_the_three_bounds_of_its_overlaps():
    df, m = _planted_overlaps()
    table = bounds_table(df, m)
    assert len(table) == 4 and (table.role == "exploratory").all() and (table.test == "theorem4.2").all()
    for row in table.itertuples():
        v = df[df.r == row.r].sort_values("run").overlap.to_numpy()
        thm = epsilon_lower_bound(v, m, row.r, statistic=row.statistic)
        exact = epsilon_lower_bound(v, m, row.r, statistic=row.statistic, method="exact")
        mu = mu_lower_bound(v, m, row.r, statistic=row.statistic, method="tradeoff")  # BOUNDS: μ by the trade-off test
        assert (row.m, row.L, row.delta, row.mean_overlap) == (m, 12, 0.0, v.mean())
        assert (row.epsilon_ldp, row.epsilon_lb, row.rejected) == (thm.epsilon_ldp, thm.epsilon_lb, thm.rejected)
        assert (row.epsilon_ldp_exact, row.epsilon_lb_exact) == (exact.epsilon_ldp, exact.epsilon_lb)
        assert (row.mu_ldp, row.mu_lb) == (mu.mu_ldp, mu.mu_lb)
    assert table.epsilon_lb.max() > 0
    only_mean = bounds_table(df, m, statistics=("mean",))
    assert list(only_mean.statistic) == ["mean", "mean"]


def test_halve_false_reports_the_ldp_bounds():
    df, m = _planted_overlaps()
    halved, whole = bounds_table(df, m), bounds_table(df, m, halve=False)
    np.testing.assert_array_equal(whole.epsilon_lb, halved.epsilon_ldp)
    np.testing.assert_array_equal(whole.epsilon_lb_exact, halved.epsilon_ldp_exact)
    np.testing.assert_array_equal(whole.mu_lb, halved.mu_ldp)


def test_delta_of_the_ldp_mechanism_or_of_the_unlearning_claim():
    df, m = _planted_overlaps()
    delta = 1e-12  # Lemma C.1 multiplies δ by K: K ≈ 7.6e9 guesses at m = 30, r = 10
    ldp = bounds_table(df, m, delta=delta)
    unl = bounds_table(df, m, delta=delta, delta_kind="unlearning")
    for a, b in zip(ldp.itertuples(), unl.itertuples()):
        v = df[df.r == a.r].sort_values("run").overlap.to_numpy()
        assert a.epsilon_ldp == epsilon_lower_bound(v, m, a.r, statistic=a.statistic, delta=delta).epsilon_ldp
        res = unlearning_epsilon_lower_bound(v, m, b.r, statistic=b.statistic, delta=delta)
        assert (b.epsilon_lb, b.epsilon_ldp) == (res.epsilon_lb, res.epsilon_ldp)
        assert a.delta == b.delta == delta
    assert ldp.epsilon_lb_exact.isna().all() and unl.epsilon_ldp_exact.isna().all()  # the exact test is δ = 0 only
    assert ldp.mu_lb.notna().all()
    # an (ε, δ) claim induces (2ε, (1 + e^ε)δ): at the same δ it is never larger than reading δ as the LDP δ
    assert (unl.epsilon_lb <= ldp.epsilon_lb + 1e-12).all() and unl.epsilon_lb.max() > 0


def test_bounds_table_argument_checks():
    df, m = _planted_overlaps()
    with pytest.raises(ValueError, match="delta_kind must be one of"):
        bounds_table(df, m, delta_kind="mechanism")
    with pytest.raises(ValueError, match="halve must be True"):
        bounds_table(df, m, delta=1e-3, delta_kind="unlearning", halve=False)
    with pytest.raises(ValueError, match="the pre-registered cell's test is 'theorem4.2' but test='exact'"):
        bounds_table(df, m, primary=Cell(10, "mean", "logit"), test="exact")
    with pytest.raises(ValueError, match="test must be one of"):
        bounds_table(df, m, test="perfect")
    with pytest.raises(ValueError, match="test 'adaptive' supports delta = 0 only"):
        bounds_table(df, m, delta=1e-5, test="adaptive")


@pytest.mark.parametrize("test", ["theorem4.2", "exact", "mgf", "adaptive"])
def test_each_row_carries_its_bound_under_the_preregistered_test(test):
    """epsilon_ldp_test is the row's bound under the pre-registered test (the median's under mgf and
    adaptive: the exact binomial tail), and the Bonferroni choice is made on it."""
    df, m = _planted_overlaps()
    table = bounds_table(df, m, primary=Cell(10, "mean", "logit", test))
    assert set(table.test) == {test}
    for row in table.itertuples():
        v = df[(df.score == row.score) & (df.r == row.r)].sort_values("run").overlap.to_numpy()
        method = test if (row.statistic == "mean" or test in ("theorem4.2", "exact")) else "exact"
        expected = epsilon_lower_bound(v, m, row.r, zeta=row.zeta, statistic=row.statistic, method=method).epsilon_ldp
        assert row.epsilon_ldp_test == expected and row.epsilon_lb_test == expected / 2
        if test == "adaptive" and row.statistic == "mean":
            assert row.epsilon_ldp_test >= row.epsilon_ldp_exact >= row.epsilon_ldp  # never looser (docs/bounds.md §3a)
    bonf = bounds_table(df, m, selection="bonferroni", test=test)
    assert bonf.loc[bonf.role == "selected", "epsilon_ldp_test"].iloc[0] == bonf.epsilon_ldp_test.max()


# ---------------------------------------------------------------------------------------------
# fit_table and audit_tables on SCORES frames
# ---------------------------------------------------------------------------------------------
def long_scores(signs: pd.DataFrame, phase: str, shift: float, rng) -> pd.DataFrame:
    runs, s = sign_matrix(signs, phase)
    m = s.shape[1]
    base = np.linspace(-1, 1, m)
    rows = []
    for run, vec in zip(runs, s):
        val = base + shift * (vec == 1) + rng.normal(0, 0.3, m)
        for j in range(m):
            rows.append({"experiment": "e", "phase": phase, "run": run, "sign_index": 0, "seed": 0, "batch": j, "example": j,
                         "in_forget": bool(vec[j] == 1), "score_logit": val[j], "score_loss": -val[j]})
    return pd.DataFrame(rows)


def test_fit_table_is_the_per_example_fit_of_each_score():
    rng = np.random.default_rng(2)
    signs = sign_table("synthetic", 10, 12, 2, root_seed=3)
    calib = long_scores(signs, "calib", 1.0, rng)
    fit = fit_table(calib, "e", scores=["logit"])
    assert list(fit.columns) == schemas.FIT.names and len(fit) == 10
    assert (fit.experiment == "e").all() and (fit.score == "logit").all()
    _, s = sign_matrix(signs, "calib")
    values = calib.pivot(index="run", columns="example", values="score_logit").to_numpy()
    want = fit_per_example(values, s == 1)
    np.testing.assert_array_equal(fit.example, np.arange(10))
    np.testing.assert_array_equal(fit.batch, np.arange(10))
    for col in ("mu_in", "sd_in", "n_in", "mu_out", "sd_out", "n_out"):
        np.testing.assert_allclose(fit[col].to_numpy(), getattr(want, col), rtol=1e-13, err_msg=col)
    pooled = fit_table(calib, "e", scores=["logit"], pooled_variance=True)  # keyword arguments reach the fit
    assert pooled.sd_in.nunique() == 1


def test_fit_and_audit_end_to_end_on_synthetic_scores():
    rng = np.random.default_rng(0)
    signs = sign_table("synthetic", 40, 30, 6, root_seed=1)
    calib = long_scores(signs, "calib", 2.0, rng)
    fit = fit_table(calib, "e")
    assert set(fit["score"]) == {"logit", "loss"} and len(fit) == 80
    ev = long_scores(signs, "eval", 2.0, rng)
    overlaps, bounds = audit_tables(fit, ev, signs[signs.phase == "eval"], 40, [10, 20, 40], primary=Cell(20, "median", "loss"))
    assert len(overlaps) == 2 * 3 * 6
    assert list(overlaps.columns) == schemas.OVERLAPS.names
    assert sorted(bounds.columns) == sorted(schemas.BOUNDS.names)
    assert bounds["epsilon_lb"].max() > 5
    assert (bounds["epsilon_lb"] == bounds["epsilon_ldp"] / 2).all()
    pre = bounds[bounds.role == "preregistered"]
    assert pre[["r", "statistic", "score"]].values.tolist() == [[20, "median", "loss"]]
    assert (bounds.role != "preregistered").sum() == 11 and set(bounds.role) == {"preregistered", "exploratory"}
    assert (bounds.selection == "preregistered").all() and (bounds.zeta == 0.05).all()

    _, bonf = audit_tables(fit, ev, signs[signs.phase == "eval"], 40, [10, 20, 40], selection="bonferroni")
    assert len(bonf) == 12 and (bonf.zeta == 0.05 / 12).all() and (bonf.selection == "bonferroni").all()
    selected = bonf[bonf.role == "selected"]
    assert len(selected) == 1 and selected.epsilon_ldp.iloc[0] == bonf.epsilon_ldp.max()
    assert selected.epsilon_ldp.iloc[0] <= bounds.epsilon_ldp.max()  # ζ/K costs power


def test_audit_tables_overlaps_are_the_guesses_of_the_fitted_batch_scores():
    rng = np.random.default_rng(4)
    signs = sign_table("synthetic", 12, 16, 5, root_seed=2)
    calib = long_scores(signs, "calib", 1.0, rng)
    fit = fit_table(calib, "e", scores=["logit"])
    ev = long_scores(signs, "eval", 1.0, rng)
    overlaps, _ = audit_tables(fit, ev, signs[signs.phase == "eval"], 12, [4, 12], auditor="mine")
    assert set(overlaps.auditor) == {"mine"} and set(overlaps.score) == {"logit"}
    runs, s = sign_matrix(signs, "eval")

    def pivot(frame, col):
        return frame.pivot(index="run", columns="example", values=col).to_numpy()

    gfit = fit_per_example(pivot(calib, "score_logit"), pivot(calib, "in_forget").astype(bool))
    values = pivot(ev, "score_logit")
    want = batchwise_overlaps(batch_scores(values, gfit, np.arange(12), 12), s, [4, 12])
    for r in (4, 12):
        got = overlaps[overlaps.r == r].sort_values("run")
        np.testing.assert_array_equal(got.overlap, want[r])
        np.testing.assert_array_equal(got.run, runs)
        np.testing.assert_array_equal(got.sign_index, signs[signs.phase == "eval"].sort_values("run").sign_index)
    with pytest.raises(ValueError, match="do not match the sign table"):
        audit_tables(fit, ev[ev.run != runs[0]], signs[signs.phase == "eval"], 12, [4])


def test_phases_cannot_mix():
    rng = np.random.default_rng(0)
    signs = sign_table("synthetic", 10, 16, 3, root_seed=1)
    calib = long_scores(signs, "calib", 1.0, rng)
    ev = long_scores(signs, "eval", 1.0, rng)
    with pytest.raises(ValueError, match="must not mix"):
        fit_table(pd.concat([calib, ev]), "e")
    fit = fit_table(calib, "e")
    with pytest.raises(ValueError, match="must not mix"):
        audit_tables(fit, calib, signs[signs.phase == "calib"], 10, [4])
