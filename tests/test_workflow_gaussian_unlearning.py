"""End-to-end Snakemake run of the Gaussian certified-unlearning experiments and audit
(.test/gaussian_unlearning.yaml), that the top-level zeta reaches the audit alone, and what
config/paper.yaml plans for them (the p grid, the n = p/2 runs, both log-losses) and for Table 1a's
two IDA grids."""

import copy
import json
import math

import pandas as pd
import pytest
import yaml

from unlearn_audit.pipeline.config import validate_config
from unlearn_audit.pipeline.plan import WorkflowPlan
from workflow_utils import REPO, executed_rules, load_config, planned_jobs, small_config, snakemake, write_config

pytestmark = pytest.mark.workflow

CONFIG = small_config("gaussian_unlearning")


def test_gaussian_unlearning_end_to_end_and_zeta_reruns_only_the_audit(tmp_path):
    cfg = write_config(tmp_path, CONFIG)
    proc = snakemake(tmp_path, cfg, cores=2)
    assert proc.returncode == 0, proc.stderr
    res = tmp_path / "results"
    slopes = pd.read_csv(res / "tables" / "gaussian_unlearning_slopes.csv")
    assert list(slopes.columns) == ["experiment", "error_loss", "n_over_p", "noise", "m", "p", "slope", "slope_se"]
    assert set(slopes.experiment) == {"ged_vs_p", "ued_vs_p", "ged_vs_eps", "ued_vs_eps", "ged_vs_m", "ued_vs_m"}
    gp = slopes[(slopes.experiment == "ged_vs_p") & (slopes.noise == "gaussian")]
    assert gp.p.isna().all() and gp.slope.between(-0.7, -0.3).all()
    assert sorted(set(zip(gp.n_over_p, gp.m))) == [(0.5, 1), (0.5, 5), (1.0, 1), (1.0, 5)]  # n = p and n = p/2
    lp = slopes[(slopes.experiment == "ged_vs_p") & (slopes.noise == "laplace")]
    assert lp.slope.abs().max() < 0.25
    ge = slopes[(slopes.experiment == "ged_vs_eps") & (slopes.noise == "gaussian")]
    assert sorted(ge.m) == [1, 5] and ge.slope.between(-1.15, -0.85).all()
    # GED vs m with both log-losses, labelled; the clip bends the Laplace slope down (the paper's 0.24)
    gm = slopes[slopes.experiment == "ged_vs_m"].set_index(["error_loss", "noise"]).slope
    unclipped, clipped = "logistic (unclipped)", "logistic, clipped (prob_clip = 1e-06)"
    assert set(gm.index.get_level_values(0)) == {unclipped, clipped}
    assert gm[(clipped, "laplace")] < gm[(unclipped, "laplace")] - 0.3
    assert slopes[slopes.error_loss == clipped].experiment.isin(["ged_vs_m", "ued_vs_m"]).all()
    audit = pd.read_csv(res / "tables" / "gaussian_unlearning_audit.csv")
    assert list(audit.columns) == ["mechanism", "claimed_mu", "true_mu", "mu_lb", "mu_lb_alg1", "epsilon_lb", "falsified"]
    a = audit.set_index("mechanism")
    assert a.loc["certified", "mu_lb"] <= a.loc["certified", "true_mu"] + 1e-12
    assert a.loc["control_tight", "mu_lb"] >= 0.8 * a.loc["control_tight", "true_mu"]
    assert a.loc["control_tight", "mu_lb"] <= a.loc["control_tight", "true_mu"]
    assert a.loc["control_undernoised", "mu_lb"] > a.loc["control_undernoised", "claimed_mu"]
    assert bool(a.loc["control_undernoised", "falsified"]) and not bool(a.loc["certified", "falsified"])
    raw = pd.read_parquet(res / "gaussian_unlearning" / "ged_vs_p.parquet")
    assert {"p", "m", "noise", "replication", "ged", "ued"} <= set(raw.columns)
    assert raw.replication.nunique() == 3
    assert {(n, p) for n, p in zip(raw.n, raw.p)} == {(p, p) for p in (40, 80, 160)} | {(p // 2, p) for p in (40, 80, 160)}
    for error in ("ged", "ued"):
        for axis in ("p", "eps", "m"):
            stem = res / "figures" / f"gaussian_unlearning_{error}_vs_{axis}"
            assert stem.with_suffix(".png").stat().st_size > 1000 and stem.with_suffix(".pdf").is_file()
            plotted = pd.read_csv(stem.with_suffix(".csv"))  # the numbers of the figure
            assert set(plotted.y) == {error} and plotted["mean"].gt(0).all()
    plotted = pd.read_csv(res / "figures" / "gaussian_unlearning_ued_vs_m.csv")
    assert set(plotted.error_loss) == {unclipped, clipped}
    again = snakemake(tmp_path, cfg, "-n")
    assert again.returncode == 0 and planned_jobs(again) == {}

    # zeta is the level of the audit's bounds: a larger zeta (weaker guarantee) gives larger
    # lower bounds, and only the audit job depends on it (cells, gather and slopes do not); the
    # config snapshot is rewritten because the config it records changed
    slopes_before = (res / "tables" / "gaussian_unlearning_slopes.csv").read_bytes()
    cfg_zeta = write_config(tmp_path, CONFIG, overrides={"zeta": 0.2}, name="config_zeta.yaml")
    dry = snakemake(tmp_path, cfg_zeta, "-n")
    assert dry.returncode == 0, dry.stderr
    # (besides the figures drawn from the audit's own results, e.g. its trade-off curve)
    expected = {"gaussian_unlearning_audit": 1, "config_snapshot": 1, "all": 1}
    planned = planned_jobs(dry)
    assert {k: v for k, v in planned.items() if not k.startswith("tradeoff_")} == expected, planned
    rerun = snakemake(tmp_path, cfg_zeta, cores=2)
    assert rerun.returncode == 0, rerun.stderr
    assert planned_jobs(rerun) == planned, planned_jobs(rerun)
    assert not [r for r in executed_rules(rerun) if r.startswith("gaussian_unlearning_") and r != "gaussian_unlearning_audit"], executed_rules(rerun)
    b = pd.read_csv(res / "tables" / "gaussian_unlearning_audit.csv").set_index("mechanism")
    assert list(b.index) == list(a.index) and (b.true_mu == a.true_mu).all()
    assert (b.mu_lb >= a.mu_lb - 1e-12).all(), pd.concat({"zeta=0.05": a.mu_lb, "zeta=0.2": b.mu_lb}, axis=1)
    assert (b.mu_lb > a.mu_lb).any(), pd.concat({"zeta=0.05": a.mu_lb, "zeta=0.2": b.mu_lb}, axis=1)
    assert (res / "tables" / "gaussian_unlearning_slopes.csv").read_bytes() == slopes_before
    assert yaml.safe_load((res / "config.yaml").read_text())["zeta"] == 0.2


SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
PAPER = REPO / "config" / "paper.yaml"


def _paper_plan() -> WorkflowPlan:
    return WorkflowPlan(json.loads(json.dumps(validate_config(copy.deepcopy(load_config(PAPER)), SCHEMA))))


def test_paper_config_plans_the_p_grid_and_the_n_half_runs(tmp_path):
    cfg = write_config(tmp_path, PAPER)
    results = tmp_path / "results"
    proc = snakemake(tmp_path, cfg, "-n", str(results / "tables" / "gaussian_unlearning_slopes.csv"),
                     *[str(results / "figures" / f"gaussian_unlearning_{e}_vs_{a}.png") for e in ("ged", "ued") for a in ("p", "eps", "m")])
    assert proc.returncode == 0, proc.stderr[-3000:]
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
    assert jobs["gaussian_unlearning_cell"] == 6 + 1 + 3  # p grid, the ε grid's one p, p values of the m grid
    # every planned cell runs n = p and n = p/2, and the m grid both log-losses
    plan = _paper_plan()
    for experiment in ("ged_vs_p", "ged_vs_eps", "ged_vs_m"):
        spec = plan.gaussian_unlearning_spec(type("W", (), {"gu_experiment": experiment}))
        assert spec["n_over_p"] == [1.0, 0.5], experiment
    assert plan.config["gaussian_unlearning"]["ged_vs_p"]["p"] == grid
    assert plan.config["gaussian_unlearning"]["ged_vs_eps"]["m"] == [1, 5, 10]
    assert plan.config["gaussian_unlearning"]["ged_vs_m"]["prob_clip"] == [None, 1e-6]
    # what such a cell computes (at a small p and one replication): the n = p and the n = p/2 runs
    from unlearn_audit.pipeline.gaussian_unlearning import run_cell

    spec = {**plan.config["gaussian_unlearning"]["ged_vs_p"], "replications": 1}
    model = {**plan.config["gaussian_unlearning"]["model"], "n_removal_sets": 1, "n_test": 20}
    rows = run_cell("ged_vs_p", 40.0, spec, model, plan.config["seed"])
    assert set(zip(rows.n, rows.n_over_p)) == {(40, 1.0), (20, 0.5)} and set(rows.m) == {1, 5, 10}


def test_paper_config_has_both_ida_grids_of_table1a(tmp_path):
    """Table 1a prints q in {1, 4, 9} at lambda = 0.5, E_f = 4 and (lambda, E_f) in {0.5, 1.5} x {4, 7};
    App. G.5 states q in {1, 2, 4}, E_f in {5, 7}, lambda in {0.5, 1.0, 1.5}: both are in the table, labelled."""
    plan = _paper_plan()
    experiments = plan.nn["experiments"]
    ida = {name: experiments[name] for name in plan.nn_table_experiments("table1a") if experiments[name]["method"] == "ida"}
    cells = {name: (e["params"]["q"], e["params"]["lam"], e["params"]["forget_epochs"]) for name, e in ida.items()}
    table1a = {n: c for n, c in cells.items() if "(Table 1a grid)" in ida[n]["label"]}
    g5 = {n: c for n, c in cells.items() if "(App. G.5 grid)" in ida[n]["label"]}
    assert set(table1a) | set(g5) == set(ida)
    assert sorted(table1a.values()) == sorted({(1, 0.5, 4), (4, 0.5, 4), (9, 0.5, 4), (1, 0.5, 7), (1, 1.5, 4), (1, 1.5, 7)})
    assert sorted(g5.values()) == sorted({(1, 0.5, 5), (2, 0.5, 5), (4, 0.5, 5), (1, 0.5, 7), (1, 1.0, 5), (1, 1.5, 5)})
    for name, e in ida.items():  # 8 unlearning epochs in all (Table 1a's caption)
        assert e["params"]["forget_epochs"] + e["params"]["epochs"] == 8, name
    assert len({e["label"] for e in ida.values()}) == len(ida)
    # and they are in the DAG of the paper's Table 1a
    cfg = write_config(tmp_path, PAPER)
    proc = snakemake(tmp_path, cfg, "-n", str(tmp_path / "results" / "tables" / "table1a.csv"), timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = planned_jobs(proc)
    for name in ida:
        assert f"nn_unlearn_{name}_calib_0" in jobs and f"nn_unlearn_{name}_eval_0" in jobs, name
