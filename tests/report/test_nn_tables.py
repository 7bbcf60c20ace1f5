"""The neural-network tables and the ε-vs-r figure report the pre-registered cell (report/nn_tables.py,
report/nn_figures.py; §5 "One test, one level"): Tables 1, 3, 4, 5 and 7 show the row the config fixed
before the run (or the Bonferroni-selected one, tested at ζ/K) and label every cell's role.

Bounds come from simulated overlaps through the real code path (``bounds_table``).
"""

import numpy as np
import pandas as pd
import pytest

from batchwise_audits import M, R_VALUES, L, overlaps_frame
from unlearn_audit.auditors.audit import bounds_table
from unlearn_audit.report.nn_figures import epsilon_vs_r_figure
from unlearn_audit.pipeline.diagnostics import experiment_diagnostics
from unlearn_audit.report.nn_tables import table1, table3, table4, table5, table7
from unlearn_audit.stats.selection import Cell

ZETA = 0.05


def _bounds_and_metrics(primary: Cell | None = None, selection: str = "preregistered"):
    rng = np.random.default_rng(5)
    frames = [bounds_table(overlaps_frame(rng, signal=s, experiment=name), M, zeta=ZETA, selection=selection,
                           primary=primary or Cell(40, "mean", "logit"))
              for name, s in (("a", 0.8), ("b", 0.3))]
    bounds = pd.concat(frames, ignore_index=True)
    metrics = pd.DataFrame([{"experiment": e, "phase": "eval", "run": i, "retain_acc": 0.9, "forget_acc": 0.8, "test_acc": 0.7,
                             "n_test": 300, "n_forget": 50, "chance_acc": 0.1}
                            for e in ("a", "b") for i in range(L)])
    experiments = {
        name: {"design": "d", "dataset": "digits", "split": "uniform", "batch_size": bs, "m": M, "method": "forget_ascent",
               "label": f"method {name}", "params": {"sigma": sigma}, "report_r": (primary.r if primary else 40), "r": list(R_VALUES)}
        for name, bs, sigma in (("a", 1, 0.1), ("b", 2, 0.2))
    }
    return bounds, metrics, experiments


_FLAGS = ["retain_acc", "forget_acc", "test_acc", "at_chance", "no_op", "no_power", "not_forgotten"]


def test_tables_report_the_preregistered_row_and_label_cells(tmp_path):
    bounds, metrics, experiments = _bounds_and_metrics()
    diagnostics = experiment_diagnostics(bounds, metrics, experiments)
    t1 = table1(bounds, metrics, experiments, diagnostics)
    assert list(t1.columns) == ["method", "params", "dataset", "split", "epsilon_lb_claim", "test", "epsilon_lb_theorem42", "epsilon_ldp", "epsilon_lb_exact",
                                "mu_lb", "r", "m", "L", *_FLAGS, "cell"]
    assert (t1.test_acc == 0.7).all() and not t1.at_chance.any() and not t1.no_op.any()  # no control here: no no-op verdict
    for _, row in t1.iterrows():
        name = row.method.split()[-1]
        want = bounds[(bounds.experiment == name) & (bounds.role == "preregistered")].iloc[0]
        assert (want.r, want.score, want.statistic) == (40, "logit", "mean")  # the default cell
        assert row.epsilon_lb_claim == want.epsilon_lb_test and row.test == want.test == "theorem4.2"
        assert row.epsilon_lb_theorem42 == want.epsilon_lb and row.epsilon_ldp == want.epsilon_ldp and row.r == 40
        assert row.epsilon_lb_exact == want.epsilon_lb_exact and row.mu_lb == want.mu_lb
        assert row.cell == "preregistered: logit/mean"
    t7 = table7(bounds, metrics, experiments, diagnostics)
    assert list(t7.columns) == ["method", "sigma", "split", "epsilon_lb_claim", "test", "epsilon_lb_theorem42", "epsilon_ldp", "epsilon_lb_exact",
                                "mu_lb", "r", "m", "L", *_FLAGS, "cell"]
    assert set(t7.epsilon_lb_claim) == set(t1.epsilon_lb_claim) and set(t7.cell) == {"preregistered: logit/mean"}

    t3, t4, t5 = (f(bounds, metrics, experiments) for f in (table3, table4, table5))
    assert list(t3.columns) == ["method", "split", "r", "epsilon_lb_claim_logit", "epsilon_lb_claim_loss", "test", "epsilon_lb_theorem42_logit",
                                "epsilon_lb_theorem42_loss", "cell"]
    assert list(t4.columns) == ["method", "split", "r", "epsilon_lb_claim_mean", "epsilon_lb_claim_median", "test", "epsilon_lb_theorem42_mean",
                                "epsilon_lb_theorem42_median", "cell"]
    assert list(t5.columns) == ["batch_size", "m", "method", "r", "r_times_B", "epsilon_lb_claim", "test", "epsilon_lb_theorem42", "epsilon_ldp", "cell"]
    for t in (t3, t4):
        assert (t.loc[t.r == 40, "cell"] == "preregistered: logit/mean").all()
        assert (t.loc[t.r != 40, "cell"] == "exploratory").all()
    assert (t5.loc[t5.r == 40, "cell"] == "preregistered").all() and (t5.loc[t5.r != 40, "cell"] == "exploratory").all()

    # a non-default pre-registered cell: Table 1 follows the role, Table 4 names the column
    bounds, metrics, experiments = _bounds_and_metrics(primary=Cell(20, "median", "logit"))
    t1 = table1(bounds, metrics, experiments)
    assert t1.r.tolist() == [20, 20] and set(t1.cell) == {"preregistered: logit/median"}
    want = bounds[(bounds.experiment == "a") & (bounds.r == 20) & (bounds.statistic == "median") & (bounds.score == "logit")]
    assert t1.epsilon_lb_theorem42.iloc[0] == want.epsilon_lb.iloc[0] and t1.epsilon_lb_claim.iloc[0] == want.epsilon_lb_test.iloc[0]
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


def test_every_table_leads_with_the_claim_and_changes_no_bound():
    """Pre-registered under the reference test, each table's claim columns are the BOUNDS rows'
    epsilon_lb_test of the cells they show (larger than Theorem 4.2's, which stand beside them,
    unchanged), and the row that reports the claim names its test."""
    from unlearn_audit.report.nn_tables import appendix_f4

    bounds, metrics, experiments = _bounds_and_metrics(primary=Cell(40, "mean", "logit", "reference"))
    cell = lambda name, r, score="logit", statistic="mean": bounds[(bounds.experiment == name) & (bounds.r == r) & (bounds.score == score)  # noqa: E731
                                                                   & (bounds.statistic == statistic)].iloc[0]
    for render in (table1, table7, appendix_f4):
        t = render(bounds, metrics, experiments).set_index("method")
        claim = t.columns.get_loc("epsilon_lb_claim")
        assert t.columns[claim + 1] == "test" and claim < t.columns.get_loc("epsilon_lb_theorem42") < t.columns.get_loc("r")
        for name in experiments:
            row, want = t.loc[f"method {name}"], cell(name, 40)
            assert row.epsilon_lb_claim == want.epsilon_lb_test and row.epsilon_lb_theorem42 == want.epsilon_lb and row.test == "reference"
            assert row.cell == "preregistered: logit/mean (reference test)"
    assert (table1(bounds, metrics, experiments).epsilon_lb_claim > table1(bounds, metrics, experiments).epsilon_lb_theorem42).all()
    t3, t4, t5 = (f(bounds, metrics, experiments) for f in (table3, table4, table5))
    for row in t3.itertuples():
        name = row.method.split()[-1]
        assert (row.epsilon_lb_claim_logit, row.epsilon_lb_claim_loss) == (cell(name, row.r).epsilon_lb_test, cell(name, row.r, "loss").epsilon_lb_test)
        assert (row.epsilon_lb_theorem42_logit, row.epsilon_lb_theorem42_loss) == (cell(name, row.r).epsilon_lb, cell(name, row.r, "loss").epsilon_lb)
    for row in t4.itertuples():
        name = row.method.split()[-1]
        assert row.epsilon_lb_claim_median == cell(name, row.r, statistic="median").epsilon_lb_test and row.test == "reference"
    for row in t5.itertuples():
        assert row.epsilon_lb_claim == cell(row.method.split()[-1], row.r).epsilon_lb_test
    # a row labelled with the reference test shows the reference test's number first
    labelled = t3[t3.cell.str.contains("reference test")]
    assert len(labelled) == 2 and (labelled.epsilon_lb_claim_logit == [cell(n, 40).epsilon_lb_test for n in ("a", "b")]).all()


def test_appendix_f4_reports_each_method_at_its_first_checkpoint_step_and_a_control_as_trained():
    from unlearn_audit.report.nn_tables import NN_TABLES, appendix_f4

    bounds, metrics, experiments = _bounds_and_metrics()
    experiments["b"]["auditor"] = "joint"
    # method a has checkpoint bounds at steps 1 and 40 (its reported cell at each), b has none (a control-like row)
    steps = pd.concat([bounds[bounds.experiment == "a"].assign(step=t, epsilon_lb=bounds[bounds.experiment == "a"].epsilon_lb + t)
                       for t in (40, 1)], ignore_index=True)
    step_diag = pd.DataFrame([{"experiment": "a", "step": t, "test_acc": acc, "forget_acc": acc, "at_chance": t == 40, "no_op": t == 1,
                               "not_forgotten": False}
                              for t, acc in ((1, 0.95), (40, 0.1))])
    diagnostics = experiment_diagnostics(bounds, metrics, experiments)
    f4 = appendix_f4(bounds, metrics, experiments, diagnostics, steps=steps, step_diagnostics=step_diag).set_index("method")
    assert f4.index.tolist() == ["method b", "method a"] and f4.batch_size.tolist() == [2, 1]  # the largest batch first
    final_a = bounds[(bounds.experiment == "a") & (bounds.role == "preregistered")].iloc[0]
    # a: its first step's bound and flags, the final models' claim beside it; b: audited as it is
    assert f4.loc["method a", "step"] == 1 and f4.loc["method a", "epsilon_lb_theorem42"] == final_a.epsilon_lb + 1
    assert f4.loc["method a", "epsilon_lb_claim_final"] == final_a.epsilon_lb_test
    assert f4.loc["method a", ["test_acc", "no_op", "at_chance", "not_forgotten"]].tolist() == [0.95, True, False, False]
    assert np.isnan(f4.loc["method b", "step"]) and f4.loc["method b", "epsilon_lb_claim"] == f4.loc["method b", "epsilon_lb_claim_final"]
    assert f4.loc["method b", "auditor"] == "joint" and f4.loc["method a", "auditor"] == "batchwise"
    assert f4.loc["method b", "test_acc"] == 0.7 and set(f4.cell) == {"preregistered: logit/mean"}
    # two reported rows at the first step are refused
    with pytest.raises(ValueError, match="first checkpoint step"):
        appendix_f4(bounds, metrics, experiments, diagnostics, steps=pd.concat([steps, steps[(steps.step == 1) & (steps.role == "preregistered")]]), step_diagnostics=step_diag)
    assert NN_TABLES["appendix_f4"][0] is appendix_f4 and "App. F.4" in NN_TABLES["appendix_f4"][1]

def test_llm_qa_shows_tofus_metrics_and_privleak_only_against_the_designs_retrain():
    """The language-model table: Table 1's row with TOFU's metrics (schemas.QA_COLUMNS) after the
    accuracies and flags; privleak against the design's Retrain AUC, NaN (flagged no_retrain) where
    the design has none -- never against a stand-in AUC of 0.5."""
    from unlearn_audit.auditors.membership_metrics import privleak
    from unlearn_audit.auditors.qa_metrics import experiment_columns
    from unlearn_audit.pipeline.nn import with_membership
    from unlearn_audit.report.nn_tables import llm_qa
    from unlearn_audit.schemas import MEMBERSHIP_COLUMNS, QA_COLUMNS

    bounds, metrics, experiments = _bounds_and_metrics()
    membership = pd.DataFrame([{"experiment": e, "score": "logit", **{c: auc for c in MEMBERSHIP_COLUMNS if not c.startswith("few_")},
                                "few_negatives_0.1pct": False, "auc_draws": [auc] * 10, "evaluation_runs": L}
                               for e, auc in (("a", 0.8), ("b", 0.6))])
    alone = with_membership(bounds, membership, {"a": None, "b": None})
    assert alone.privleak.isna().all() and privleak(0.8, 0.5) == pytest.approx(-60.0)  # what a 0.5 stand-in would have said
    against = with_membership(bounds, membership, {"a": "b", "b": None})
    assert against[(against.experiment == "a") & (against.score == "logit")].privleak.to_list() == pytest.approx([privleak(0.8, 0.6)] * 8)

    runs = pd.DataFrame([{"experiment": e, "phase": "eval", "run": i, **{c: 0.25 for c in QA_COLUMNS[:9]}, "model_utility": 0.25,
                          "answer_loss": 1.0, "vocab_size": 100, "forget_truth_ratios": [0.5, 1.0]} for e in experiments for i in range(L)])
    diagnostics = experiment_diagnostics(bounds, metrics, experiments)
    assert llm_qa(alone, metrics, experiments, diagnostics).equals(table1(alone, metrics, experiments, diagnostics))  # no QA runs: Table 1
    t = llm_qa(alone, metrics, experiments, diagnostics.merge(experiment_columns(runs, experiments), on="experiment"))
    cols = list(t.columns)
    assert cols[cols.index("not_forgotten") + 1 : cols.index("cell")] == list(QA_COLUMNS)
    assert (t.retain_rouge_l == 0.25).all() and t.no_retrain.all() and t.forget_quality.isna().all() and t.privleak.isna().all()
    assert not t.damaged.any() and t.dtypes["damaged"] == bool
