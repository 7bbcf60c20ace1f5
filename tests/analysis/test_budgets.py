"""analysis/regime/budgets.py: the budget rule that fixes each heuristic's budget by its utility on
calibration runs (budgets.yaml): which grid point it chooses, and how a budget maps onto a method."""

from __future__ import annotations


import pandas as pd
import pytest
import yaml

from workflow_utils import REPO, script_module

HERE = REPO / "analysis" / "regime"


@pytest.fixture(scope="module")
def budgets():
    return script_module(HERE / "budgets.py", "budgets_script", on_path=HERE)


RULE = {"forget_margin": 0.05, "test_margin": 0.05}


def _points(rows):
    frame = pd.DataFrame([{"design": "d", "method": "m", "diverged": False, "retrain_forget_acc": 0.10, "retrain_test_acc": 0.90,
                           "budget": b, "lr": lr, "forget_acc": f, "test_acc": t} for b, lr, f, t in rows])
    return frame


def test_the_rule_takes_the_smallest_budget_then_the_smallest_lr_meeting_both_conditions(budgets):
    frame = budgets.decide(_points([(30, 0.1, 0.12, 0.88), (8, 0.3, 0.14, 0.90), (8, 0.1, 0.40, 0.91), (15, 0.1, 0.11, 0.89),
                                    (8, 1.0, 0.05, 0.80)]), RULE)
    chosen = frame[frame.chosen]
    assert len(chosen) == 1 and (chosen.budget.item(), chosen.lr.item()) == (8, 0.3)
    assert not frame.not_forgotten.any()
    # forget within 0.05 above Retrain's; test within 0.05 either side (8 at 1.0 forgets but loses utility)
    assert frame.set_index(["budget", "lr"]).loc[(8, 1.0)].meets_forget and not frame.set_index(["budget", "lr"]).loc[(8, 1.0)].meets_test


def test_no_point_that_forgets_flags_the_method_and_takes_the_lowest_forget_accuracy_that_keeps_utility(budgets):
    frame = budgets.decide(_points([(8, 0.1, 0.90, 0.90), (15, 0.1, 0.60, 0.89), (30, 0.1, 0.60, 0.88), (60, 1.0, 0.10, 0.20)]), RULE)
    chosen = frame[frame.chosen]
    assert (chosen.budget.item(), chosen.lr.item()) == (15, 0.1)  # ties go to the smaller budget
    assert frame.not_forgotten.all()
    none_kept = budgets.decide(_points([(8, 0.1, 0.90, 0.50), (15, 0.1, 0.60, 0.40)]), RULE)
    assert none_kept[none_kept.chosen].budget.item() == 8 and none_kept.not_forgotten.all()


def test_a_diverged_point_is_never_chosen(budgets):
    frame = _points([(8, 0.1, float("nan"), float("nan")), (15, 0.1, 0.12, 0.9)])
    frame.loc[0, "diverged"] = True
    out = budgets.decide(frame, RULE)
    assert out[out.chosen].budget.item() == 15


def test_each_budget_maps_onto_its_method_as_the_paper_splits_its_phases(budgets):
    assert budgets.grid_params("retain_finetune", {"epochs": 10, "lr": 0.1, "momentum": 0.9}, 30, 0.3) == {"epochs": 30, "lr": 0.3, "momentum": 0.9}
    fa = budgets.grid_params("forget_ascent", {"ascent_epochs": 2, "epochs": 8, "lr": 0.1}, 15, 1.0)
    assert fa["ascent_epochs"] + fa["epochs"] == 15 and fa["ascent_epochs"] == 2 and fa["lr"] == 1.0
    ida = budgets.grid_params("ida", {"forget_epochs": 2, "epochs": 8, "lr": 0.1}, 60, 0.1)
    assert (ida["forget_epochs"], ida["epochs"]) == (12, 48)  # E_f: a fifth, as the paper's 10 of 50
    assert budgets.grid_params("hessian", {"s2": 200, "scale": 500.0}, 400, 0.02) == {"s1": 1, "s2": 400, "scale": 50.0}
    with pytest.raises(ValueError, match="no budget grid"):
        budgets.grid_params("model_clipping", {}, 8, 0.1)


def test_the_rule_file_names_an_experiment_of_the_config_for_every_method_and_design():
    spec = yaml.safe_load((HERE / "budgets.yaml").read_text())
    config = yaml.safe_load((REPO / spec["config"]).read_text())
    for design in spec["designs"]:
        for key in spec["grids"]:
            assert f"{design}_{key}" in config["nn"]["experiments"]
    assert spec["calibration_runs"] <= min(config["nn"]["designs"][d]["calibration_runs"] for d in spec["designs"])


def test_the_baselines_budgets_map_onto_their_papers_knobs_and_every_point_is_valid(budgets):
    from unlearn_audit.unlearning import get_method

    assert budgets.grid_params("scrub", {"batch_size": 64}, 12, 0.005) == {"batch_size": 64, "epochs": 12, "max_steps": 2, "lr": 0.005}
    assert budgets.grid_params("scrub", {}, 1, 0.005)["max_steps"] == 1
    # SSD: the smaller budget and lr are the milder intervention (alpha 10, lambda 1 first)
    assert budgets.grid_params("ssd", {}, 0.1, 1.0) == {"alpha": 10.0, "lam": 1.0}
    assert budgets.grid_params("ssd", {}, 1.0, 4.0) == {"alpha": 1.0, "lam": 0.25}
    spec = yaml.safe_load((HERE / "budgets_baselines.yaml").read_text())
    assert set(spec["grids"]) == set(spec["experiments"]) == {"neggrad_plus", "scrub", "random_labels", "salun", "bad_teacher", "ssd"}
    for key, grid in spec["grids"].items():
        exp = spec["experiments"][key]
        for b in grid["budget"]:
            for lr in grid["lr"]:
                get_method(exp["method"]).params_cls(**budgets.grid_params(exp["method"], exp["params"], b, lr))
