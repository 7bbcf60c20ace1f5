"""What a config runs (pipeline/plan/, WorkflowPlan): the pre-registered cell, chunks of runs,
unlearning groups, joint designs, the certified delta of a claim, targets and input functions,
on the default config."""

from __future__ import annotations

import copy
from pathlib import Path
import re
from types import SimpleNamespace

import pytest
import yaml

from unlearn_audit.pipeline.config import load_yaml, validate_config
from unlearn_audit.pipeline.plan import NN_TABLES, WorkflowPlan, audit_delta, preregistered_cell
from unlearn_audit.stats.selection import DEFAULT_CELL, Cell
from unlearn_audit.stats.signs import num_sign_vectors
from workflow_utils import REPO

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


def test_preregistered_cell_defaults_to_largest_r_mean_logit_reference():
    assert preregistered_cell({"r": [5, 50, 20]}) == Cell(50, "mean", "logit", "reference")
    schema = load_yaml(SCHEMA)["$defs"]["experiment"]["properties"]
    assert schema["test"]["default"] == DEFAULT_CELL["test"] == "reference"  # the config's default is the one the plan assumes


def test_preregistered_cell_uses_explicit_values():
    cell = preregistered_cell({"r": [5, 50, 20], "report_r": 20, "statistic": "median", "score": "loss", "test": "theorem4.2"})
    assert cell == Cell(20, "median", "loss", "theorem4.2")
    assert isinstance(cell.r, int)
    assert preregistered_cell({"r": [5, 50], "report_r": None}) == Cell(50, "mean", "logit", "reference")
    assert preregistered_cell({"r": [5, 50], "score": "loss"}) == Cell(50, "mean", "loss", "reference")


def _plan(overrides: dict | None = None) -> WorkflowPlan:
    cfg = yaml.safe_load((REPO / "config" / "config.yaml").read_text())
    for section, values in (overrides or {}).items():
        cfg[section].update(values)
    return WorkflowPlan(validate_config(cfg, SCHEMA))


def test_plan_chunks_cover_every_run_once():
    plan = _plan()
    for design in plan.nn.used_designs():
        cfg = plan.nn.design(design)
        trained = [key for d, c, chunk in plan.nn.design_chunks() if d == design and c != "retrain" for key in chunk]
        # every design with experiments has its Retrain control, whose A(D_r) is trained once, in a job of its own
        assert [chunk for d, c, chunk in plan.nn.design_chunks() if d == design and c == "retrain"] == [[("retrain", 0)]], design
        if plan.nn.is_joint(design):
            # one base model per candidate S̃ ∈ S_m, Γ calibration runs per candidate
            k = num_sign_vectors(cfg["m"])
            assert trained == [("candidate", rank) for rank in range(k)] and k == {6: 20, 2: 2}[cfg["m"]], design
            assert plan.nn.phase_runs(design, "calib") == list(range(k * cfg["calibration_runs"]))
        else:  # the calibration runs, then the evaluation runs, in chunks that may hold both
            assert trained == [("calib", r) for r in range(cfg["calibration_runs"])] + [("eval", r) for r in range(cfg["evaluation_runs"])], design
        assert all(len(chunk) <= cfg["chunk_size"] for d, _, chunk in plan.nn.design_chunks() if d == design)
    for experiment in plan.nn.experiments():
        design = plan.nn.design_of(experiment)
        keys = [key for g, _, chunk in plan.nn.experiment_chunks() if experiment in g for key in chunk]
        assert keys == plan.nn.run_keys(design), experiment
        for phase in ("calib", "eval"):
            assert [run for ph, run in keys if ph == phase] == plan.nn.phase_runs(design, phase), (experiment, phase)
    assert sorted(e for g in plan.nn.unlearn_groups() for e in g) == sorted(plan.nn.experiments())


def test_plan_groups_experiments_that_differ_only_in_the_noise_release():
    """Table 7's Hessian sigma variants share their LiSSA step, the R2D target-epsilon variants of a
    design their descent; experiments on other designs or with other parameters never do."""
    plan = _plan()
    groups = {g[0]: g for g in plan.nn.unlearn_groups()}
    assert groups["digits_uniform_hessian_s1e3"] == ["digits_uniform_hessian_s1e3", "digits_uniform_hessian_s5e3", "digits_uniform_hessian_s1e2"]
    assert groups["digits_adversarial_hessian_s1e3"] == ["digits_adversarial_hessian_s1e3"]  # another design
    assert groups["digits_r2d_eps1_uniform"] == ["digits_r2d_eps1_uniform", "digits_r2d_eps1e2_uniform", "digits_r2d_eps1e4_uniform"]
    assert groups["digits_r2d_pairwise_eps1"] == ["digits_r2d_pairwise_eps1", "digits_r2d_pairwise_eps1e2", "digits_r2d_pairwise_eps1e4"]
    assert all(len(g) == 1 for g in groups.values() if plan.nn.experiment(g[0])["method"] not in ("hessian", "rewind_to_delete"))
    assert plan.nn.release_key("digits_uniform_ida_q1") is None
    # one job writes every experiment's files of its runs, experiment by experiment, in the group's chunk folder
    chunk = [c for g, c, _ in plan.nn.experiment_chunks() if g[0] == "digits_r2d_eps1_uniform"][0]
    job = plan.nn.unlearn_job(SimpleNamespace(group="digits_r2d_eps1_uniform", chunk=chunk))
    n = len(plan.nn.run_keys("digits_r2d_uniform"))
    assert [f.split("/")[-4] for f in job["scores"]] == sum(([e] * n for e in groups["digits_r2d_eps1_uniform"]), [])
    assert all(f.startswith(f"{plan.results}/digits_r2d_eps1_uniform/runs/{chunk}/") for f in job["scores"] + job["metrics"])
    assert job["experiments"] == groups["digits_r2d_eps1_uniform"] and job["checkpoints"] is None
    assert plan.nn.run_files("digits_r2d_eps1e2_uniform", "eval", "scores.parquet")[0] == \
        f"{plan.results}/digits_r2d_eps1_uniform/runs/{chunk}/digits_r2d_eps1e2_uniform/eval/0/scores.parquet"
    cfg = copy.deepcopy(plan.config)
    cfg["nn"]["experiments"]["digits_uniform_hessian_s5e3"]["params"]["s2"] = 100
    regrouped = {g[0]: g for g in WorkflowPlan(cfg).nn.unlearn_groups()}
    assert regrouped["digits_uniform_hessian_s1e3"] == ["digits_uniform_hessian_s1e3", "digits_uniform_hessian_s1e2"]
    assert regrouped["digits_uniform_hessian_s5e3"] == ["digits_uniform_hessian_s5e3"]


def _chunk_wildcards(plan, group):
    return [SimpleNamespace(group=group, chunk=c) for g, c, _ in plan.nn.experiment_chunks() if g[0] == group]


def test_plan_joint_designs_share_candidate_models():
    plan = _plan()
    mc = _chunk_wildcards(plan, "digits_mc_eps1_uniform")[0]
    assert plan.nn.unlearn_base(mc) == [f"{plan.results}/designs/digits_joint_uniform/base/candidate0-19"]
    assert plan.nn.unlearn_base_models(mc) == [f"{plan.results}/designs/digits_joint_uniform/base/candidate0-19/candidate/{k}.pt" for k in range(20)]
    ida = _chunk_wildcards(plan, "digits_uniform_ida_q1")[0]
    assert plan.nn.unlearn_base(ida) == [f"{plan.results}/designs/digits_uniform/base/calib0-29_eval0-9"]
    assert plan.nn.unlearn_base_models(ida)[-1] == f"{plan.results}/designs/digits_uniform/base/calib0-29_eval0-9/eval/9.pt"
    assert plan.nn.unlearn_base_models(_chunk_wildcards(plan, "digits_uniform_no_unlearning")[0]) == plan.nn.unlearn_base_models(ida)
    # the Retrain control unlearns nothing from the one model A(D_r) of its design
    retrain = _chunk_wildcards(plan, "digits_joint_uniform_retrain")[0]
    assert plan.nn.unlearn_base(retrain) == plan.nn.unlearn_base_models(retrain) == [f"{plan.results}/designs/digits_joint_uniform/base/retrain.pt"]
    assert plan.nn.train_job(SimpleNamespace(design="digits_uniform"))["models"] == [f"{plan.results}/designs/digits_uniform/base/retrain.pt"]
    assert re.fullmatch(plan.nn.retrain_designs_pattern(), "digits_uniform") and not re.fullmatch(plan.nn.retrain_designs_pattern(), "digits_uniform_x")
    assert plan.nn.auditor("digits_mc_eps1_uniform") == "joint"
    assert plan.nn.auditor("digits_r2d_pairwise_eps1") == "pairwise"
    assert plan.nn.auditor("digits_uniform_ida_q1") == "batchwise"
    assert plan.nn.unlearn_job(mc)["checkpoints"][0].endswith("/digits_mc_eps1_uniform/calib/0/checkpoint_scores.parquet")
    assert plan.nn.unlearn_job(_chunk_wildcards(plan, "digits_r2d_eps1_uniform")[0])["checkpoints"] is None


def test_plan_refuses_a_chunk_the_config_does_not_have():
    plan = _plan()
    with pytest.raises(ValueError, match="design 'digits_uniform' has no chunk 'calib0-9'"):
        plan.nn.train_job(SimpleNamespace(design="digits_uniform", chunk="calib0-9"))
    with pytest.raises(ValueError, match="unlearning group 'digits_uniform_ida_q1' has no chunk 'eval0-9'"):
        plan.nn.unlearn_job(SimpleNamespace(group="digits_uniform_ida_q1", chunk="eval0-9"))
    with pytest.raises(ValueError, match="'digits_uniform_hessian_s5e3' names no unlearning group"):
        plan.nn.unlearn_job(SimpleNamespace(group="digits_uniform_hessian_s5e3", chunk="calib0-29_eval0-9"))


def test_audit_delta_is_the_certified_delta_of_a_claim():
    assert audit_delta({"method": "model_clipping", "params": {"epsilon": 1.0, "delta": 1e-5}}) == 1e-5
    assert audit_delta({"method": "model_clipping", "params": {"epsilon": None, "delta": None, "noisy_steps": 40}}) == 0.0
    assert audit_delta({"method": "model_clipping", "params": {"epsilon": 1.0, "delta": 1e-5, "noisy_steps": 40}}) == 0.0  # fixed steps: no claim
    assert audit_delta({"method": "model_clipping", "params": {}}) == 1e-5  # the defaults are a claim too
    assert audit_delta({"method": "rewind_to_delete", "params": {"epsilon": 10.0}}) == 1e-3
    assert audit_delta({"method": "hessian", "params": {"sigma": 1e-3}}) == 0.0


def test_certified_summary_shows_the_params_with_their_defaults():
    plan = _plan()
    exp = plan.nn.experiment("digits_mc_eps1_uniform")
    del exp["params"]["epsilon"], exp["params"]["delta"]  # left to ModelClippingParams' defaults
    summary = plan.certified.summary("digits_mc_eps1_uniform")
    assert summary["variant"] == "certified"
    assert (summary["params"]["epsilon"], summary["params"]["delta"], summary["params"]["C0"]) == (1.0, 1e-5, 30.0)
    assert plan.certified.summary("digits_mc_uncertified_uniform")["variant"] == "uncertified"


def test_plan_chunk_size_changes_chunks_not_runs():
    plan = _plan()
    small = copy.deepcopy(plan.config)
    small["nn"]["designs"]["digits_uniform"]["chunk_size"] = 7
    other = WorkflowPlan(small)
    chunks = [keys for d, c, keys in other.nn.design_chunks() if d == "digits_uniform" and c != "retrain"]
    n = sum(plan.nn.design("digits_uniform")[k] for k in ("calibration_runs", "evaluation_runs"))
    assert [len(c) for c in chunks] == [7] * (n // 7) + ([n % 7] if n % 7 else [])
    assert [key for c in chunks for key in c] == plan.nn.run_keys("digits_uniform")
    # the same runs, in other chunk folders: a changed chunk_size reruns the chunks, not other runs
    rename = lambda f: re.sub(r"/runs/[^/]+/", "/runs/*/", f)  # noqa: E731
    files = lambda p: p.nn.run_files("digits_uniform_ida_q1", "calib", "scores.parquet")  # noqa: E731
    assert [rename(f) for f in files(other)] == [rename(f) for f in files(plan)] and files(other) != files(plan)


def test_plan_targets_follow_the_enabled_sections():
    plan = _plan()
    targets = plan.all_targets()
    assert f"{plan.results}/tables/attainable_bounds.csv" in targets
    assert f"{plan.results}/tables/table2a.csv" in targets
    assert f"{plan.results}/figures/nn_epsilon_vs_r.png" in targets
    from unlearn_audit.pipeline.plan.report import OWN_LABELS

    assert all(f"{plan.results}/tables/{t}.csv" in targets for t in NN_TABLES if t not in OWN_LABELS)  # every paper table
    assert len(targets) == len(set(targets))
    off = _plan({"nn": {"enabled": False}, "convex": {"enabled": False}})
    assert off.nn.experiments() == [] and off.nn.targets() == [] and off.convex.targets() == []
    assert not any("/table1b." in t or "/table2a." in t for t in off.all_targets())
    assert f"{off.results}/tables/gaussian_unlearning_audit.csv" in off.all_targets()


def test_plan_input_functions_name_the_phase_files():
    plan = _plan()
    wc = SimpleNamespace(experiment="digits_uniform_ida_q1", table="table7", design="digits_uniform")
    calib = plan.nn.calibration_scores(wc)
    assert len(calib) == 30 and all("/calib/" in f for f in calib)
    assert len(plan.nn.evaluation_scores(wc)) == 10
    assert plan.nn.calibration_dirs(wc) == plan.nn.evaluation_dirs(wc) == [f"{plan.results}/digits_uniform_ida_q1/runs/calib0-29_eval0-9"]
    assert all(f.startswith(plan.nn.calibration_dirs(wc)[0] + "/") for f in calib)
    assert plan.nn.experiment_signs(wc) == f"{plan.results}/designs/digits_uniform/signs.parquet"
    assert plan.nn.audit_m(wc) == 144
    assert [f.split("/")[-2] for f in plan.nn.table_bounds(wc)] == [
        "digits_uniform_hessian_s1e3", "digits_uniform_hessian_s5e3", "digits_uniform_hessian_s1e2",  # uniform only (App. G.4)
        "digits_uniform_no_unlearning", "digits_uniform_retrain",  # beside its controls
    ]
    # the tables' guess fractions read the same experiments' overlaps
    assert plan.nn.table_overlaps(wc) == [f.replace("/bounds.parquet", "/overlaps.parquet") for f in plan.nn.table_bounds(wc)]
    summary = plan.nn.experiment_summary("digits_uniform_ida_q1")
    assert summary["report_r"] == 100 and summary["m"] == 144 and summary["label"] == "IDA q=1"
    assert plan.resources.runtime_minutes("digits_uniform", 25) == 25 + 5


def test_report_subcategories_are_plan_functions_and_no_rule_holds_a_lambda():
    from types import SimpleNamespace as W

    from unlearn_audit.pipeline.plan import ReportPlan

    rules = Path(__file__).resolve().parents[2] / "workflow" / "rules"
    assert not [p.name for p in rules.glob("*.smk") if "lambda" in p.read_text()]
    assert ReportPlan.table_subcategory(W(table="table1a")) == "Table 1a"
    assert ReportPlan.table_subcategory(W(table="appendix_f4")) == "App. F.4"  # every catalogue table has a label
    from unlearn_audit import catalogue
    assert all(ReportPlan.table_subcategory(W(table=t)) for t in catalogue.NN_TABLES)
    assert ReportPlan.figure_subcategory(W(figure="figure1c")) == "Figure 1c"
    assert ReportPlan.convex_subcategory(W(table="table2b")) == "Table 2b"
    assert ReportPlan.convex_subcategory(W(table="table2c")) == "Logistic loss (App. H.4.2)"
    assert ReportPlan.gaussian_unlearning_subcategory(W(gu_error="ued", gu_axis="eps")) == "Figure: UED vs eps"
    assert ReportPlan.clip_subcategory(W(gu_error="ged")) == "Figure: GED-vs-m slope against the clip c"
    # labels: the paper's name first (a "Figure: " prefix dropped under the figure label), then the file's kind
    assert ReportPlan.labels("table", "Table 6") == {"table": "Table 6", "kind": "csv"}
    assert ReportPlan.labels("figure", ReportPlan.figure_subcategory)(W(figure="figure1a")) == {"figure": "Figure 1a", "kind": "png"}
    assert ReportPlan.labels("figure", ReportPlan.clip_subcategory)(W(gu_error="ued")) == {"figure": "UED-vs-m slope against the clip c", "kind": "png"}
    details = ReportPlan.labels("table", ReportPlan.convex_subcategory, ": every number behind it")
    assert details(W(table="table2c")) == {"table": "Logistic loss (App. H.4.2): every number behind it", "kind": "csv"}
    assert ReportPlan.labels("record", "Checkout") == {"record": "Checkout", "kind": "json"}
    with pytest.raises(ValueError, match="kind must be one of"):
        ReportPlan.labels("plot", "Figure 1a")
