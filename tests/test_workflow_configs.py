"""The config files: the stand-alone .test/ configs, and that `--configfile config/paper.yaml`
runs exactly paper.yaml (config/config.yaml is not merged under it)."""

import copy
import json
from types import SimpleNamespace

import pytest
import yaml

from unlearn_audit.pipeline.config import result_config, validate_config
from unlearn_audit.pipeline.plan import WorkflowPlan
from workflow_utils import REPO, SMALL_CONFIGS, load_config, planned_jobs, snakemake

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
SECTIONS = ("perfect_prediction", "convex", "gaussian_unlearning", "nn")
PAPER = REPO / "config" / "paper.yaml"


def validated(cfg: dict) -> dict:
    """``cfg`` with the schema's defaults, as plain JSON types (as Snakemake's config holds it)."""
    return json.loads(json.dumps(validate_config(copy.deepcopy(cfg), SCHEMA)))


@pytest.mark.parametrize("path", sorted(SMALL_CONFIGS.glob("*.yaml")), ids=lambda p: p.name)
def test_small_configs_are_valid_and_stand_alone(path):
    cfg = load_config(path)
    validated(cfg)
    assert cfg["results_dir"] == f"results/test-{path.stem}"
    for section in SECTIONS:
        assert isinstance(cfg.get(section, {}).get("enabled"), bool), f"{path.name}: {section}.enabled is not set"
    assert sum(cfg[s]["enabled"] for s in SECTIONS) >= 1


def test_small_configs_exist():
    names = {p.stem for p in SMALL_CONFIGS.glob("*.yaml")}
    assert {"statistics", "convex", "gaussian_unlearning", "nn_digits", "nn_shakespeare"} <= names


def test_paper_and_default_configs_write_to_different_results_dirs():
    paper, default = load_config(PAPER), load_config("config/config.yaml")
    assert paper["results_dir"] != default["results_dir"]
    assert paper["results_dir"] == "results/paper"


@pytest.mark.workflow
def test_effective_paper_config_is_exactly_paper_yaml(tmp_path):
    """The config the Snakefile ends up with, as its config_snapshot rule writes it."""
    paper = load_config(PAPER)
    proc = snakemake(tmp_path, PAPER, "results/paper/config.yaml")
    assert proc.returncode == 0, proc.stderr[-3000:]
    snapshot = yaml.safe_load((tmp_path / "results" / "paper" / "config.yaml").read_text())
    # the whole config is paper.yaml plus the schema's defaults, less the execution-only keys
    assert snapshot == result_config(validated(paper))
    assert "results_dir" not in snapshot and (tmp_path / "results" / "paper" / "config.yaml").is_file()
    assert set(snapshot["nn"]["designs"]) == set(paper["nn"]["designs"])
    assert set(snapshot["nn"]["experiments"]) == set(paper["nn"]["experiments"])
    for name, design in paper["nn"]["designs"].items():
        for key, value in json.loads(json.dumps(design)).items():
            if key not in ("chunk_size", "runtime_minutes_per_run"):
                assert snapshot["nn"]["designs"][name][key] == value, (name, key)
        assert snapshot["nn"]["designs"][name]["dataset_params"] == design.get("dataset_params", {}), name
    for name, exp in paper["nn"]["experiments"].items():
        assert {k: snapshot["nn"]["experiments"][name][k] for k in exp} == json.loads(json.dumps(exp)), name
    # what the data jobs are given: exactly paper.yaml's dataset parameters (none inherited,
    # e.g. no max_retain_windows from config/config.yaml's Shakespeare design)
    plan = WorkflowPlan(validated(paper))
    prepared = {d: plan.nn_data_params(SimpleNamespace(design=d)) for d in plan.nn_used_designs()}
    assert set(prepared) == {exp["design"] for exp in paper["nn"]["experiments"].values()}
    for name, params in prepared.items():
        assert params["dataset_params"] == paper["nn"]["designs"][name].get("dataset_params", {}), name
    assert prepared["shakespeare"]["dataset_params"] == {"num_roles": 300, "stride": 1}
    assert prepared["shakespeare"]["m"] == 400 and prepared["shakespeare"]["batch_size"] is None


@pytest.mark.workflow
def test_paper_dry_run_plans_no_default_design(tmp_path):
    default = load_config("config/config.yaml")
    paper = load_config(PAPER)
    proc = snakemake(tmp_path, PAPER, "-n", timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = planned_jobs(proc)
    assert jobs, proc.stdout[-3000:]
    paper_designs = {exp["design"] for exp in paper["nn"]["experiments"].values()}
    assert jobs["nn_prepare_data"] == len(paper_designs)
    for design in paper_designs:
        if paper["nn"]["designs"][design].get("auditor") == "joint":  # one base model per candidate
            assert f"nn_train_{design}_candidate_0" in jobs, design
        else:
            assert f"nn_train_{design}_calib_0" in jobs and f"nn_train_{design}_eval_0" in jobs, design
    # one unlearning job per phase chunk of every group (experiments sharing a noiseless part run together)
    groups = WorkflowPlan(validate_config(copy.deepcopy(paper), SCHEMA)).nn_unlearn_groups()
    assert sorted(e for g in groups for e in g) == sorted(paper["nn"]["experiments"])
    for group in groups:
        assert f"nn_unlearn_{group[0]}_calib_0" in jobs and f"nn_unlearn_{group[0]}_eval_0" in jobs, group
    digits_designs = {n for n, d in default["nn"]["designs"].items() if d["dataset"] == "digits"}
    digits_experiments = {n for n, e in default["nn"]["experiments"].items() if e["design"] in digits_designs}
    assert digits_designs and digits_experiments
    planned = [
        name for name in jobs
        for prefix in [f"nn_train_{d}_" for d in digits_designs] + [f"nn_unlearn_{e}_" for e in digits_experiments]
        if name.startswith(prefix)
    ]
    assert not planned, f"paper.yaml plans jobs of config/config.yaml's digits designs: {planned[:10]}"
    text = proc.stdout + proc.stderr
    assert "/designs/digits" not in text and "digits_uniform" not in text
    assert "results/paper/tables/table1a.csv" in text


def test_models_per_group_defaults_to_one_and_is_refused_where_grouping_does_not_exist():
    from unlearn_audit.pipeline.config import ConfigError

    digits = load_config(SMALL_CONFIGS / "nn_digits.yaml")
    assert validated(digits)["nn"]["designs"]["tiny"]["models_per_group"] == 1
    digits["nn"]["designs"]["tiny"]["models_per_group"] = 4
    assert validated(digits)["nn"]["designs"]["tiny"]["models_per_group"] == 4
    digits["nn"]["designs"]["tiny"]["compile"] = True
    with pytest.raises(ConfigError, match=r"nn\.designs\.tiny\.models_per_group.*compile"):
        validated(digits)
    text = load_config(SMALL_CONFIGS / "nn_shakespeare.yaml")
    (name,) = text["nn"]["designs"]
    text["nn"]["designs"][name]["models_per_group"] = 2
    with pytest.raises(ConfigError, match=rf"nn\.designs\.{name}\.models_per_group.*tinynet only"):
        validated(text)
