"""Accuracies and the four warnings beside every bound (pipeline/diagnostics.py): a model set at
chance, a method that left the model where the No-unlearning control has it, a design whose
control is not rejected (no power) and a method whose forget accuracy tells it apart from the
Retrain control's (not forgotten) are flagged, for final models and for every checkpoint step."""

import io

import numpy as np
import pandas as pd
import pytest

from unlearn_audit.pipeline.diagnostics import (FORGET_MARGIN, at_chance, checkpoint_accuracies, checkpoint_diagnostics, experiment_diagnostics,
                                                is_not_forgotten, same_accuracy, warn)


def test_at_chance_is_two_binomial_standard_errors_of_one_over_the_classes():
    se = np.sqrt(0.1 * 0.9 / 360)
    assert at_chance(0.1, 0.1, 360) and at_chance(0.1 + 1.9 * se, 0.1, 360) and at_chance(0.02, 0.1, 360)  # below chance too
    assert not at_chance(0.1 + 2.1 * se, 0.1, 360) and not at_chance(0.95, 0.1, 360)
    assert not at_chance(float("nan"), 0.1, 360)


def test_same_accuracy_compares_with_the_standard_error_of_the_difference():
    assert same_accuracy(1.0, 1.0, 72) and same_accuracy(0.95, 0.97, 72)
    assert not same_accuracy(1.0, 0.02, 72) and not same_accuracy(0.9, 0.6, 72)


def _metrics(experiment, forget_acc, test_acc=0.97, runs=10):
    return [{"experiment": experiment, "phase": "eval", "run": i, "retain_acc": 0.99, "forget_acc": forget_acc, "test_acc": test_acc,
             "n_test": 360, "n_forget": 72, "chance_acc": 0.1, "record": "{}"} for i in range(runs)]


def _bounds(values):
    return pd.DataFrame([{"experiment": e, "role": "preregistered", "epsilon_lb": v} for e, v in values.items()])


def test_a_method_at_the_no_unlearning_level_is_a_no_op_and_destroyed_models_are_at_chance():
    experiments = {"ctl": {"design": "d", "method": "no_unlearning", "base": "trained"},
                   "ret": {"design": "d", "method": "no_unlearning", "base": "retrain"},
                   "noop": {"design": "d", "method": "retain_finetune"},
                   "works": {"design": "d", "method": "forget_ascent"},
                   "dead": {"design": "d", "method": "model_clipping"},
                   "other": {"design": "e", "method": "forget_ascent"}}
    metrics = pd.DataFrame(_metrics("ctl", 1.0) + _metrics("ret", 0.97) + _metrics("noop", 1.0) + _metrics("works", 0.05)
                           + _metrics("dead", 0.1, test_acc=0.1) + _metrics("other", 1.0) + [{**_metrics("ctl", 0.5)[0], "phase": "calib"}])
    bounds = _bounds({"ctl": 12.0, "ret": 0.0, "noop": 11.5, "works": 3.0, "dead": 0.0, "other": 12.0})
    d = experiment_diagnostics(bounds, metrics, experiments).set_index("experiment")
    assert d.loc["ctl", "forget_acc"] == 1.0 and d.loc["ret", "forget_acc"] == pytest.approx(0.97)  # evaluation runs only
    assert not d.not_forgotten.any()  # every forget accuracy within 0.05 of Retrain's, or below it
    assert d.no_op.to_dict() == {"ctl": False, "ret": False, "noop": True, "works": False, "dead": False, "other": False}
    assert d.at_chance.to_dict() == {"ctl": False, "ret": False, "noop": False, "works": False, "dead": True, "other": False}
    assert not d.no_power.any()  # the control of d is rejected; e has no control here
    # a lower bound well below the control's is no no-op, whatever the forget accuracy
    lower = _bounds({"ctl": 12.0, "ret": 0.0, "noop": 9.0, "works": 3.0, "dead": 0.0, "other": 12.0})
    assert not experiment_diagnostics(lower, metrics, experiments).set_index("experiment").loc["noop", "no_op"]
    log = io.StringIO()
    lines = warn(experiment_diagnostics(bounds, metrics, experiments), log)
    assert len(lines) == 2 and "noop" in lines[0] and "dead" in lines[1] and log.getvalue().count("WARNING") == 2


def test_checkpoint_accuracies_average_the_evaluation_runs_per_step():
    rows = [{"experiment": "mc", "phase": "eval", "record": '{"checkpoint_test_acc": {"1": 0.5, "40": 0.1}, "checkpoint_forget_acc": {"1": 0.6, "40": 0.2}}'},
            {"experiment": "mc", "phase": "eval", "record": '{"checkpoint_test_acc": {"1": 0.7, "40": 0.3}, "checkpoint_forget_acc": {"1": 0.8, "40": 0.4}}'},
            {"experiment": "mc", "phase": "calib", "record": '{"checkpoint_test_acc": {"1": 0.0}}'},
            {"experiment": "ft", "phase": "eval", "record": "{}"}]
    got = checkpoint_accuracies(pd.DataFrame(rows))
    assert got.step.tolist() == [1, 40] and np.allclose(got.test_acc, [0.6, 0.2]) and np.allclose(got.forget_acc, [0.7, 0.3])
    assert checkpoint_accuracies(pd.DataFrame(rows[3:])).empty


def test_the_no_op_verdict_compares_the_bounds_of_the_preregistered_test():
    experiments = {"ctl": {"design": "d", "method": "no_unlearning"}, "m": {"design": "d", "method": "retain_finetune"}}
    metrics = pd.DataFrame(_metrics("ctl", 1.0) + _metrics("m", 1.0))
    bounds = pd.DataFrame([{"experiment": "ctl", "role": "preregistered", "test": "exact", "epsilon_lb": 11.0, "epsilon_lb_exact": 12.0},
                           {"experiment": "m", "role": "preregistered", "test": "exact", "epsilon_lb": 9.5, "epsilon_lb_exact": 11.5}])
    assert experiment_diagnostics(bounds, metrics, experiments).set_index("experiment").loc["m", "no_op"]  # 11.5 >= 0.9 x 12
    theorem = bounds.assign(test="theorem4.2")
    assert not experiment_diagnostics(theorem, metrics, experiments).set_index("experiment").loc["m", "no_op"]  # 9.5 < 0.9 x 11
    # with the claim column (any pre-registered test, e.g. adaptive), the verdict reads it
    adaptive = bounds.assign(test="adaptive", epsilon_lb_test=[12.5, 11.4])
    assert experiment_diagnostics(adaptive, metrics, experiments).set_index("experiment").loc["m", "no_op"]  # 11.4 >= 0.9 x 12.5
    assert not experiment_diagnostics(adaptive.assign(epsilon_lb_test=[12.5, 9.0]), metrics, experiments).set_index("experiment").loc["m", "no_op"]


def test_a_control_at_zero_makes_no_method_a_no_op_and_flags_every_experiment_of_its_design_without_power():
    experiments = {"ctl": {"design": "d", "method": "no_unlearning", "base": "trained"},
                   "ret": {"design": "d", "method": "no_unlearning", "base": "retrain"},
                   "m": {"design": "d", "method": "retain_finetune"},
                   "ctl_e": {"design": "e", "method": "no_unlearning"}, "m_e": {"design": "e", "method": "retain_finetune"}}
    metrics = pd.DataFrame(_metrics("ctl", 0.58) + _metrics("ret", 0.55) + _metrics("m", 0.58) + _metrics("ctl_e", 1.0) + _metrics("m_e", 1.0))
    bounds = _bounds({"ctl": 0.0, "ret": 0.0, "m": 0.0, "ctl_e": 5.0, "m_e": 0.0})
    d = experiment_diagnostics(bounds, metrics, experiments).set_index("experiment")
    # the same forget accuracy and a bound "at 90 % of" 0: two zeros say nothing about each other
    assert not d.loc["m", "no_op"]
    assert d.no_power.to_dict() == {"ctl": True, "ret": True, "m": True, "ctl_e": False, "m_e": False}
    assert d.loc["ctl_e", "epsilon_lb_claim"] == 5.0
    lines = warn(d.reset_index(), io.StringIO())
    assert len(lines) == 3 and all("not rejected" in line and "enlarge" in line for line in lines)


def test_every_checkpoint_step_is_flagged_as_its_own_model_set():
    experiments = {"ctl": {"design": "d", "method": "no_unlearning"}, "mc": {"design": "d", "method": "model_clipping"}}
    record = '{"checkpoint_test_acc": {"1": 0.97, "40": 0.1}, "checkpoint_forget_acc": {"1": 1.0, "40": 0.1}}'
    metrics = pd.DataFrame(_metrics("ctl", 1.0) + [{**row, "record": record} for row in _metrics("mc", 0.9, test_acc=0.95)])
    bounds = _bounds({"ctl": 2.6, "mc": 0.0})
    diagnostics = experiment_diagnostics(bounds, metrics, experiments)
    steps = pd.DataFrame([{"experiment": "mc", "step": 1, "role": "preregistered", "epsilon_lb_test": 2.6},
                          {"experiment": "mc", "step": 40, "role": "preregistered", "epsilon_lb_test": 0.0},
                          {"experiment": "mc", "step": 1, "role": "exploratory", "epsilon_lb_test": 0.1}])
    got = checkpoint_diagnostics(steps, metrics, diagnostics, experiments).set_index("step")
    # step 1: the trained model with a little noise (the control's bound and forget accuracy): a no-op; step 40: at chance
    assert got.loc[1, "no_op"] and not got.loc[1, "at_chance"]
    assert got.loc[40, "at_chance"] and not got.loc[40, "no_op"]
    # the final models are neither: the flags of a step are its own
    assert not diagnostics.set_index("experiment").loc["mc", ["at_chance", "no_op"]].any()
    assert checkpoint_diagnostics(steps.iloc[:0], metrics[metrics.experiment == "ctl"], diagnostics, experiments).empty


def test_a_method_whose_forget_accuracy_is_above_retrains_is_not_forgotten():
    """Not forgotten: a method's mean forget accuracy more than FORGET_MARGIN above its design's Retrain
    control's; never the controls, a design without Retrain here, or a missing accuracy."""
    experiments = {"ctl": {"design": "d", "method": "no_unlearning", "base": "trained"},
                   "ret": {"design": "d", "method": "no_unlearning", "base": "retrain"},
                   "kept": {"design": "d", "method": "retain_finetune"}, "close": {"design": "d", "method": "forget_ascent"},
                   "unknown": {"design": "d", "method": "ida"}, "alone": {"design": "e", "method": "retain_finetune"}}
    metrics = pd.DataFrame(_metrics("ctl", 1.0) + _metrics("ret", 0.8) + _metrics("kept", 0.9) + _metrics("close", 0.8 + FORGET_MARGIN - 0.01)
                           + _metrics("unknown", float("nan")) + _metrics("alone", 1.0))
    bounds = _bounds({"ctl": 5.0, "ret": 0.0, "kept": 2.0, "close": 0.5, "unknown": 1.0, "alone": 3.0})
    d = experiment_diagnostics(bounds, metrics, experiments).set_index("experiment")
    assert d.not_forgotten.to_dict() == {"ctl": False, "ret": False, "kept": True, "close": False, "unknown": False, "alone": False}
    assert is_not_forgotten(0.86, 0.8) and not is_not_forgotten(0.85, 0.8) and not is_not_forgotten(0.9, float("nan"))
    lines = warn(d.reset_index(), io.StringIO())
    assert len(lines) == 1 and "kept" in lines[0] and "does not look unlearned" in lines[0]
    # a checkpoint step is judged by its own forget accuracy against the same Retrain control
    record = '{"checkpoint_test_acc": {"1": 0.97, "40": 0.9}, "checkpoint_forget_acc": {"1": 1.0, "40": 0.82}}'
    stepped = pd.concat([metrics, pd.DataFrame([{**row, "record": record} for row in _metrics("mc", 0.8)])], ignore_index=True)
    experiments["mc"] = {"design": "d", "method": "model_clipping"}
    diagnostics = experiment_diagnostics(bounds, stepped, experiments)
    steps = pd.DataFrame([{"experiment": "mc", "step": t, "role": "preregistered", "epsilon_lb_test": 0.0} for t in (1, 40)])
    got = checkpoint_diagnostics(steps, stepped, diagnostics, experiments).set_index("step")
    assert got.not_forgotten.to_dict() == {1: True, 40: False}
