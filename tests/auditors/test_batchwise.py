import math

import numpy as np
import pandas as pd
import pytest

from unlearn_audit import schemas
from unlearn_audit.auditors import batch_scores, batchwise_overlaps, bounds_table
from unlearn_audit.auditors import fit_per_example as fit_gaussians
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


def test_fit_uses_per_side_unbiased_moments():
    scores = np.array([[1.0, 5.0], [3.0, 7.0], [10.0, 0.0], [14.0, 2.0]])
    inside = np.array([[True, False], [True, False], [False, True], [False, True]])
    fit = fit_gaussians(scores, inside)
    np.testing.assert_allclose(fit.mu_in, [2.0, 1.0])
    np.testing.assert_allclose(fit.mu_out, [12.0, 6.0])
    np.testing.assert_allclose(fit.sd_in, [math.sqrt(2), math.sqrt(2)])
    np.testing.assert_allclose(fit.sd_out, [math.sqrt(8), math.sqrt(2)])
    pooled = fit_gaussians(scores, inside, pooled_variance=True)
    np.testing.assert_allclose(pooled.sd_out, [math.sqrt(5)] * 2)
    with pytest.raises(ValueError, match="fewer than 2 calibration runs"):
        fit_gaussians(scores[:3], inside[:3])


def test_batch_score_is_sum_of_log_likelihood_ratios_with_log_sigma_terms():
    scores = np.array([[0.0, 1.0, 2.0]])
    inside = np.array([[True, True, True], [True, True, True], [False] * 3, [False] * 3])
    calib = np.array([[0.0, 0.0, 0.0], [2.0, 2.0, 2.0], [0.0, 0.0, 0.0], [4.0, 4.0, 4.0]])
    fit = fit_gaussians(calib, inside)
    lam = batch_scores(scores, fit, np.array([0, 0, 1]), 2)
    from scipy.stats import norm

    llr = norm.logpdf(scores[0], 1.0, math.sqrt(2)) - norm.logpdf(scores[0], 2.0, math.sqrt(8))
    np.testing.assert_allclose(lam[0], [llr[0] + llr[1], llr[2]])


def test_strong_signal_gives_large_bound_and_null_gives_none():
    rng = np.random.default_rng(0)
    m, per_batch, gamma, L = 60, 3, 40, 10
    for shift, expect_positive in ((3.0, True), (0.0, False)):
        s_cal, batch, sc_cal, in_cal = simulate(rng, gamma, m, per_batch, shift)
        fit = fit_gaussians(sc_cal, in_cal)
        s_ev, _, sc_ev, _ = simulate(rng, L, m, per_batch, shift)
        lam = batch_scores(sc_ev, fit, batch, m)
        ov = batchwise_overlaps(lam, s_ev, [20, 40, 60])
        df = pd.DataFrame(
            [
                {"experiment": "x", "auditor": "batchwise", "score": "logit", "run": i, "sign_index": i, "r": r, "overlap": int(v)}
                for r, vs in ov.items()
                for i, v in enumerate(vs)
            ]
        )
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
    """No membership signal: a positive bound appears in at most ~ζ of repeated audits."""
    rng = np.random.default_rng(1)
    m, per_batch, gamma, L, reps = 40, 2, 20, 5, 150
    positives = 0
    for _ in range(reps):
        s_cal, batch, sc_cal, in_cal = simulate(rng, gamma, m, per_batch, 0.0)
        fit = fit_gaussians(sc_cal, in_cal)
        s_ev, _, sc_ev, _ = simulate(rng, L, m, per_batch, 0.0)
        v = batchwise_overlaps(batch_scores(sc_ev, fit, batch, m), s_ev, [20])[20]
        from unlearn_audit.stats.bounds import epsilon_lower_bound

        positives += epsilon_lower_bound(v, m, 20).rejected
    assert positives / reps <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / reps)


def test_bad_inputs():
    with pytest.raises(ValueError, match="NaN"):
        fit_gaussians(np.array([[np.nan, 1.0]] * 4), np.array([[True, False]] * 4))
    fit = fit_gaussians(np.arange(8.0).reshape(4, 2), np.array([[True, False], [True, False], [False, True], [False, True]]))
    with pytest.raises(ValueError, match="batch ids"):
        batch_scores(np.zeros((1, 2)), fit, np.array([0, 5]), 2)
