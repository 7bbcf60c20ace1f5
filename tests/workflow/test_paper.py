"""What config/paper.yaml runs: its jobs are given exactly paper.yaml, and the one dry run of its
DAG (the session's ``paper_dry_run``) plans every table, none of the default config's designs,
the Gaussian-unlearning p grid with its n = p/2 runs, and Table 1a's two IDA grids."""

import json
import math
from types import SimpleNamespace

import pytest

from unlearn_audit.pipeline.config import result_config
from unlearn_audit.pipeline.controls import control_experiments
from unlearn_audit.pipeline.plan import WorkflowPlan
from workflow_utils import REPO, validated, load_config, planned_jobs, planned_wildcards

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
PAPER = REPO / "config" / "paper.yaml"
DEFAULT = REPO / "config" / "config.yaml"
EVERY_TABLE = [
    "attainable_bounds", "table1a", "table1b", "table2a", "table2b", "table3", "table4", "table5", "table7",
    "gaussian_unlearning_slopes", "gaussian_unlearning_audit",
]



def _paper_plan() -> WorkflowPlan:
    return WorkflowPlan(validated(load_config(PAPER)))


def test_dry_run_of_the_paper_config_plans_every_table(paper_dry_run):
    assert "attainable_bounds" in planned_jobs(paper_dry_run)
    planned = paper_dry_run.stdout + paper_dry_run.stderr
    assert not [t for t in EVERY_TABLE if f"results/paper/tables/{t}.csv" not in planned]


def test_the_paper_config_is_paper_yaml_alone():
    """What the paper's jobs are given: exactly paper.yaml's designs, experiments and dataset
    parameters (none inherited, e.g. no max_retain_windows from config/config.yaml's Shakespeare design)."""
    paper = load_config(PAPER)
    snapshot = result_config(validated(paper))
    assert set(snapshot["nn"]["designs"]) == set(paper["nn"]["designs"])
    # its experiments and, beside them, the controls of their designs (nothing from config/config.yaml)
    assert set(snapshot["nn"]["experiments"]) == set(paper["nn"]["experiments"]) | set(control_experiments(paper["nn"]["experiments"]))
    for name, design in paper["nn"]["designs"].items():
        for key, value in json.loads(json.dumps(design)).items():
            if key not in ("chunk_size", "runtime_minutes_per_run"):
                assert snapshot["nn"]["designs"][name][key] == value, (name, key)
        assert snapshot["nn"]["designs"][name]["dataset_params"] == design.get("dataset_params", {}), name
    for name, exp in paper["nn"]["experiments"].items():
        assert {k: snapshot["nn"]["experiments"][name][k] for k in exp} == json.loads(json.dumps(exp)), name
    plan = WorkflowPlan(validated(paper))
    prepared = {d: plan.nn.data_params(SimpleNamespace(design=d)) for d in plan.nn.used_designs()}
    assert set(prepared) == {exp["design"] for exp in paper["nn"]["experiments"].values()}
    for name, params in prepared.items():
        assert params["dataset_params"] == paper["nn"]["designs"][name].get("dataset_params", {}), name
    assert prepared["shakespeare"]["dataset_params"] == {"num_roles": 300, "stride": 1}
    assert prepared["shakespeare"]["m"] == 400 and prepared["shakespeare"]["batch_size"] is None


def test_paper_dry_run_plans_no_default_design(paper_dry_run):
    default = load_config(DEFAULT)
    paper = load_config(PAPER)
    jobs = planned_jobs(paper_dry_run)
    assert jobs, paper_dry_run.stdout[-3000:]
    paper_designs = {exp["design"] for exp in paper["nn"]["experiments"].values()}
    assert jobs["nn_prepare_data"] == len(paper_designs)
    # one training job per chunk of every design (a joint design: one base model per candidate), one
    # rule for all of them: the paper's DAG has a handful of rules, not one per chunk
    plan = WorkflowPlan(validated(paper))
    chunks = plan.nn.design_chunks()
    assert {d for d, _, _ in chunks} == paper_designs
    trained = sorted((w["design"], w["chunk"]) for w in planned_wildcards(paper_dry_run, "nn_train"))
    assert trained == sorted((d, c) for d, c, _ in chunks if c != "retrain")
    retrained = sorted(w["design"] for w in planned_wildcards(paper_dry_run, "nn_train_retrain"))
    assert retrained == sorted(d for d, c, _ in chunks if c == "retrain")
    # one unlearning job per chunk of every group (experiments sharing a noiseless part run together)
    groups = plan.nn.unlearn_groups()
    assert sorted(e for g in groups for e in g) == sorted(plan.nn.experiments())
    assert set(plan.nn.experiments()) == set(paper["nn"]["experiments"]) | set(control_experiments(paper["nn"]["experiments"]))
    unlearned = sorted((w["group"], w["chunk"]) for w in planned_wildcards(paper_dry_run, "nn_unlearn"))
    assert unlearned == sorted((g[0], c) for g, c, _ in plan.nn.experiment_chunks())
    assert jobs["nn_unlearn"] == len(plan.nn.experiment_chunks()) and len(jobs) <= 150
    digits_designs = {n for n, d in default["nn"]["designs"].items() if d["dataset"] == "digits"}
    digits_experiments = {n for n, e in default["nn"]["experiments"].items() if e["design"] in digits_designs}
    assert digits_designs and digits_experiments
    planned = [d for d, _ in trained if d in digits_designs] + [g for g, _ in unlearned if g in digits_experiments]
    assert not planned, f"paper.yaml plans jobs of config/config.yaml's digits designs: {planned[:10]}"
    text = paper_dry_run.stdout + paper_dry_run.stderr
    assert "/designs/digits" not in text and "digits_uniform" not in text


def test_no_job_of_the_paper_dry_run_asks_for_more_than_the_walltime_or_one_gpu(paper_dry_run):
    """What the jobs a cluster would be sent ask for, as Snakemake resolved it (no group jobs bundle
    them: each job below is one submission)."""
    import re

    text = paper_dry_run.stdout + paper_dry_run.stderr
    resources = re.findall(r"^\s*resources: (.*)$", text, flags=re.MULTILINE)
    assert resources
    runtimes = [int(m) for line in resources for m in re.findall(r"\bruntime=(\d+)", line)]
    gpus = [int(m) for line in resources for m in re.findall(r"\bgpu=(\d+)", line)]
    plan = _paper_plan()
    assert max(runtimes) <= plan.pricing.walltime_minutes() == 1440, max(runtimes)
    assert set(gpus) == {1} and len(gpus) == len(plan.nn.design_chunks()) + len(plan.nn.experiment_chunks())
    print(f"paper dry run: {len(resources)} jobs with resources, largest runtime {max(runtimes)} min, "
          f"{len(gpus)} GPU jobs of 1 GPU each")


def test_table6_row2_runs_with_the_whole_budget_noisy():
    """Table 6 row 2 (eps = 10, C2 = 0.1, sigma = 0.02: 48,004 noisy steps > the 15,850 of the budget,
    "N/A" in the paper): both splits, every step noisy, audited after step 1 and at the end."""
    from unlearn_audit.unlearning import make_params
    from unlearn_audit.unlearning.params import model_clipping_plan

    plan = _paper_plan()
    rows = [e for e in plan.nn.table_experiments("table6") if plan.nn.experiment(e)["params"].get("noisy_steps") == "all"]
    assert {plan.nn.design(plan.nn.design_of(e))["split"] for e in rows} == {"uniform", "adversarial"}
    for e in rows:
        p = make_params("model_clipping", plan.nn.experiment(e)["params"])
        assert (p.epsilon, p.C2, p.sigma, p.checkpoint_steps) == (10.0, 0.1, 0.02, (1,)) and not p.certified
        assert model_clipping_plan(p, 45_000 - 4_500) == (15_850, 15_850) and p.accountant_steps(10**6) == 48_004


def test_the_m_ablation_runs_at_n_equal_p_1255():
    """The second paper's GED-vs-m ablation at n = p = 1255 (beside the first paper's p = 500, 1500, 2500)."""
    spec = load_config(PAPER)["gaussian_unlearning"]["ged_vs_m"]
    assert {500, 1255, 1500, 2500} <= set(spec["p"]) and 1.0 in spec["n_over_p"]


def test_paper_config_plans_the_p_grid_and_the_n_half_runs(paper_dry_run):
    proc = paper_dry_run
    text = proc.stdout + proc.stderr
    jobs = planned_jobs(proc)
    assert jobs["gaussian_unlearning_figure"] == 6 and jobs["gaussian_unlearning_gather"] == 3
    # the p grid of the paper: six log-spaced values from 500 to 5000 (its n = p = 1255 is one of them)
    grid = [500, 792, 1255, 1990, 3154, 5000]
    for p in grid:
        assert f"gaussian_unlearning/ged_vs_p/cells/{p}.parquet" in text, p
    assert text.count("gaussian_unlearning/ged_vs_p/cells/") >= len(grid)
    steps = [math.log10(b / a) for a, b in zip(grid, grid[1:])]
    assert max(steps) - min(steps) < 2e-3 and sum(steps) == pytest.approx(1.0)
    assert jobs["gaussian_unlearning_cell"] == 6 + 1 + 4  # p grid, the ε grid's one p, p values of the m grid (500, 1255, 1500, 2500)
    # every planned cell runs n = p and n = p/2, and the m grid both log-losses
    plan = _paper_plan()
    for experiment in ("ged_vs_p", "ged_vs_eps", "ged_vs_m"):
        spec = plan.gaussian_unlearning.spec(type("W", (), {"gu_experiment": experiment}))
        assert spec["n_over_p"] == [1.0, 0.5], experiment
    assert plan.config["gaussian_unlearning"]["ged_vs_p"]["p"] == grid
    assert plan.config["gaussian_unlearning"]["ged_vs_eps"]["m"] == [1, 5, 10]
    assert plan.config["gaussian_unlearning"]["ged_vs_m"]["prob_clip"] == [None, 1e-3, 1e-4, 1e-6, 1e-8, 1e-15]
    assert jobs["gaussian_unlearning_clip_figure"] == 2  # the clip sweep's GED and UED slope figures
    # what such a cell computes (at a small p and one replication): the n = p and the n = p/2 runs
    from unlearn_audit.pipeline.gaussian_unlearning import run_cell

    spec = {**plan.config["gaussian_unlearning"]["ged_vs_p"], "replications": 1}
    model = {**plan.config["gaussian_unlearning"]["model"], "n_removal_sets": 1, "n_test": 20}
    rows = run_cell("ged_vs_p", 40.0, spec, model, plan.config["seed"])
    assert set(zip(rows.n, rows.n_over_p)) == {(40, 1.0), (20, 0.5)} and set(rows.m) == {1, 5, 10}


def test_paper_config_has_both_ida_grids_of_table1a(paper_dry_run):
    """Table 1a prints q in {1, 4, 9} at lambda = 0.5, E_f = 4 and (lambda, E_f) in {0.5, 1.5} x {4, 7};
    App. G.5 states q in {1, 2, 4}, E_f in {5, 7}, lambda in {0.5, 1.0, 1.5}: both are in the table, labelled."""
    plan = _paper_plan()
    experiments = plan.config["nn"]["experiments"]
    ida = {name: experiments[name] for name in plan.nn.table_experiments("table1a") if experiments[name]["method"] == "ida"}
    cells = {name: (e["params"]["q"], e["params"]["lam"], e["params"]["forget_epochs"]) for name, e in ida.items()}
    table1a = {n: c for n, c in cells.items() if "(Table 1a grid)" in ida[n]["label"]}
    g5 = {n: c for n, c in cells.items() if "(App. G.5 grid)" in ida[n]["label"]}
    assert set(table1a) | set(g5) == set(ida)
    assert sorted(table1a.values()) == sorted({(1, 0.5, 4), (4, 0.5, 4), (9, 0.5, 4), (1, 0.5, 7), (1, 1.5, 4), (1, 1.5, 7)})
    assert sorted(g5.values()) == sorted({(1, 0.5, 5), (2, 0.5, 5), (4, 0.5, 5), (1, 0.5, 7), (1, 1.0, 5), (1, 1.5, 5)})
    for name, e in ida.items():  # 8 unlearning epochs in all (Table 1a's caption)
        assert e["params"]["forget_epochs"] + e["params"]["epochs"] == 8, name
    assert len({e["label"] for e in ida.values()}) == len(ida)
    # and they are in the DAG of the paper
    proc = paper_dry_run
    groups = {w["group"] for w in planned_wildcards(proc, "nn_unlearn")}
    for name in ida:
        assert name in groups, name
