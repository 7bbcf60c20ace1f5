"""The config files: the stand-alone .test/ configs, and that a config file given with
`--configfile` is the whole config (config/config.yaml is not merged under it): the shared run's
snapshot, and the paper's DAG, which plans none of the default config's designs."""


import pytest

from workflow_utils import REPO, validated, SMALL_CONFIGS, load_config

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
SECTIONS = ("perfect_prediction", "convex", "gaussian_unlearning", "nn")
PAPER = REPO / "config" / "paper.yaml"
DEFAULT = REPO / "config" / "config.yaml"
EXAMPLE = REPO / "examples" / "noisy_finetune"



@pytest.mark.parametrize("path", sorted(SMALL_CONFIGS.glob("*.yaml")), ids=lambda p: p.name)
def test_small_configs_are_valid_and_stand_alone(path, monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))  # .test/all.yaml audits the example algorithm by import path
    cfg = load_config(path)
    validated(cfg)
    assert cfg["results_dir"] == f"results/test-{path.stem}"
    for section in SECTIONS:
        assert isinstance(cfg.get(section, {}).get("enabled"), bool), f"{path.name}: {section}.enabled is not set"
    assert sum(cfg[s]["enabled"] for s in SECTIONS) >= 1


def test_the_shared_config_enables_every_section():
    cfg = load_config(SMALL_CONFIGS / "all.yaml")
    assert all(cfg[s]["enabled"] for s in SECTIONS)
    assert {p.stem for p in SMALL_CONFIGS.glob("*.yaml")} == {"all", "statistics", "slurm", "cuda_smoke"}


def test_paper_and_default_configs_write_to_different_results_dirs():
    paper, default = load_config(PAPER), load_config(DEFAULT)
    assert paper["results_dir"] != default["results_dir"]
    assert paper["results_dir"] == "results/paper"
