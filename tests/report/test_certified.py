"""Table 6 and Figures 1a-c as frames (report/certified.py) and their ceilings
(pipeline/certified.py), on hand-made bounds: each experiment reports exactly its pre-registered
row, Table 6's first-step column is the bound at the first checkpoint step, never a maximum."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from unlearn_audit import schemas
from unlearn_audit.auditors.audit import claim_ceiling
from unlearn_audit.pipeline.certified import ceilings, claim_ceilings, mark_ceilings
from unlearn_audit.report.certified import figure1a_frame, figure1b_frame, figure1c_frame, table6_frame
from unlearn_audit.stats.perfect_prediction import perfect_prediction_bound


def _bound(experiment, epsilon_lb, role="preregistered", step=None, m=4, L=8, delta=1e-5, **extra):
    # the claim (the pre-registered test's bound) beside Theorem 4.2's: here the reference test, a little larger
    row = {"experiment": experiment, "auditor": "joint", "score": "logit", "statistic": "mean", "m": m, "r": m, "L": L,
           "zeta": 0.05, "delta": delta, "epsilon_lb": epsilon_lb, "rejected": epsilon_lb > 0, "role": role,
           "test": "reference", "epsilon_lb_test": 1.1 * epsilon_lb, **extra}
    return row if step is None else {"step": step, **row}


MC = {"mc_a": {"split": "uniform", "variant": "certified", "label": "MC", "params": {"epsilon": 1.0, "C2": 0.2, "sigma": 0.1}},
      "mc_b": {"split": "adversarial", "variant": "uncertified", "label": "MC unc.", "params": {"epsilon": None, "C2": 5.0, "sigma": 1e-4}}}
CONTROL = {"ctl": {"split": "uniform", "variant": "control", "label": "No unlearning", "params": {}, "auditor": "joint"}}


def _metrics(experiment, noisy_steps, phases=("eval", "eval")):
    return [{"experiment": experiment, "phase": ph, "record": json.dumps({"noisy_steps": noisy_steps})} for ph in phases]


def test_table6_reports_the_preregistered_rows_and_the_first_step():
    bounds = pd.DataFrame([_bound("mc_a", 0.4), _bound("mc_a", 9.0, role="exploratory"), _bound("mc_b", 2.5)])
    steps = pd.DataFrame([_bound("mc_a", 1.5, step=20), _bound("mc_a", 0.7, step=1), _bound("mc_a", 8.0, step=1, role="exploratory"),
                          _bound("mc_b", 3.0, step=5)])
    metrics = pd.DataFrame(_metrics("mc_a", 40) + _metrics("mc_b", 10) + [{"experiment": "mc_b", "phase": "calib", "record": "{}"}])
    table = table6_frame(bounds, steps, metrics, MC).set_index(pd.Index(list(MC)))
    assert table.loc["mc_a", ["epsilon_lb_theorem42", "first_step", "epsilon_lb_theorem42_first_step", "noisy_steps"]].tolist() == [0.4, 1, 0.7, 40]
    assert table.loc["mc_b", ["epsilon_lb_theorem42", "first_step", "epsilon_lb_theorem42_first_step", "noisy_steps"]].tolist() == [2.5, 5, 3.0, 10]
    # the claim first: the BOUNDS rows' epsilon_lb_test, after the columns that name the row, Theorem 4.2's after it
    assert table.loc["mc_a", ["epsilon_lb_claim_first_step", "epsilon_lb_claim", "test"]].tolist() == [1.1 * 0.7, 1.1 * 0.4, "reference"]
    columns = list(table.columns)
    assert columns[10:14] == ["epsilon_lb_claim_first_step", "epsilon_lb_claim", "test", "epsilon_lb_ceiling_claim"]
    # then the share of right guesses (first step, and after the algorithm with its interval and the
    # paper-size extrapolation), Theorem 4.2's after them
    assert columns[14:20] == ["guess_fraction_first_step", *schemas.GUESS_COLUMNS, "epsilon_lb_theorem42_first_step"]
    assert table.loc["mc_a", "cell"] == "r=4, mean, logit" and table.loc["mc_b", "split"] == "adversarial"
    # runs that recorded different noisy-step counts, or two reported rows, are refused
    with pytest.raises(ValueError, match="recorded different noisy_steps"):
        table6_frame(bounds, steps, pd.DataFrame(_metrics("mc_a", 40) + _metrics("mc_a", 41) + _metrics("mc_b", 10)), MC)
    with pytest.raises(ValueError, match="expected one reported final row, found 2"):
        table6_frame(pd.concat([bounds, bounds.iloc[[0]]]), steps, metrics, MC)


def test_table6_puts_the_accuracies_and_flags_beside_each_bound_and_the_controls_beside_the_method():
    flags = {"at_ceiling": [False, True], "at_ceiling_claim": [True, True]}
    bounds = pd.DataFrame([_bound("mc_a", 0.4), _bound("ctl", 2.6, delta=0.0)]).assign(**flags)
    steps = pd.DataFrame([_bound("mc_a", 0.7, step=1), _bound("mc_a", 0.2, step=20)]).assign(at_ceiling=[True, False], at_ceiling_claim=[False, False])
    metrics = pd.DataFrame(_metrics("mc_a", 40) + [{"experiment": "ctl", "phase": "eval", "record": "{}"}])
    diagnostics = pd.DataFrame([{"experiment": "mc_a", "retain_acc": 0.9, "forget_acc": 0.11, "test_acc": 0.1, "at_chance": True, "no_op": False,
                                 "no_power": False, "not_forgotten": False},
                                {"experiment": "ctl", "retain_acc": 1.0, "forget_acc": 1.0, "test_acc": 0.97, "at_chance": False, "no_op": False,
                                 "no_power": False, "not_forgotten": False}])
    at_steps = pd.DataFrame([{"experiment": "mc_a", "step": 1, "test_acc": 0.5, "forget_acc": 0.6, "at_chance": False, "no_op": True, "not_forgotten": True},
                             {"experiment": "mc_a", "step": 20, "test_acc": 0.2, "forget_acc": 0.2, "at_chance": True, "no_op": False, "not_forgotten": False}])
    table = table6_frame(bounds, steps, metrics, {"mc_a": MC["mc_a"], **CONTROL}, diagnostics, at_steps).set_index("method")
    assert table.loc["MC", ["test_acc_first_step", "forget_acc_first_step", "test_acc", "forget_acc", "at_chance"]].tolist() == [0.5, 0.6, 0.1, 0.11, True]
    # the first step's own flags and ceiling marks, beside the final models' (the marks come from the pipeline), each bound by its own
    assert table.loc["MC", ["at_chance_first_step", "no_op_first_step", "not_forgotten_first_step"]].tolist() == [False, True, True]
    assert table.loc["MC", ["at_ceiling_theorem42_first_step", "at_ceiling_claim_first_step", "at_ceiling_theorem42", "at_ceiling_claim"]].tolist() == \
        [True, False, False, True]
    assert table.loc["No unlearning", "epsilon_lb_theorem42"] == 2.6 and np.isnan(table.loc["No unlearning", "epsilon_lb_theorem42_first_step"])
    assert not table.loc["No unlearning", "at_chance"] and table.loc["No unlearning", "at_ceiling_theorem42"]
    assert list(table.columns[-5:]) == ["at_ceiling_claim_first_step", "at_ceiling_theorem42_first_step", "at_ceiling_claim", "at_ceiling_theorem42", "cell"]
    # Figure 1a: the control is one row without a step (drawn as a horizontal line), the steps carry their accuracies and flags
    frame = figure1a_frame(steps, {"mc_a": MC["mc_a"], **CONTROL}, bounds=bounds, diagnostics=diagnostics, step_diagnostics=at_steps)
    assert frame.step.tolist()[:2] == [1, 20] and frame.test_acc.tolist() == [0.5, 0.2, 0.97]
    assert frame.at_chance.tolist() == [False, True, False] and frame.no_op.tolist() == [True, False, False]
    assert frame.not_forgotten.tolist() == [True, False, False]
    assert frame.at_ceiling_theorem42.tolist() == [True, False, True] and frame.at_ceiling_claim.tolist() == [False, False, True]
    assert frame.no_power.tolist() == [False, False, False]
    assert np.isnan(frame.step.iloc[2]) and frame.method.iloc[2] == "No unlearning" and frame.epsilon_lb_theorem42.iloc[2] == 2.6
    assert frame.epsilon_lb_claim.tolist() == pytest.approx([1.1 * 0.7, 1.1 * 0.2, 1.1 * 2.6])  # the claim, plotted
    assert list(frame.columns[5:11]) == ["epsilon_lb_claim", "test", "ceiling_claim", "at_ceiling_claim", "guess_fraction", "epsilon_lb_bonferroni_steps"]
    assert frame.guess_fraction.isna().all()  # bounds without a mean overlap
    with_overlap = figure1a_frame(steps.assign(mean_overlap=3.0), {"mc_a": MC["mc_a"]})
    assert with_overlap.guess_fraction.tolist() == [0.75, 0.75]  # mean overlap / r, r = m = 4


def test_figure1a_lists_every_reported_step_in_order_with_the_ceiling():
    steps = pd.DataFrame([_bound("mc_a", 1.5, step=20), _bound("mc_a", 0.7, step=1), _bound("mc_a", 8.0, step=1, role="exploratory")])
    frame = figure1a_frame(steps, {"mc_a": MC["mc_a"]}, ceilings={"mc_a": 3.2}, claim_ceilings={"mc_a": 4.5})
    assert frame.step.tolist() == [1, 20] and frame.epsilon_lb_theorem42.tolist() == [0.7, 1.5] and set(frame.ceiling_theorem42) == {3.2}
    assert frame.epsilon_lb_claim.tolist() == pytest.approx([0.77, 1.65]) and set(frame.ceiling_claim) == {4.5}
    assert figure1a_frame(steps.iloc[:0], {"mc_a": MC["mc_a"]}).empty


def test_figure1b_and_1c_take_the_joint_row_or_the_pairwise_row_of_the_preregistered_score():
    experiments = {"r2d": {"split": "uniform", "auditor": "joint", "label": "R2D", "params": {"epsilon": 10.0}},
                   "r2d_pair": {"split": "uniform", "auditor": "pairwise", "label": "R2D", "score": "loss", "params": {"epsilon": 10.0}}}
    bounds = pd.DataFrame([_bound("r2d", 1.25, delta=1e-3)])
    pairwise = pd.DataFrame([{"experiment": "r2d_pair", "score": s, "delta": 1e-3, "epsilon_lb": v, "test": "eq3", "epsilon_lb_test": v}
                             for s, v in (("logit", 0.9), ("loss", 0.3))])
    b = figure1b_frame(bounds, pairwise, experiments).set_index("experiment")
    assert b.epsilon_lb_claim.to_dict() == {"r2d": pytest.approx(1.375), "r2d_pair": 0.3}
    # beside the claim, each auditor's own bound: Theorem 4.2's for the joint one, Eq. 3's for the pairwise one
    assert b.loc["r2d", "epsilon_lb_theorem42"] == 1.25 and np.isnan(b.loc["r2d", "epsilon_lb_eq3"])
    assert b.loc["r2d_pair", "epsilon_lb_eq3"] == 0.3 and np.isnan(b.loc["r2d_pair", "epsilon_lb_theorem42"])
    c = figure1c_frame(bounds, {"r2d": experiments["r2d"]})
    assert c.target_epsilon.tolist() == [10.0] and c.epsilon_lb_theorem42.tolist() == [1.25] and c.epsilon_lb_claim.tolist() == [pytest.approx(1.375)]


def test_ceilings_are_the_perfect_prediction_bound_of_each_experiments_design():
    steps = pd.DataFrame([_bound("a", 0.1, step=1, m=4, L=8), _bound("a", 0.2, step=2, m=4, L=8), _bound("b", 0.0, step=1, m=6, L=30, delta=0.0)])
    got = ceilings(steps)
    assert got == {"a": perfect_prediction_bound(4, 4, 8, zeta=0.05, delta=1e-5).epsilon_lb,
                   "b": perfect_prediction_bound(6, 6, 30, zeta=0.05, delta=0.0).epsilon_lb}
    assert np.isfinite(list(got.values())).all() and got["b"] > got["a"] > 0
    # the claim's own: its test's (here the reference test's) at the certified delta, never below Theorem 4.2's
    claims = claim_ceilings(steps)
    assert claims == {"a": claim_ceiling(4, 4, 8, test="reference", delta=1e-5, delta_kind="unlearning"),
                      "b": claim_ceiling(6, 6, 30, test="reference", delta_kind="unlearning")}
    assert claims["a"] > got["a"] and claims["b"] > got["b"]
    # each bound is marked against its own test's ceiling
    on = pd.DataFrame([_bound("a", got["a"], epsilon_lb_test=claims["a"]), _bound("b", got["b"] / 2, epsilon_lb_test=claims["b"] / 2)])
    marked = mark_ceilings(on, got, claims)
    assert marked.at_ceiling.tolist() == [True, False] and marked.at_ceiling_claim.tolist() == [True, False]


def test_table6_and_figures_1b_1c_carry_the_ceiling_of_each_bound():
    from unlearn_audit.pipeline.certified import pairwise_ceilings, pairwise_claim_ceilings
    from unlearn_audit.stats.bounds import pairwise_unlearning_epsilon_lower_bound

    bounds = pd.DataFrame([_bound("mc_a", 0.4), _bound("mc_b", 2.5, m=6, L=30)])
    steps = pd.DataFrame([_bound("mc_a", 0.7, step=1)])
    metrics = pd.DataFrame(_metrics("mc_a", 40) + _metrics("mc_b", 10))
    table = table6_frame(bounds, steps, metrics, MC, ceilings=ceilings(bounds), claim_ceilings=claim_ceilings(bounds)).set_index(pd.Index(list(MC)))
    assert table.loc["mc_a", "epsilon_lb_ceiling_theorem42"] == perfect_prediction_bound(4, 4, 8, zeta=0.05, delta=1e-5).epsilon_lb
    assert table.loc["mc_b", "epsilon_lb_ceiling_theorem42"] > table.loc["mc_a", "epsilon_lb_ceiling_theorem42"]
    assert (table.epsilon_lb_theorem42 <= table.epsilon_lb_ceiling_theorem42).all()
    # the claim's own ceiling: the reference test at the certified delta, every guess right
    want = claim_ceiling(4, 4, 8, test="reference", zeta=0.05, delta=1e-5, delta_kind="unlearning")
    assert table.loc["mc_a", "epsilon_lb_ceiling_claim"] == want > table.loc["mc_a", "epsilon_lb_ceiling_theorem42"]
    # the pairwise auditor's ceiling: Eq. 3 with no error in its n_neg + n_pos decisions
    pairwise = pd.DataFrame([{"experiment": "r2d_pair", "score": "loss", "fp": 3, "n_neg": 40, "fn": 5, "n_pos": 40, "zeta": 0.05,
                              "delta": 1e-3, "epsilon_lb": 0.3, "test": "eq3", "epsilon_lb_test": 0.3}])
    limit = pairwise_ceilings(pairwise)["r2d_pair"]
    assert limit == pairwise_unlearning_epsilon_lower_bound(0, 40, 0, 40, zeta=0.05, delta=1e-3).epsilon_lb and limit > 0.3
    experiments = {"r2d": {"split": "uniform", "auditor": "joint", "label": "R2D", "params": {"epsilon": 10.0}},
                   "r2d_pair": {"split": "uniform", "auditor": "pairwise", "label": "R2D", "score": "loss", "params": {"epsilon": 10.0}}}
    r2d = pd.DataFrame([_bound("r2d", 1.25, delta=1e-3)])
    limits = {**ceilings(r2d), "r2d_pair": limit}
    claims = {**claim_ceilings(r2d), **pairwise_claim_ceilings(pairwise)}
    assert claims["r2d_pair"] == limit  # an Eq. 3 claim's ceiling is Eq. 3's
    b = figure1b_frame(r2d, pairwise, experiments, ceilings=limits, claim_ceilings=claims).set_index("experiment")
    assert b.ceiling_theorem42.dropna().to_dict() == {"r2d": ceilings(r2d)["r2d"]} and b.ceiling_eq3.dropna().to_dict() == {"r2d_pair": limit}
    assert b.ceiling_claim.to_dict() == claims
    c = figure1c_frame(r2d, {"r2d": experiments["r2d"]}, ceilings=limits, claim_ceilings=claims)
    assert c.ceiling_theorem42.tolist() == [ceilings(r2d)["r2d"]] and c.ceiling_claim.tolist() == [claims["r2d"]]


def test_nearly_equal_ceilings_share_one_line():
    from unlearn_audit.report.certified import _ceiling_groups

    assert _ceiling_groups([2.599, 2.591, 0.70, 0.6976]) == [(0.6976, 0.70), (2.591, 2.599)]
    assert _ceiling_groups([1.0, 2.0]) == [(1.0, 1.0), (2.0, 2.0)]


def test_figure1a_carries_the_bonferroni_over_steps_reading():
    steps = pd.DataFrame([_bound("mc_a", 1.5, step=20, epsilon_lb_bonferroni_steps=1.1), _bound("mc_a", 0.7, step=1, epsilon_lb_bonferroni_steps=0.3)])
    frame = figure1a_frame(steps, {"mc_a": MC["mc_a"]})
    assert frame.epsilon_lb_bonferroni_steps.tolist() == [0.3, 1.1] and frame.step.tolist() == [1, 20]
    legacy = figure1a_frame(steps.drop(columns="epsilon_lb_bonferroni_steps"), {"mc_a": MC["mc_a"]})
    assert legacy.epsilon_lb_bonferroni_steps.isna().all()  # checkpoint bounds written before the column


def test_table6_row2_shows_the_steps_it_ran_and_the_steps_its_target_needs():
    """A certified row: the accountant's steps are its noisy steps; the row whose whole budget ran noisy
    (Table 6 row 2, the paper's "N/A"): uncertified, with the steps its target would have needed."""
    experiments = {"mc_a": MC["mc_a"], "row2": {"split": "uniform", "variant": "uncertified", "label": "MC eps=10, all noisy",
                                                "params": {"epsilon": 10.0, "C2": 0.1, "sigma": 0.02}}}
    bounds = pd.DataFrame([_bound("mc_a", 0.4), _bound("row2", 0.0)])
    steps = pd.DataFrame([_bound("mc_a", 0.1, step=1), _bound("row2", 0.0, step=1)])
    record = lambda **v: [{"experiment": e, "phase": "eval", "record": json.dumps(v)} for e in [v.pop("experiment")]]
    metrics = pd.DataFrame(record(experiment="mc_a", noisy_steps=40, certified=1.0)
                           + record(experiment="row2", noisy_steps=15850, certified=0.0, accountant_steps=48004))
    table = table6_frame(bounds, steps, metrics, experiments).set_index(pd.Index(list(experiments)))
    assert table.loc["mc_a", ["noisy_steps", "accountant_steps", "certified"]].tolist() == [40, 40, True]
    assert table.loc["row2", ["noisy_steps", "accountant_steps", "certified", "epsilon"]].tolist() == [15850, 48004, False, 10.0]


def test_the_pairwise_table_reports_the_preregistered_score_and_its_ceiling():
    from unlearn_audit.pipeline.certified import pairwise_ceilings, pairwise_claim_ceilings
    from unlearn_audit.report.certified import pairwise_table_frame

    experiments = {"ft": {"split": "uniform", "label": "FT", "score": "loss", "variant": "uncertified", "params": {"epochs": 2}},
                   "ctl": {"split": "uniform", "label": "No unlearning", "score": "logit", "variant": "control", "params": {}}}
    row = lambda e, s, fp, fn, eps: {"experiment": e, "auditor": "pairwise", "score": s, "fp": fp, "n_neg": 5, "fn": fn, "n_pos": 5,
                                     "zeta": 0.05, "delta": 0.0, "epsilon_lb": eps, "mu_lb": 0.0, "epsilon_lb_reference": 0.5 if fp + fn == 0 else 0.0,
                                     "test": "reference", "epsilon_lb_test": 0.5 if fp + fn == 0 else 0.0}
    pairwise = pd.DataFrame([row("ft", "logit", 0, 0, 0.0), row("ft", "loss", 2, 1, 0.0), row("ctl", "logit", 0, 0, 0.0), row("ctl", "loss", 0, 0, 0.0)])
    limits, claims = pairwise_ceilings(pairwise), pairwise_claim_ceilings(pairwise)
    table = pairwise_table_frame(mark_ceilings(pairwise, limits, claims), experiments, ceilings=limits, claim_ceilings=claims).set_index("method")
    assert table.loc["FT", ["fp", "fn", "L", "score"]].tolist() == [2, 1, 10, "loss"]  # the pre-registered score's row
    assert table.loc["FT", "params"] == "epochs=2" and table.loc["No unlearning", "params"] == ""
    # the claim first: the reference test pre-registered here, with its own ceiling (every guess right at L = 10)
    assert list(table.columns[3:6]) == ["epsilon_lb_claim", "test", "epsilon_lb_ceiling_claim"]
    assert table.loc["No unlearning", "epsilon_lb_claim"] == 0.5 and table.loc["FT", "epsilon_lb_claim"] == 0.0
    reference_ceiling = claim_ceiling(2, 2, 10, test="reference", zeta=0.05, delta_kind="unlearning")
    assert table.epsilon_lb_ceiling_claim.tolist() == [reference_ceiling] * 2 and reference_ceiling > 0.6
    # the paper's point: at L = 10 (5 + 5 runs) even no error at all gives a zero bound for Eq. 3, beside the claim
    assert table.epsilon_lb_ceiling_eq3.tolist() == [0.0, 0.0] and not table.at_ceiling_eq3.any()
    assert table.loc["No unlearning", "epsilon_lb_reference"] == 0.5 and "reference test of the m = 2 overlaps" in table.loc["FT", "cell"]


def test_table6_carries_each_cells_share_of_right_guesses_with_its_interval():
    from unlearn_audit.pipeline.nn import with_guesses
    from unlearn_audit.stats.guesses import guess_fraction

    bounds = pd.DataFrame([_bound("mc_a", 0.4, mean_overlap=3.0), _bound("mc_b", 2.5, mean_overlap=4.0)])
    steps = pd.DataFrame([_bound("mc_a", 0.7, step=1, mean_overlap=2.0), _bound("mc_b", 3.0, step=5, mean_overlap=4.0)])
    metrics = pd.DataFrame(_metrics("mc_a", 40) + _metrics("mc_b", 10))
    per_run = {"mc_a": [2, 3, 4, 3], "mc_b": [4, 4, 4, 4]}  # right guesses of r = 4 in each evaluation run
    overlaps = pd.DataFrame([{"experiment": e, "auditor": "joint", "score": "logit", "run": i, "r": 4, "overlap": v}
                             for e, values in per_run.items() for i, v in enumerate(values)])
    experiments = {name: {**e, "dataset": "digits"} for name, e in MC.items()}
    table = table6_frame(with_guesses(bounds, overlaps, experiments), with_guesses(steps, None, experiments), metrics, experiments)
    table = table.set_index(pd.Index(list(MC)))
    assert table.loc["mc_a", "guess_fraction_first_step"] == 0.5 and table.loc["mc_b", "guess_fraction_first_step"] == 1.0
    assert tuple(table.loc["mc_a", list(schemas.GUESS_COLUMNS[:3])]) == pytest.approx(guess_fraction(per_run["mc_a"], 4))
    low, high = table.loc["mc_a", ["guess_fraction_low", "guess_fraction_high"]]
    assert low < 0.75 < high and table.loc["mc_b", "guess_fraction_low"] == 1.0
    # the extrapolation to the paper's audit size grows with the share of right guesses
    assert 0 <= table.loc["mc_a", "epsilon_lb_theorem42_at_paper_size"] < table.loc["mc_b", "epsilon_lb_theorem42_at_paper_size"]
    # bounds without overlaps: the readings are NaN, never a guess
    bare = table6_frame(bounds, steps, metrics, experiments)
    assert bare[list(schemas.GUESS_COLUMNS)].isna().all().all()
