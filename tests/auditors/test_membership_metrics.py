"""The membership metrics beside the audit (docs/metrics.md): AUC, TPR at a fixed FPR with its
threshold from calibration runs, privleak against Retrain, and their bootstrap intervals over runs.

Checked against definitions computed another way (all pairs for the AUC, order statistics for the
threshold) and, statistically, against Gaussian scores whose AUC and TPR are known in closed form."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import norm

from unlearn_audit.auditors.membership_metrics import (
    MIN_NEGATIVES, auc, fpr_threshold, membership_metrics, orientation, privleak, privleak_interval,
)


def test_auc_is_the_share_of_positive_negative_pairs_ordered_ties_half():
    rng = np.random.default_rng(0)
    pos, neg = rng.integers(0, 5, 40).astype(float), rng.integers(0, 4, 30).astype(float)  # many ties
    pairs = (pos[:, None] > neg[None, :]).mean() + 0.5 * (pos[:, None] == neg[None, :]).mean()
    assert auc(pos, neg) == pytest.approx(pairs)
    assert auc(pos, neg) + auc(neg, pos) == pytest.approx(1.0)
    assert np.isnan(auc(pos, np.array([])))


def test_a_score_whose_members_sit_lower_is_turned_round_on_calibration_rows():
    values = np.array([3.0, 2.5, 0.1, 0.2])
    assert orientation(values, np.array([True, True, False, False])) == 1.0
    assert orientation(-values, np.array([True, True, False, False])) == -1.0


@pytest.mark.parametrize("n", [1000, 1234, 5000])
def test_the_threshold_lets_at_most_alpha_of_the_calibration_negatives_above(n):
    neg = np.random.default_rng(n).normal(size=n)
    t = fpr_threshold(neg, 0.01)
    assert (neg > t).sum() <= int(0.01 * n)
    assert (neg >= t).sum() > int(0.01 * n)  # and no higher threshold would do: t is one of them
    assert np.isnan(fpr_threshold(neg[: int(MIN_NEGATIVES / 0.01) - 1], 0.01))
    assert np.isnan(fpr_threshold(neg, 0.001))  # 0.1 % needs 10,000 negatives


def _scores(shift: float, runs: int, examples: int, seed: int, phase: str) -> pd.DataFrame:
    """Gaussian scores: in-forget rows shifted by ``shift`` (unit variance): AUC Φ(shift/√2), TPR at
    FPR α 1 - Φ(z_{1-α} - shift) for a threshold on the negatives."""
    rng = np.random.default_rng(seed)
    rows = []
    for run in range(runs):
        inside = rng.permutation(np.repeat([True, False], examples // 2))
        logit = rng.normal(size=examples) + shift * inside
        rows.append(pd.DataFrame({"phase": phase, "run": run, "example": np.arange(examples), "in_forget": inside,
                                  "score_logit": logit, "score_loss": -logit}))
    return pd.concat(rows, ignore_index=True)


def test_known_auc_and_tpr_lie_in_their_intervals_and_a_loss_score_gives_the_same():
    shift = 1.5
    calib, ev = _scores(shift, 40, 200, 1, "calib"), _scores(shift, 20, 200, 2, "eval")
    res = membership_metrics(calib, ev, "logit", draws=300)
    assert res.auc_low <= norm.cdf(shift / np.sqrt(2)) <= res.auc_high
    tpr, low, high = res.tpr[0.01]
    true_tpr = 1 - norm.cdf(norm.ppf(0.99) - shift)
    assert low <= true_tpr <= high and low < tpr < high
    assert np.isnan(res.tpr[0.001][0])  # 4,000 calibration negatives < 10,000
    assert res.record()["few_negatives_0.1pct"] and not res.record()["few_negatives_1pct"]
    loss = membership_metrics(calib, ev, "loss", draws=300)
    assert loss.auc == pytest.approx(res.auc) and loss.tpr[0.01][0] == pytest.approx(tpr)


def test_the_auc_interval_covers_the_truth_about_95_percent_of_the_time():
    truth, hits, trials = 0.5, 0, 60
    for seed in range(trials):
        res = membership_metrics(_scores(0.0, 10, 60, 100 + seed, "calib"), _scores(0.0, 10, 60, 500 + seed, "eval"), draws=200)
        hits += res.auc_low <= truth <= res.auc_high
    # Binomial(60, 0.95): at least 52 hits has probability about 0.99; a collapsed interval hits far fewer
    assert hits >= 52, hits


def test_the_audits_likelihood_ratio_uses_the_calibration_fit():
    from unlearn_audit.auditors.batchwise import fit_table

    calib, ev = _scores(1.0, 40, 50, 3, "calib"), _scores(1.0, 10, 50, 4, "eval")
    calib["batch"] = ev["batch"] = calib["example"] % 25 if False else 0
    calib = calib.assign(batch=calib.example, experiment="x", seed=calib.run, sign_index=calib.run)
    fit = fit_table(calib, "x")
    res = membership_metrics(calib, ev, "logit", fit=fit[fit.score == "logit"], draws=100)
    assert 0.6 < res.auc_lr and res.auc_lr_low <= res.auc_lr <= res.auc_lr_high
    assert np.isnan(membership_metrics(calib, ev, "logit", draws=10).auc_lr)


def test_privleak_against_retrains_own_auc():
    assert privleak(0.75, 0.5) == pytest.approx(-50.0)
    assert privleak(0.5, 0.5) == 0.0
    assert privleak(0.55, 0.6) == pytest.approx(100 * (0.45 - 0.4) / 0.4)
    assert np.isnan(privleak(0.7, 1.0)) and np.isnan(privleak(0.7, float("nan")))
    low, high = privleak_interval(0.75, 0.5, np.full(50, 0.75), np.full(50, 0.5), 10)
    assert low == pytest.approx(-50.0) and high == pytest.approx(-50.0)
    rng = np.random.default_rng(0)
    low, high = privleak_interval(0.75, 0.5, 0.75 + 0.02 * rng.normal(size=500), 0.5 + 0.02 * rng.normal(size=500), 10)
    assert low < -50 < high


def test_bad_input_names_the_missing_column():
    ev = _scores(0.0, 2, 10, 0, "eval")
    with pytest.raises(ValueError, match="score_logit"):
        membership_metrics(ev, ev.drop(columns="score_logit"))
