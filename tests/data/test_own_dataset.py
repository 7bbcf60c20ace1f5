"""A model and a dataset of one's own by import path (docs/configuration.md#your-own-model-and-data):
the example package's loader and factory through the library's own entry points, and one clear
message, before any job, for each way a path, a loader or a factory can be wrong."""

from __future__ import annotations

import copy
import sys
import textwrap

import numpy as np
import pytest
import yaml

from unlearn_audit.data import AuditData, DatasetError, dataset_job_mem_mb, dataset_params_problems, prepare_audit_data
from unlearn_audit.pipeline.config import ConfigError, validate_config
from workflow_utils import REPO

EXAMPLE = REPO / "examples" / "own_model_data"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
LOADER, FACTORY = "own_model_data.data:load", "own_model_data.model:mlp"


@pytest.fixture(autouse=True)
def importable(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))


@pytest.fixture()
def own_package(tmp_path, monkeypatch):
    """A package of broken loaders and factories, importable for one test."""
    pkg = tmp_path / "broken_own"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "parts.py").write_text(textwrap.dedent("""
        from own_model_data.data import load

        def no_kwargs(split, batch_size):
            return None

        def wrong_m(*, split, batch_size, m, seed, resources_dir):
            return load(split=split, batch_size=batch_size, m=m + 1, seed=seed, resources_dir=resources_dir)

        def not_audit_data(*, split, batch_size, m, seed, resources_dir):
            return {"retain_x": []}

        def not_a_module(width=1):
            return "a string"
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in [m for m in sys.modules if m.startswith("broken_own")]:
        monkeypatch.delitem(sys.modules, name)
    return "broken_own.parts"


def test_the_example_loader_keeps_the_contract_and_is_deterministic():
    a = prepare_audit_data(LOADER, split="uniform", batch_size=2, m=12, seed=5, resources_dir="unused")
    b = prepare_audit_data(LOADER, split="uniform", batch_size=2, m=12, seed=5, resources_dir="unused")
    assert isinstance(a, AuditData) and a.kind == "classification" and (a.m, a.batch_size) == (12, 2)
    assert len(a.forget_x) == 24 and np.array_equal(np.bincount(a.forget_batch), np.full(12, 2))
    assert all(np.array_equal(getattr(a, f), getattr(b, f)) for f in ("retain_x", "forget_x", "test_y", "forget_id"))
    ids = np.concatenate([a.retain_id, a.forget_id, a.val_id, a.test_id])
    assert len(np.unique(ids)) == len(ids)  # the four parts are disjoint
    other = prepare_audit_data(LOADER, split="uniform", batch_size=2, m=12, seed=6, resources_dir="unused")
    assert not np.array_equal(a.forget_id, other.forget_id)
    assert dataset_job_mem_mb(LOADER) == 200  # the loader's job_mem_mb attribute


def test_the_example_model_builds_from_its_params_and_is_scored_per_row():
    import torch

    from unlearn_audit.models import build_model, initial_model
    from unlearn_audit.scores import model_scores

    model = build_model(FACTORY, in_features=20, hidden=8, num_classes=4)
    x0 = initial_model(FACTORY, {"in_features": 20, "hidden": 8, "num_classes": 4}, 3)
    assert all(torch.equal(x0[k], initial_model(FACTORY, {"in_features": 20, "hidden": 8, "num_classes": 4}, 3)[k]) for k in x0)
    data = prepare_audit_data(LOADER, split="uniform", batch_size=1, m=10, seed=0, resources_dir="unused")
    scores = model_scores(model, torch.from_numpy(data.forget_x), torch.from_numpy(data.forget_y), kind=data.kind)
    assert scores["logit"].shape == (10,) and set(np.unique(scores["correct"])) <= {0.0, 1.0}
    with pytest.raises(ValueError, match="cannot be built from params"):
        build_model(FACTORY, depth=3)


def _config(dataset=LOADER, model=FACTORY, model_params=None, dataset_params=None) -> dict:
    cfg = yaml.safe_load((EXAMPLE / "config.yaml").read_text())
    design = cfg["nn"]["designs"]["tabular"]
    design["dataset"], design["model"]["name"] = dataset, model
    if model_params is not None:
        design["model"]["params"] = model_params
    if dataset_params is not None:
        design["dataset_params"] = dataset_params
    return cfg


def test_the_example_config_is_valid():
    validate_config(_config(), SCHEMA)


@pytest.mark.parametrize(("change", "key", "words"), [
    ({"dataset": "no_such_pkg_xyz.data:load"}, "nn.designs.tabular.dataset", ["cannot import module 'no_such_pkg_xyz.data'", "PYTHONPATH"]),
    ({"dataset": "own_model_data.data:lod"}, "nn.designs.tabular.dataset", ["has no attribute 'lod'"]),
    ({"dataset": "own_model_data.data:"}, "nn.designs.tabular.dataset", ["neither one of", "import path"]),
    ({"dataset": "own_model_data.data:load", "dataset_params": {"n_rows": 3}}, "nn.designs.tabular.dataset_params", ["cannot take", "n_rows"]),
    ({"model": "own_model_data.model:mpl"}, "nn.designs.tabular.model.name", ["has no attribute 'mpl'"]),
    ({"model": "own_model_data.model:mlp", "model_params": {"depth": 2}}, "nn.designs.tabular.model.params", ["cannot be built from params", "depth"]),
    ({"model": "resnet"}, "nn.designs.tabular.model.name", ["neither one of", "tinynet"]),
])
def test_a_wrong_model_or_dataset_is_refused_before_any_job(change, key, words):
    cfg = _config(**change)
    with pytest.raises(ConfigError) as err:
        validate_config(cfg, SCHEMA)
    text = str(err.value)
    assert f"config key '{key}'" in text and all(w in text for w in words), text


def test_a_loader_breaking_the_contract_fails_with_what_it_broke(own_package):
    assert any("cannot take" in p for p in dataset_params_problems(f"{own_package}:no_kwargs", {}))
    with pytest.raises(DatasetError, match="the loader returned m = 13 candidate batches, the design asks for m = 12"):
        prepare_audit_data(f"{own_package}:wrong_m", split="uniform", batch_size=1, m=12, seed=0, resources_dir="x")
    with pytest.raises(DatasetError, match="returned 'dict', not an AuditData"):
        prepare_audit_data(f"{own_package}:not_audit_data", split="uniform", batch_size=1, m=12, seed=0, resources_dir="x")
    from unlearn_audit.models import build_model

    with pytest.raises(ValueError, match="returned 'str', not a torch.nn.Module"):
        build_model(f"{own_package}:not_a_module")
