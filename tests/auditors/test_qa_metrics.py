"""TOFU's metrics of question-answer designs, the arithmetic (src/unlearn_audit/auditors/qa_metrics.py):
ROUGE-L recall, answer probability, truth ratio, model utility, forget quality against Retrain,
the damaged flag, and the table's columns per experiment (privleak's and forget quality's
Retrain never replaced by a stand-in)."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from unlearn_audit.auditors.qa_metrics import (answer_probability, experiment_columns, forget_quality, harmonic_mean, is_damaged, lcs_length,
                                               not_measured, rouge_l_recall, run_record, truth_ratios, utility_truth_ratio, words)
from unlearn_audit.schemas import QA_COLUMNS, QA_RUN_METRICS


def test_rouge_l_recall_of_known_strings():
    assert words("Casaltor Kalo was born in 1958.") == ["casaltor", "kalo", "was", "born", "in", "1958"]
    assert lcs_length("abcbdab", "bdcaba") == 4 and lcs_length([], [1]) == 0
    assert rouge_l_recall("Casaltor Kalo was born in Varnholt.", "casaltor kalo was born in varnholt") == 1.0
    # the reference's 6 words, 5 of them in order in the prediction
    assert rouge_l_recall("Kalo was born in Varnholt, they say", "Casaltor Kalo was born in Varnholt.") == pytest.approx(5 / 6)
    assert rouge_l_recall("born was Kalo", "Kalo was born") == pytest.approx(1 / 3)  # recall of the longest common subsequence, not of words
    assert rouge_l_recall("", "a b") == 0.0 and math.isnan(rouge_l_recall("a", "..."))


def test_answer_probability_and_truth_ratio():
    assert answer_probability([0.0, math.log(2)]) == pytest.approx(0.75)  # mean of P^(1/|a|) = exp(-mean token loss)
    assert math.isnan(answer_probability([]))
    # pair 0: paraphrase P 0.5, perturbed 0.25 and 0.125 -> R = 0.1875 / 0.5; pair 1 has no perturbed answer; pair 2 nothing
    loss = -np.log([0.5, 0.25, 0.125, 0.4])
    r = truth_ratios(3, [0, 0, 0, 1], [0, 1, 2, 0], loss)
    assert r[0] == pytest.approx(0.375) and np.isnan(r[1:]).all()
    assert utility_truth_ratio([0.375, np.nan, 1.5]) == pytest.approx((0.625 + 0.0) / 2)  # max(0, 1 - R)
    assert math.isnan(utility_truth_ratio([np.nan]))


def test_model_utility_is_the_harmonic_mean_of_what_is_measured():
    assert harmonic_mean([0.5, 0.25]) == pytest.approx(1 / 3)
    assert harmonic_mean([0.5, np.nan, 0.25]) == pytest.approx(1 / 3) and harmonic_mean([0.5, 0.0]) == 0.0
    assert math.isnan(harmonic_mean([np.nan]))
    parts = {p: {"losses": [math.log(2)] * 2, "rouge": [0.5, 1.0], "ratios": [0.5, np.nan]} for p in ("forget", "retain", "test")}
    rec = run_record(parts, 1.0, 100)
    assert set(rec) == set(QA_RUN_METRICS.names[-len(rec):]) and rec["forget_truth_ratios"] == [0.5]
    assert rec["forget_truth_ratio"] == 0.5 and rec["retain_truth_ratio"] == 0.5 and rec["test_rouge_l"] == 0.75
    assert rec["model_utility"] == pytest.approx(harmonic_mean([0.5, 0.75, 0.5] * 2))
    assert set(not_measured()) == set(rec) and math.isnan(not_measured()["model_utility"])


def test_forget_quality_is_the_ks_p_value_against_retrain():
    rng = np.random.default_rng(0)
    same = rng.lognormal(size=40)
    assert forget_quality(same, same) == pytest.approx(1.0)
    assert forget_quality(same, same + 3.0) < 1e-6  # shifted: the method's ratios are not Retrain's
    assert 0.05 < forget_quality(rng.lognormal(size=200), rng.lognormal(size=200)) <= 1.0
    assert math.isnan(forget_quality([], same)) and math.isnan(forget_quality([np.nan], same))


def test_damaged_within_ten_percent_of_a_uniform_guess():
    assert is_damaged(math.log(100), 100)  # uniform logits: loss log V
    assert is_damaged(0.9 * math.log(100), 100) and not is_damaged(0.89 * math.log(100), 100)
    assert not is_damaged(1.2, 100) and not is_damaged(float("nan"), 100) and is_damaged(float("inf"), 100)


def _runs(experiment: str, shift: float, runs=(0, 1), loss: float = 1.0) -> list[dict]:
    rng = np.random.default_rng(len(experiment))
    base = {c: 0.5 for c in QA_COLUMNS if c not in ("forget_quality", "damaged", "no_retrain")}
    return [{"experiment": experiment, "phase": "eval", "run": r, **base, "answer_loss": loss, "vocab_size": 100,
             "forget_truth_ratios": list(rng.lognormal(size=30) + shift)} for r in runs] + [
        {"experiment": experiment, "phase": "calib", "run": 0, **not_measured()}]


def test_experiment_columns_measure_against_the_designs_retrain_or_flag_its_absence():
    experiments = {"ga": {"design": "d", "method": "gradient_ascent"}, "d_no_unlearning": {"design": "d", "method": "no_unlearning"},
                   "d_retrain": {"design": "d", "method": "no_unlearning", "base": "retrain"},
                   "lone": {"design": "e", "method": "npo"}, "other": {"design": "f", "method": "npo"}}
    metrics = pd.DataFrame(_runs("ga", 5.0, loss=4.2) + _runs("d_no_unlearning", 0.0) + _runs("d_retrain", 0.0, runs=(0, 1, 2))
                           + _runs("lone", 0.0))
    metrics = pd.concat([metrics, pd.DataFrame([{"experiment": "other", "phase": "eval", "run": 0, "retain_acc": 0.5}])])  # no QA columns
    cols = experiment_columns(metrics, experiments).set_index("experiment")
    assert list(cols.columns) == list(QA_COLUMNS)
    assert cols.loc["d_retrain", "forget_quality"] == 1.0 and cols.loc["ga", "forget_quality"] < 1e-6
    assert cols.loc["ga", "damaged"] and not cols.loc["d_no_unlearning", "damaged"]  # 4.2 >= 0.9 log(100) = 4.14
    assert cols.loc["ga", "retain_rouge_l"] == 0.5 and not cols.loc[["ga", "d_retrain"], "no_retrain"].any()
    # no Retrain control on design e: NaN forget quality with the flag, never a stand-in
    assert np.isnan(cols.loc["lone", "forget_quality"]) and cols.loc["lone", "no_retrain"]
    assert cols.loc["other", ["forget_answer_prob", "forget_quality"]].isna().all() and not cols.loc["other", "damaged"]
