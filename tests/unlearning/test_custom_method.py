"""An experiment's ``method`` as an import path ``package.module:function`` (Section 7's
algorithms are registered by name; anyone else's is imported): the worked example
``examples/noisy_finetune``, the errors of bad paths at config validation, and the audit end to end.
"""

from __future__ import annotations

import copy
import subprocess
import sys
import textwrap

import pytest
import torch

from unlearn_audit.pipeline.config import ConfigError, validate_config
from unlearn_audit.unlearning import MethodPathError, get_method, import_method, make_params, unlearn
from workflow_utils import REPO, load_config

EXAMPLE = REPO / "examples" / "noisy_finetune"
EXAMPLE_CONFIG = EXAMPLE / "config.yaml"
SCHEMA = REPO / "workflow" / "schemas" / "config.schema.yaml"
METHOD = "noisy_finetune.algorithm:noisy_finetune"
KEY = "nn.experiments.noisy_ft.method"

# A user package with one function per way of getting it wrong (and two right ones).
USER_MODULE = '''
from dataclasses import dataclass

SEEN = {}

@dataclass(frozen=True)
class Knobs:
    steps: int = 1

def good(model, retain, forget, params: Knobs, generator):
    SEEN["params"] = params
    return model

def untyped(model, retain, forget, params, generator):
    SEEN["params"] = params
    return model

def too_few(model, retain, forget):
    return model

def forgets_to_return(model, retain, forget, params, generator):
    model.weight.data.zero_()

def needs_more(model, retain, forget, params, generator, extra):
    return model

def not_a_dataclass(model, retain, forget, params: int, generator):
    return model

NOT_CALLABLE = 3

class AClass:
    def __init__(self, model, retain, forget, params, generator):
        pass
'''


@pytest.fixture
def user_package(tmp_path, monkeypatch):
    """A package ``<unique>.algos`` importable from ``tmp_path``; its name is unique per test."""
    name = f"userpkg_{tmp_path.name.replace('-', '_')}"
    pkg = tmp_path / name
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "algos.py").write_text(USER_MODULE)
    (pkg / "broken.py").write_text("import a_package_that_is_not_installed\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


@pytest.fixture
def example_on_path(monkeypatch):
    monkeypatch.syspath_prepend(str(EXAMPLE))


def example_config(method: str | None = None, params: dict | None = None) -> dict:
    cfg = load_config(EXAMPLE_CONFIG)
    if method is not None:
        cfg["nn"]["experiments"]["noisy_ft"]["method"] = method
    if params is not None:
        cfg["nn"]["experiments"]["noisy_ft"]["params"] = params
    return cfg


def config_error(cfg: dict) -> str:
    with pytest.raises(ConfigError) as info:
        validate_config(copy.deepcopy(cfg), SCHEMA)
    return str(info.value)


# ----------------------------------------------------------------------------- the worked example
def test_example_config_validates_and_resolves_the_params_dataclass(example_on_path):
    cfg = validate_config(example_config(), SCHEMA)
    exp = cfg["nn"]["experiments"]["noisy_ft"]
    p = make_params(exp["method"], exp["params"])
    assert type(p).__name__ == "NoisyFinetuneParams" and p.sigma == 0.001 and p.epochs == 1
    method = get_method(METHOD)
    assert method.params_cls is type(p) and not method.monitors and method.noise_release is None


def test_example_params_are_checked_at_validation(example_on_path):
    msg = config_error(example_config(params={"sigma": -1.0}))
    assert msg.startswith("config key 'nn.experiments.noisy_ft.params'") and "sigma must be >= 0" in msg
    msg = config_error(example_config(params={"sigmaa": 0.1}))
    assert "unknown parameter 'sigmaa'" in msg and "sigma" in msg


def test_example_algorithm_finetunes_then_adds_seeded_noise(example_on_path):
    torch.manual_seed(0)
    model = torch.nn.Linear(4, 3)
    x, y = torch.randn(32, 4), torch.randint(0, 3, (32,))
    forget = (x[:2], y[:2])

    def params_after(p, seed):
        out = unlearn(METHOD, model, (x, y), forget, p, generator=seed)
        return torch.cat([q.detach().flatten() for q in out.parameters()])

    before = torch.cat([q.detach().flatten() for q in model.parameters()])
    assert torch.equal(params_after({"epochs": 0, "sigma": 0.0}, 1), before)  # nothing to do: unchanged
    noisy = params_after({"epochs": 0, "sigma": 0.5}, 1)
    assert 0.2 < float((noisy - before).std()) < 1.0  # N(0, 0.5²) on every weight
    assert torch.equal(params_after({"epochs": 2, "sigma": 0.1}, 7), params_after({"epochs": 2, "sigma": 0.1}, 7))
    assert not torch.equal(params_after({"epochs": 2, "sigma": 0.1}, 7), params_after({"epochs": 2, "sigma": 0.1}, 8))
    assert torch.equal(torch.cat([q.detach().flatten() for q in model.parameters()]), before)  # the input model is kept


# ----------------------------------------------------------------------------- import paths
def test_good_path_with_a_dataclass_and_an_untyped_one(user_package):
    good = import_method(f"{user_package}.algos:good")
    assert good.params_cls.__name__ == "Knobs"
    assert make_params(good.name, {"steps": 3}).steps == 3
    with pytest.raises(ValueError, match="unknown parameter 'nope'"):
        make_params(good.name, {"nope": 1})
    untyped = get_method(f"{user_package}.algos:untyped")
    assert untyped.params_cls is dict
    model = torch.nn.Linear(2, 2)
    data = (torch.zeros(4, 2), torch.zeros(4, dtype=torch.long))
    unlearn(untyped.name, model, data, data, {"anything": [1, 2]}, generator=0)
    seen = sys.modules[f"{user_package}.algos"].SEEN["params"]
    assert seen == {"anything": [1, 2]} and type(seen) is dict  # a plain dict, unchecked


def test_a_method_that_returns_no_model_is_one_error_naming_it(user_package):
    """A method that changes the model in place and returns None fails at its first run with one
    message that names the method and the fix, not later where the model is scored."""
    name = f"{user_package}.algos:forgets_to_return"
    data = (torch.zeros(4, 2), torch.zeros(4, dtype=torch.long))
    with pytest.raises(TypeError, match=r"returned NoneType .* not the unlearned model: make it return the model") as info:
        unlearn(name, torch.nn.Linear(2, 2), data, data, {}, generator=0)
    assert name in str(info.value)


def test_registered_function_by_path_keeps_its_registration():
    method = get_method("unlearn_audit.unlearning.retain_finetune:retain_finetune")
    assert method.params_cls is get_method("retain_finetune").params_cls
    assert method.uses_forget is False


BAD_PATHS = [
    ("no_such_package_xyz.algos:good", ["cannot import module 'no_such_package_xyz.algos'", "PYTHONPATH", "pip install"]),
    ("{pkg}.nothere:good", ["cannot import module '{pkg}.nothere'", "PYTHONPATH"]),
    ("{pkg}.broken:good", ["importing module '{pkg}.broken' failed", "a_package_that_is_not_installed"]),
    ("{pkg}.algos:missing", ["has no attribute 'missing'", "check the name after ':'"]),
    ("{pkg}.algos:NOT_CALLABLE", ["'NOT_CALLABLE' is an object of type 'int', not a function"]),
    ("{pkg}.algos:AClass", ["'AClass' is a class, not a function"]),
    ("{pkg}.algos:too_few", ["too_few(model, retain, forget) does not take (model, retain, forget, params, generator)"]),
    ("{pkg}.algos:needs_more", ["does not take", "optionally with a monitor keyword"]),
    ("{pkg}.algos:not_a_dataclass", ["annotated <class 'int'>, which is not a dataclass", "plain dict"]),
    ("{pkg}.algos:", ["is not an import path", "'package.module:function'"]),
    ("no-dashes:fn", ["is not an import path"]),
    ("noisy_finetuning", ["unknown unlearning method 'noisy_finetuning'", "retain_finetune", "import path 'package.module:function'"]),
]


@pytest.mark.parametrize("path,fragments", BAD_PATHS, ids=[p for p, _ in BAD_PATHS])
def test_bad_method_is_one_error_naming_the_experiment_key(user_package, path, fragments):
    path = path.format(pkg=user_package)
    msg = config_error(example_config(method=path))
    assert msg.startswith(f"config key '{KEY}': ")
    assert "\n" not in msg
    for fragment in fragments:
        assert fragment.format(pkg=user_package) in msg
    if ":" in path:
        with pytest.raises(MethodPathError):
            get_method(path)


def test_validation_of_built_in_names_imports_no_torch():
    code = textwrap.dedent(f"""
        import sys
        from unlearn_audit.pipeline.config import load_yaml, validate_config
        validate_config(load_yaml({str(REPO / 'config' / 'config.yaml')!r}), {str(SCHEMA)!r})
        assert "torch" not in sys.modules, "validation imported torch"
    """)
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
