"""analysis/precision/effect.py: the pre-registered rule that chooses config/paper.yaml's precision on
the controls of a reduced run (rule.yaml): each way a candidate fails it, and the choice."""

from __future__ import annotations


import pandas as pd
import pytest

from workflow_utils import REPO, script_module

HERE = REPO / "analysis" / "precision"


@pytest.fixture(scope="module")
def effect():
    return script_module(HERE / "effect.py", "precision_effect", on_path=HERE.parent)


def _table(moves=None):
    """Controls at fp32 and two candidates that move nothing, then ``moves``: {(experiment, precision, column): value}."""
    base = {"nu": ("No unlearning", 10.0), "rt": ("Retrain", 0.0)}
    rows = []
    for precision in ("fp32", "bf16", "tf32"):
        for e, (method, claim) in base.items():
            rows.append({"experiment": e, "precision": precision, "method": method, "r": 100, "epsilon_lb_claim": claim,
                         "guess_fraction": 0.9, "retain_acc": 1.0, "forget_acc": 0.95, "test_acc": 0.93})
    t = pd.DataFrame(rows).set_index(["experiment", "precision"])
    for (e, p, c), v in (moves or {}).items():
        t.loc[(e, p), c] = v
    return t


def test_the_committed_rule_reads_and_lists_the_reference_first(effect):
    rule = effect.load_rule()
    assert effect.precisions(rule) == ["fp32", "bf16", "tf32"]
    assert set(rule["rule"]) == {"accuracy_margin", "claim_relative", "claim_absolute", "retrain_claim"}
    o = effect.overlay(rule, "tf32", effect.Path("results_precision"))
    assert o["results_dir"] == "results_precision/tf32"
    assert o["nn"]["designs"][rule["design"]] == {"precision": "tf32", "seed": rule["seed"]}


def test_unmoved_controls_choose_the_cheapest_candidate(effect):
    rule = effect.load_rule()
    reasons = effect.verdict(_table(), rule)
    assert reasons == {"bf16": [], "tf32": []} and effect.choice(reasons, rule) == "bf16"


@pytest.mark.parametrize("move, fails", [
    ({("nu", "bf16", "test_acc"): 0.915}, "test_acc"),              # 0.015 > 0.01
    ({("rt", "bf16", "forget_acc"): 0.97}, "forget_acc"),           # Retrain's accuracies too
    ({("nu", "bf16", "epsilon_lb_claim"): 8.4}, "claim 10.00 -> 8.40"),  # 16 % > 15 %
    ({("rt", "bf16", "epsilon_lb_claim"): 0.2}, "against Retrain"),
])
def test_each_way_to_fail_moves_the_choice_on(effect, move, fails):
    rule = effect.load_rule()
    reasons = effect.verdict(_table(move), rule)
    assert len(reasons["bf16"]) == 1 and fails in reasons["bf16"][0] and reasons["tf32"] == []
    assert effect.choice(reasons, rule) == "tf32"


def test_within_tolerance_passes_and_none_passing_keeps_fp32(effect):
    rule = effect.load_rule()
    near = _table({("nu", "bf16", "epsilon_lb_claim"): 8.6, ("nu", "bf16", "test_acc"): 0.921})  # 14 %, 0.009
    assert effect.verdict(near, rule)["bf16"] == []
    small = _table({("nu", "fp32", "epsilon_lb_claim"): 1.0, ("nu", "bf16", "epsilon_lb_claim"): 1.45})  # 0.45 <= the 0.5 floor
    assert effect.verdict(small, rule)["bf16"] == []
    both = _table({("nu", "bf16", "test_acc"): 0.8, ("nu", "tf32", "epsilon_lb_claim"): 5.0})
    assert effect.choice(effect.verdict(both, rule), rule) == "fp32"
