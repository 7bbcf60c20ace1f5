"""Each section of the plan (pipeline/plan/) built alone, with the sections it reads and nothing else:
what it decides from its own part of the config and from what its collaborators tell it."""

from __future__ import annotations

import copy
from types import SimpleNamespace as W

import pytest
import yaml

from unlearn_audit.pipeline.config import validate_config
from unlearn_audit.pipeline.plan import (CertifiedPlan, ChunkPricing, ConvexPlan, GaussianUnlearningPlan, NNPlan, PlanFiles, ReportPlan,
                                         ResourcesPlan, TradeoffPlan, paths)
from unlearn_audit.pipeline.plan.tradeoff import MAX_PANELS
from workflow_utils import REPO

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"


@pytest.fixture(scope="module")
def default() -> dict:
    return validate_config(yaml.safe_load((REPO / "config" / "config.yaml").read_text()), SCHEMA)


class FixedPricing:
    """A chunk pricing that holds ``runs`` runs a job, whatever the design (what NNPlan asks of one)."""

    def __init__(self, runs: int):
        self.runs = runs

    def runs_per_job(self, design, experiments=None) -> int:
        return self.runs


def test_files_name_every_path_under_their_results_dir():
    files = PlanFiles("out")
    assert files.table_files("table1a") == paths.table_files("out", "table1a")
    assert files.run_file("g", "calib0-1", "e", "calib", 0, "scores.parquet") == paths.run_file("out", "g", "calib0-1", "e", "calib", 0, "scores.parquet")
    assert files.log("x.log") == "out/logs/x.log" and files.benchmark("x.tsv") == "out/benchmarks/x.tsv"
    assert all(p.startswith("out/") for p in files.figure_files("figure1a") + [files.design_file("d", "data.npz"), files.retrain_model("d")])


def test_pricing_fits_runs_under_the_walltime_from_the_nn_and_cluster_sections_alone():
    design = {"chunk_size": 40, "runtime_minutes_per_run": 100}
    config = {"nn": {"designs": {"d": design}, "experiments": {}}, "cluster": {"walltime_minutes": 505}}
    pricing = ChunkPricing(config)
    assert pricing.run_minutes("d") == 100
    assert pricing.runs_per_job("d") == (505 - ChunkPricing.JOB_OVERHEAD_MINUTES) // 100 == 5
    assert pricing.job_runtime_minutes("d", 3) == 305 and pricing.job_runtime_minutes("d", 3, attempt=2) == 505  # capped
    config["cluster"]["walltime_minutes"] = 60
    with pytest.raises(ValueError, match="raise cluster.walltime_minutes"):
        ChunkPricing(config).runs_per_job("d")


def test_nn_plan_cuts_chunks_at_what_its_pricing_says(default):
    for runs in (7, 1000):
        nn = NNPlan(default["nn"], PlanFiles("out"), FixedPricing(runs))
        for design in nn.used_designs():
            chunks = [keys for d, name, keys in nn.design_chunks() if d == design and name != "retrain"]
            expected = [("candidate", c) for c in nn.candidates(design)] if nn.is_joint(design) else nn.run_keys(design)
            assert [k for chunk in chunks for k in chunk] == expected
            assert max(map(len, chunks)) == min(runs, len(expected))
    assert nn.files.results == "out" and all(f.startswith("out/") for f in nn.targets())


def test_nn_plan_reads_only_its_section():
    nn_config = {"enabled": False, "designs": {"d": {}}, "experiments": {}}
    nn = NNPlan(nn_config, PlanFiles("out"), FixedPricing(1))
    assert nn.designs() == ["d"] and nn.experiments() == [] and nn.targets() == []


def test_resources_ask_for_the_dataset_memory_and_the_priced_runtime(default):
    pricing = ChunkPricing(default)
    nn = NNPlan(default["nn"], PlanFiles("out"), pricing)
    cpu = ResourcesPlan(default, nn, pricing)
    cuda = ResourcesPlan({**default, "device": "cuda"}, nn, pricing)
    design = nn.used_designs()[0]
    assert cuda.mem_mb(design) == cpu.mem_mb(design) + ResourcesPlan.CUDA_MEM_MB
    assert cpu.mem_mb(design, attempt=3) == 3 * cpu.mem_mb(design)
    assert cpu.runtime_minutes(design, 4) == pricing.job_runtime_minutes(design, 4)
    assert cpu.job_resources(design, 4)["gpu"] == 0 and cuda.job_resources(design, 4)["gpu"] == 1
    assert cpu.walltime_problems() == []
    with pytest.raises(ValueError, match="unknown design"):
        cpu.mem_mb("no_such_design")


def test_convex_plan_lists_only_enabled_mechanisms(default):
    convex_config = copy.deepcopy(default["convex"])
    names = list(convex_config["mechanisms"])
    convex_config["mechanisms"][names[0]]["enabled"] = False
    convex = ConvexPlan(convex_config, PlanFiles("out"))
    assert convex.mechanisms() == names[1:]
    assert convex.all_summaries() == [PlanFiles("out").convex_file(m, e, "summary.parquet") for m in names[1:] for e in convex.epsilons(m)]
    convex_config["enabled"] = False
    assert ConvexPlan(convex_config, PlanFiles("out")).targets() == []


def test_gaussian_unlearning_plan_cells_follow_its_grids(default):
    gu = GaussianUnlearningPlan(default["gaussian_unlearning"], PlanFiles("out"))
    assert len(gu.grid("ged_vs_eps")) == 1  # one cell: every epsilon on shared draws
    assert gu.cells(W(gu_experiment="ged_vs_p")) == [PlanFiles("out").gaussian_unlearning_cell("ged_vs_p", p) for p in gu.grid("ged_vs_p")]
    assert gu.targets() and GaussianUnlearningPlan({**default["gaussian_unlearning"], "enabled": False}, PlanFiles("out")).targets() == []


def test_tradeoff_plan_reads_the_sections_it_is_built_with(default):
    files = PlanFiles("out")
    convex_config = copy.deepcopy(default["convex"])
    first = next(iter(convex_config["mechanisms"]))
    for name, mech in convex_config["mechanisms"].items():
        mech["enabled"] = name == first
    convex_config["mechanisms"][first]["epsilons"] = [0.5 * k for k in range(1, 31)]
    nn = NNPlan({**default["nn"], "enabled": False}, files, FixedPricing(1))
    gu = GaussianUnlearningPlan({**default["gaussian_unlearning"], "enabled": False}, files)
    tradeoff = TradeoffPlan(nn, ConvexPlan(convex_config, files), gu)
    cells = tradeoff.convex_cells()
    assert len(cells) == MAX_PANELS and cells[0] == (first, 0.5) and cells[-1] == (first, 15.0)
    assert tradeoff.sign_vector_experiments() == [] and tradeoff.gaussian_unlearning_inputs() == []
    assert tradeoff.targets() == files.figure_files("tradeoff_convex")


def test_report_plan_needs_no_config():
    report = ReportPlan()
    assert report.table_subcategory(W(table="table1a")) == "Table 1a"
    assert report.labels("figure", report.figure_subcategory)(W(figure="figure1b")) == {"figure": "Figure 1b", "kind": "png"}


def test_certified_plan_reads_experiments_and_files_through_its_nn_plan(default):
    nn = NNPlan(default["nn"], PlanFiles("out"), FixedPricing(1000))
    certified = CertifiedPlan(nn)
    joint = nn.experiments_audited_by("joint")
    assert joint, "the default config has joint audits"
    for e in joint:
        wildcards = W(experiment=e)
        assert certified.all_scores(wildcards) == nn.calibration_scores(wildcards) + nn.evaluation_scores(wildcards)
        variant = certified.summary(e)["variant"]
        assert variant == "control" if nn.experiment(e)["method"] == "no_unlearning" else variant in ("certified", "uncertified")


def test_pricing_asks_for_the_configured_minutes_where_the_data_have_no_size_model():
    """A question-answer file in the records format (and datasets of one's own) has no size model:
    every method's run is priced at the design's runtime_minutes_per_run, and IDA's or the Hessian's
    step counts are NaN, not an error at the Snakefile's parse."""
    import math

    from unlearn_audit.pipeline.plan.cost.runs import base_training_steps, design_sizes, unlearning_run_work

    design = {"dataset": "qa", "m": 8, "batch_size": 4, "chunk_size": 10, "runtime_minutes_per_run": 3,
              "dataset_params": {"source": "my_pairs.jsonl"}, "train": {"epochs": 2, "batch_size": 32}}
    experiments = {"ida": {"method": "ida", "params": {}}, "hessian": {"method": "hessian", "params": {}}, "npo": {"method": "npo", "params": {}}}
    pricing = ChunkPricing({"nn": {"designs": {"d": design}, "experiments": experiments}, "cluster": {}})
    assert math.isnan(design_sizes(design)[0]) and design_sizes(design)[1] == 32 and math.isnan(base_training_steps(design))
    for name in experiments:
        assert all(math.isnan(v) for v in unlearning_run_work(design, [experiments[name]])[:3])
        assert pricing.run_minutes("d", [name]) == 3


def test_a_design_draws_its_streams_from_its_own_seed_else_the_configs(default):
    nn = NNPlan(default["nn"], PlanFiles("out"), FixedPricing(40), default["seed"])
    seeds = {d: nn.design_seed(d) for d in nn.used_designs()}
    for design, seed in seeds.items():
        assert seed == default["nn"]["designs"][design].get("seed", default["seed"])
    assert len(set(seeds.values())) == 2  # the heuristics' digits designs drawn anew, the others at the config's seed
    assert seeds["shakespeare"] == default["seed"] and seeds["digits_uniform"] != default["seed"]
    group = nn.unlearn_groups()[0]
    design = nn.design_of(group[0])
    assert nn.seed_of_design(W(design=design)) == nn.seed_of_group(W(group=group[0])) == seeds[design]
    assert NNPlan(default["nn"], PlanFiles("out"), FixedPricing(40), 7).design_seed("shakespeare") == 7
