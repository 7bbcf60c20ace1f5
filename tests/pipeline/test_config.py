"""Config validation (pipeline/config.py): the schema with its defaults and the semantic checks
refuse bad values with one ``ConfigError`` that names the key (tests/workflow/test_core.py checks
that such an error stops Snakemake with that one line)."""

from __future__ import annotations

import copy
import inspect

import pytest

from unlearn_audit.models import MODELS, CharLSTM, TinyNetCIFAR100
from unlearn_audit.model_specs import MODEL_SPECS
from unlearn_audit.pipeline.config import EXECUTION_ONLY_KEYS, ConfigError, result_config, validate_config
from unlearn_audit.pipeline.plan import WorkflowPlan
from workflow_utils import REPO, load_config, merge

SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
DEFAULT = load_config("config/config.yaml")
#: .test/all.yaml without its experiment given by import path (tests/unlearning/test_custom_method.py
#: checks those), so that it validates without the example on sys.path.
SHARED = load_config(".test/all.yaml")
del SHARED["nn"]["experiments"]["noisy_ft"]


def refusal(base: dict, overrides: dict) -> str:
    with pytest.raises(ConfigError) as info:
        validate_config(merge(copy.deepcopy(base), overrides), SCHEMA)
    return str(info.value)


def test_both_bases_are_valid():
    for base in (DEFAULT, SHARED):
        validate_config(copy.deepcopy(base), SCHEMA)


@pytest.mark.parametrize(
    "override,needle",
    [
        ({"zeta": 1.5}, "config key 'zeta'"),
        ({"zetta": 0.05}, "unknown key(s) 'zetta'"),
        ({"perfect_prediction": {"grid": [{"m": 10, "r": 3}]}}, "config key 'perfect_prediction.grid[0].r'"),
        ({"perfect_prediction": {"grid": [{"m": 10, "r": 12}]}}, "r = 12 must be <= m = 10"),
    ],
)
def test_bad_top_level_values_are_refused_naming_the_key(override, needle):
    assert needle in refusal(DEFAULT, override)


def test_unknown_method_parameter_refused():
    message = refusal(SHARED, {"nn": {"experiments": {"tiny_ft": {"params": {"learning_rate": 0.1}}}}})
    assert "nn.experiments.tiny_ft.params" in message and "learning_rate" in message


def test_r_larger_than_m_refused():
    message = refusal(SHARED, {"nn": {"experiments": {"tiny_ft": {"r": [8, 30]}}}})
    assert "nn.experiments.tiny_ft.r[1]" in message and "<= m = 24" in message


def test_unknown_mechanism_parameter_refused():
    message = refusal(SHARED, {"convex": {"mechanisms": {"cubic_newton": {"params": {"lambda0": 0.2}}}}})
    assert "convex.mechanisms.cubic_newton.params" in message and "lambda0" in message


def test_the_auditor_must_fit_the_design():
    assert "pairwise auditor (App. A.3) needs m = 2" in refusal(SHARED, {"nn": {"experiments": {"r2d_pairwise_eps10": {"design": "joint_fullbatch"}}}})
    message = refusal(SHARED, {"nn": {"designs": {"joint_fullbatch": {"train": {"epochs": 7}}}}})
    assert "nn.designs.joint_fullbatch.train" in message and "full-batch" in message
    assert "never reaches" in refusal(SHARED, {"nn": {"experiments": {"mc_certified": {"params": {"sigma": 0.001, "epsilon": 1.0}}}}})


@pytest.mark.parametrize("key", ["models_per_group", "unlearn_models_per_group"])
def test_models_per_group_defaults_to_one_and_is_refused_where_grouping_does_not_exist(key):
    cfg = validate_config(copy.deepcopy(SHARED), SCHEMA)
    assert cfg["nn"]["designs"]["tiny"][key] == 1
    grouped = merge(copy.deepcopy(SHARED), {"nn": {"designs": {"tiny": {key: 4}}}})
    assert validate_config(grouped, SCHEMA)["nn"]["designs"]["tiny"][key] == 4
    with pytest.raises(ConfigError, match=rf"nn\.designs\.tiny\.{key}.*compile"):
        validate_config(merge(grouped, {"nn": {"designs": {"tiny": {"compile": True}}}}), SCHEMA)
    with pytest.raises(ConfigError, match=rf"nn\.designs\.plays\.{key}.*tinynet only"):
        validate_config(merge(copy.deepcopy(SHARED), {"nn": {"designs": {"plays": {key: 2}}}}), SCHEMA)


def test_vmap_unlearning_groups_any_model_and_bad_modes_are_refused():
    plays_vmap = {"nn": {"designs": {"plays": {"unlearn_models_per_group": 2, "unlearn_group_mode": "vmap"}}}}
    cfg = validate_config(merge(copy.deepcopy(SHARED), plays_vmap), SCHEMA)
    assert cfg["nn"]["designs"]["plays"]["unlearn_group_mode"] == "vmap"
    assert "unlearn_group_mode" not in cfg["nn"]["designs"]["tiny"]  # absent means grouped: no default written into the rules' params
    with pytest.raises(ConfigError, match=r"nn\.designs\.plays\.unlearn_models_per_group.*tinynet only.*unlearn_group_mode to vmap"):
        validate_config(merge(copy.deepcopy(SHARED), {"nn": {"designs": {"plays": {"unlearn_models_per_group": 2}}}}), SCHEMA)
    with pytest.raises(ConfigError, match="unlearn_group_mode"):
        validate_config(merge(copy.deepcopy(SHARED), {"nn": {"designs": {"tiny": {"unlearn_group_mode": "pmap"}}}}), SCHEMA)


def _constructor_parameters(cls) -> tuple[str, ...]:
    return tuple(name for name in inspect.signature(cls.__init__).parameters if name != "self")


@pytest.mark.parametrize(("name", "cls"), [("tinynet", TinyNetCIFAR100), ("charlstm", CharLSTM)])
def test_model_parameters_match_model_constructors(name, cls):
    assert MODEL_SPECS[name].parameters == _constructor_parameters(cls)


def test_model_parameters_cover_every_registered_model():
    """The specs' parameters (the torch-free check of model.params) are the factories' they name."""
    assert set(MODEL_SPECS) == set(MODELS)
    for name, cls in MODELS.items():
        assert MODEL_SPECS[name].load_factory() is cls
        assert MODEL_SPECS[name].parameters == _constructor_parameters(cls), name


def _plan() -> WorkflowPlan:
    return WorkflowPlan(validate_config(copy.deepcopy(DEFAULT), SCHEMA))


def test_result_config_drops_only_execution_only_keys():
    plan = _plan()
    kept = result_config(plan.config)
    assert "resources_dir" not in kept and "resources_dir" in plan.config and "results_dir" not in kept
    assert "cluster" not in kept and plan.config["cluster"] == {"walltime_minutes": 1440, "cpu_jobs": "submit", "runtime_from": "config", "cost_device": "cpu", "safety_factor": 2}
    for name, design in kept["nn"]["designs"].items():
        assert "chunk_size" not in design and "runtime_minutes_per_run" not in design, name
        assert design["calibration_runs"] == plan.config["nn"]["designs"][name]["calibration_runs"]
    assert "chunk_size" in plan.config["nn"]["designs"]["digits_uniform"]  # the input is untouched
    dropped = copy.deepcopy(plan.config)
    dropped.pop("resources_dir")
    dropped.pop("results_dir")
    dropped.pop("cluster")
    for design in dropped["nn"]["designs"].values():
        design.pop("chunk_size")
        design.pop("runtime_minutes_per_run", None)
    assert kept == dropped
    assert len(EXECUTION_ONLY_KEYS) == 5


@pytest.mark.parametrize(
    "override,key,needle",
    [
        ({"nn": {"experiments": {"tiny_ft": {"params": {"lr": "fast"}}}}}, "nn.experiments.tiny_ft.params", "parameter 'lr' must be a number, got 'fast'"),
        ({"nn": {"experiments": {"tiny_ft": {"params": {"epochs": 2.5}}}}}, "nn.experiments.tiny_ft.params", "parameter 'epochs' must be an integer"),
        ({"nn": {"designs": {"tiny": {"dataset_params": {"val_fraction": 1.5}}}}}, "nn.designs.tiny.dataset_params", "val_fraction must be in [0, 1), got 1.5"),
        ({"nn": {"designs": {"plays": {"dataset_params": {"window": "long"}}}}}, "nn.designs.plays.dataset_params", "window must be an integer"),
        ({"gaussian_unlearning": {"audit": {"settings": {"n_calibratoin": 5}}}}, "gaussian_unlearning.audit.settings", "'n_calibratoin'"),
        ({"nn": {"experiments": {"mc_certified": {"test": "adaptive"}}}}, "nn.experiments.mc_certified.test", "the adaptive test supports delta = 0 only"),
        ({"nn": {"experiments": {"mc_certified": {"test": "mgf"}}}}, "nn.experiments.mc_certified.test", "pre-register test: reference"),
        ({"nn": {"experiments": {"tiny_ft": {"test": "perfect"}}}}, "nn.experiments.tiny_ft.test", "perfect"),
    ],
)
def test_values_a_job_would_trip_on_are_refused_before_any_job(override, key, needle):
    message = refusal(SHARED, override)
    assert f"config key '{key}'" in message and needle in message, message


def test_a_key_given_twice_is_refused_naming_the_line(tmp_path):
    from unlearn_audit.pipeline.config import check_config_files, load_yaml

    path = tmp_path / "twice.yaml"
    path.write_text("zeta: 0.05\nseed: 1\nnn:\n  enabled: true\n  controls: true\n  controls: false\n")
    with pytest.raises(ConfigError) as info:
        check_config_files([path])
    assert "line 6" in str(info.value) and "'controls' appears twice" in str(info.value)
    # merge keys may be overridden: the default config, full of <<: *digits, loads
    assert load_yaml(REPO / "config" / "config.yaml")["nn"]["designs"]["digits_adversarial"]["split"] == "adversarial"


def test_the_start_line_names_the_enabled_sections_and_says_the_default_is_not_merged():
    from unlearn_audit.pipeline.config import config_summary

    config = validate_config({"zeta": 0.1}, SCHEMA)
    line = config_summary(config, ["mine.yaml"])
    assert "mine.yaml" in line and "not merged" in line and "sections enabled: perfect_prediction;" in line and "off: convex, gaussian_unlearning, nn" in line
    line = config_summary(validate_config(copy.deepcopy(DEFAULT), SCHEMA), [REPO / "config" / "config.yaml"])
    assert "not merged" not in line and "nn (" in line and "off: none" in line


def _enums_of(node, key: str) -> list[list]:
    """Every ``enum`` of a property named ``key`` anywhere in a JSON schema."""
    found = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key and isinstance(v, dict) and "enum" in v:
                found.append(v["enum"])
            if k == key and isinstance(v, dict) and "anyOf" in v:  # a built-in name, or an import path
                found += [alt["enum"] for alt in v["anyOf"] if "enum" in alt]
            found += _enums_of(v, key)
    elif isinstance(node, list):
        for v in node:
            found += _enums_of(v, key)
    return found


def test_the_schema_enums_are_the_libraries_one_lists():
    """One list per concept: the config schema names the scores and datasets the library defines."""
    import yaml

    from unlearn_audit.data import DATASETS
    from unlearn_audit.catalogue import SCORE_NAMES

    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    scores, datasets = _enums_of(schema, "score"), _enums_of(schema, "dataset")
    assert scores and all(sorted(e) == sorted(SCORE_NAMES) for e in scores), scores
    assert datasets and all(sorted(e) == sorted(DATASETS) for e in datasets), datasets
    images = [spec for spec in DATASETS.values() if spec.kind == "image"]
    assert images and all(spec.train_portion and spec.n_test and spec.image for spec in images)


def test_the_schema_names_the_catalogues_tables_figures_and_mechanisms():
    """The config schema's table and figure enums, its convex mechanisms and its Gaussian-unlearning
    experiments are the catalogue's."""
    import yaml

    from unlearn_audit import catalogue
    from unlearn_audit.pipeline.convex import MECHANISMS

    schema = yaml.safe_load((REPO / "workflow" / "schemas" / "config.schema.yaml").read_text())
    tables = [e["items"]["enum"] for e in _items_of(schema, "tables")]
    figures = [e["items"]["enum"] for e in _items_of(schema, "figures")]
    assert tables and all(sorted(t) == sorted([*catalogue.NN_TABLES, *catalogue.CERTIFIED_TABLES]) for t in tables), tables
    assert figures and all(sorted(f) == sorted(catalogue.CERTIFIED_FIGURES) for f in figures), figures
    mechanisms = [set(v["properties"]) for v in _items_of(schema, "mechanisms") if "properties" in v]
    assert mechanisms and all(m == set(catalogue.CONVEX_MECHANISMS) == set(MECHANISMS) for m in mechanisms), mechanisms
    # the Gaussian-unlearning section: its experiments' keys beside enabled, model and audit
    section = set(schema["properties"]["gaussian_unlearning"]["properties"])
    assert section - {"enabled", "model", "audit"} == set(catalogue.GAUSSIAN_UNLEARNING_EXPERIMENTS), section


def _items_of(node, key: str) -> list:
    """Every value of a property named ``key`` anywhere in a JSON schema that is itself a schema (a dict)."""
    found = []
    if isinstance(node, dict):
        for k, v in node.items():
            if k == key and isinstance(v, dict) and ("items" in v or "properties" in v):
                found.append(v)
            found += _items_of(v, key)
    elif isinstance(node, list):
        for v in node:
            found += _items_of(v, key)
    return found


def test_model_clipping_beyond_its_unlearning_budget_is_refused_before_any_job():
    """More noisy steps than the epochs' steps over the retain set (known from the dataset's size)
    stops the run at the config, not inside the job after its base models were trained."""
    message = refusal(SHARED, {"nn": {"experiments": {"tiny_mc_uncertified": {"params": {"noisy_steps": 1000}}}}})
    assert "nn.experiments.tiny_mc_uncertified.params" in message and "noisy_steps = 1000 exceeds the unlearning budget" in message
    assert "lower noisy_steps" in message


@pytest.mark.parametrize(
    "override,needle",
    [
        ({"nn": {"experiments": {"a/b": {"design": "tiny", "method": "retain_finetune", "r": [8]}}}},
         "experiment name 'a/b' names folders and jobs: use letters, digits, '_' and '-'"),
        ({"nn": {"designs": {"tiny": {"m": 2000}}}}, "m·B = 2000·1 = 2000 candidate examples leave no retain set out of the 1294"),
    ],
)
def test_names_and_pool_sizes_that_would_fail_inside_jobs_are_refused_first(override, needle):
    assert needle in refusal(SHARED, override)


def test_a_results_dir_that_is_a_file_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "out").write_text("not a folder")
    message = refusal(SHARED, {"results_dir": "out"})
    assert "config key 'results_dir'" in message and "is a file, not a folder" in message
