"""The library asks a spec, never a built-in name (docs/development.md#recipes): outside the modules
that define the specs and their registries, no comparison (``==``, ``!=``, ``in``, ``not in``) has a
string constant naming a built-in method, control, model, dataset or Gaussian-unlearning
experiment on either side.  The names come from the registries themselves, so a new entry is
covered the day it is added."""

from __future__ import annotations

import ast
from pathlib import Path

from unlearn_audit.catalogue import CONTROL_METHOD, CONTROLS, GAUSSIAN_UNLEARNING_EXPERIMENTS
from unlearn_audit.data import DATASETS
from unlearn_audit.model_specs import MODEL_SPECS
from unlearn_audit.unlearning.params import METHOD_SPECS

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "unlearn_audit"

#: The modules that define the specs and registries (where the names are written down, once).
SPEC_MODULES = {
    "unlearning/spec.py",
    "unlearning/params.py",
    "model_specs.py",
    "data/__init__.py",
    "data/sizes.py",
    "catalogue.py",
}

_OPS = (ast.Eq, ast.NotEq, ast.In, ast.NotIn)


def builtin_names() -> set[str]:
    """Every name the registries hold: methods, controls (and the bases they run on), models (and
    their aliases), datasets and Gaussian-unlearning experiments."""
    names = set(METHOD_SPECS) | set(DATASETS) | set(GAUSSIAN_UNLEARNING_EXPERIMENTS) | set(CONTROLS)
    names |= {spec.base for spec in CONTROLS.values()}
    names |= set(MODEL_SPECS) | {alias for spec in MODEL_SPECS.values() for alias in spec.aliases}
    return names


def _constants(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    return []


def name_comparisons(source: str, names: set[str]) -> list[tuple[int, str]]:
    """(line, comparison) of every comparison in ``source`` with a string constant of ``names`` on a side."""
    hits = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Compare):
            continue
        sides = [node.left, *node.comparators]
        for op, (a, b) in zip(node.ops, zip(sides, sides[1:])):
            if isinstance(op, _OPS) and any(c in names for side in (a, b) for c in _constants(side)):
                hits.append((node.lineno, ast.unparse(node)))
                break
    return hits


def test_no_module_outside_the_specs_compares_a_builtin_name():
    names = builtin_names()
    hits = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative not in SPEC_MODULES:
            hits += [f"src/unlearn_audit/{relative}:{line}: {text}" for line, text in name_comparisons(path.read_text(), names)]
    assert not hits, "ask the spec instead of comparing a built-in name:\n" + "\n".join(hits)


def test_the_scan_sees_a_comparison_of_each_kind():
    names = builtin_names()
    source = "\n".join([
        'a = method == "ida"', 'b = "digits" != dataset', 'c = name in ("tinynet", "x")', 'd = base not in ["retrain"]',
        'e = experiment == "ged_vs_eps"', 'f = method == "my_method"', 'g = model["name"] == "lstm"',
    ])
    assert [line for line, _ in name_comparisons(source, names)] == [1, 2, 3, 4, 5, 7]


def test_the_controls_run_the_one_method_whose_spec_is_a_control():
    assert {name for name, spec in METHOD_SPECS.items() if spec.control} == {CONTROL_METHOD}


def test_the_allow_list_names_modules_that_exist():
    assert all((PACKAGE / module).is_file() for module in SPEC_MODULES)
