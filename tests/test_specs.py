"""Each extensible concept's spec (docs/development.md#recipes): the built-in ones are known without
torch, the registry reads them rather than restating them, and a method, model or dataset of one's
own by import path gets a spec of the same kind with the defaults."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from unlearn_audit.catalogue import GAUSSIAN_UNLEARNING_EXPERIMENTS
from unlearn_audit.data import DATASETS, dataset_spec
from unlearn_audit.model_specs import MODEL_SPECS, ModelSpec, model_spec
from unlearn_audit.unlearning import MethodSpec, method_spec
from unlearn_audit.unlearning.params import METHOD_SPECS, IDAParams
from unlearn_audit.unlearning.registry import NoiseRelease, _check_against_spec
from unlearn_audit.unlearning.spec import epochs_work

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_a_builtin_methods_spec_is_its_registrations():
    from unlearn_audit.unlearning import UNLEARNING_METHODS, _load_builtins

    _load_builtins()
    for name, spec in METHOD_SPECS.items():
        method = UNLEARNING_METHODS[name]
        assert method.spec is spec and method.params_cls is spec.params
        assert (method.certified, method.uses_forget) == (spec.certified, spec.uses_forget), name
        assert (method.final_steps is not None) == spec.grouped, name
        assert (method.noise_release.params if method.noise_release else ()) == spec.release_params, name


def test_an_implementation_that_disagrees_with_its_spec_is_refused():
    spec = METHOD_SPECS["hessian"]
    with pytest.raises(TypeError, match="disagree with its spec"):
        _check_against_spec(spec, NoiseRelease(print, print, ("scale",)), None)
    with pytest.raises(TypeError, match="disagree with its spec"):
        _check_against_spec(METHOD_SPECS["ida"], None, None)  # IDA's final retain steps are grouped


def test_a_method_of_ones_own_gets_the_default_spec(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES / "noisy_finetune"))
    spec = method_spec("noisy_finetune.algorithm:noisy_finetune")
    assert isinstance(spec, MethodSpec) and spec.params.__name__ == "NoisyFinetuneParams"
    assert not (spec.certified or spec.control or spec.grouped) and spec.training_loop and spec.work is epochs_work
    assert spec.config_problems(None, {}, key="k", design_key="d", n_retain=None) == []


def test_the_default_work_is_epochs_over_the_retain_set():
    p = IDAParams(epochs=2, batch_size=10)
    assert epochs_work(p, 95.0, 7.0) == (2 * 10.0, 2 * 95.0)
    assert epochs_work(object(), 95.0, 7.0) == (1.0, 95.0)  # no epochs, no batch size: one pass, one step
    assert METHOD_SPECS["ida"].work(p, 95.0, 7.0)[0] > epochs_work(p, 95.0, 7.0)[0]  # IDA's own: its interleaved epochs too


def test_a_model_and_a_dataset_of_ones_own_get_the_default_specs(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLES / "own_model_data"))
    model = model_spec("own_model_data.model:mlp")
    assert model == ModelSpec("own_model_data.model:mlp", "own_model_data.model:mlp") and model.grouped is None
    name, label, flops = model.cost_key({"model": {"name": "own_model_data.model:mlp"}, "dataset": "digits"})
    assert (name, label) == ("own_model_data.model:mlp", "-") and math.isnan(flops)
    assert model.job_mem_mb({}) == 0 and model.config_problems({}) == []
    data = dataset_spec("own_model_data.data:load")
    assert data.kind == "own" and data.job_mem_mb == sys.modules["own_model_data.data"].JOB_MEM_MB
    assert all(math.isnan(v) for v in data.sizes({"dataset": "own_model_data.data:load"}, math.nan))
    assert model_spec("not_a_model") is None and dataset_spec("not_a_dataset") is None


def test_the_builtin_models_factories_and_the_text_datasets_sizes():
    assert MODEL_SPECS["tinynet"].load_grouped().__name__ == "GroupedTinyNet"
    assert [name for name, spec in MODEL_SPECS.items() if spec.grouped] == ["tinynet"]
    assert not DATASETS["shakespeare"].exact_sizes and DATASETS["digits"].exact_sizes
    retain, pool, test = DATASETS["digits"].sizes({"dataset_params": {"max_retain": 200}}, 24.0)
    assert (retain, pool, test) == (200.0, 24.0, DATASETS["digits"].n_test)


def test_a_gaussian_unlearning_experiments_grid_and_cell():
    section = {"p": [40, 80], "epsilon": 0.75, "epsilons": [0.5, 1.0]}
    assert GAUSSIAN_UNLEARNING_EXPERIMENTS["ged_vs_p"].grid(section) == [40, 80]
    assert GAUSSIAN_UNLEARNING_EXPERIMENTS["ged_vs_p"].epsilon_arguments(section) == {"epsilon": 0.75}
    eps = GAUSSIAN_UNLEARNING_EXPERIMENTS["ged_vs_eps"]
    assert eps.grid({"p": 60}) == [60] and eps.epsilon_arguments(section) == {"epsilons": (0.5, 1.0)}
    from unlearn_audit.import_paths import import_object

    for spec in GAUSSIAN_UNLEARNING_EXPERIMENTS.values():
        assert callable(import_object(spec.cell, "cell", "'package.module:function'"))
