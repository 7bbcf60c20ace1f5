"""The library's declared dependencies are what it imports: every third-party module imported
anywhere under ``src/unlearn_audit`` is a core dependency in ``pyproject.toml`` (so ``pip install
unlearn-audit`` runs ``unlearn-audit plan``), or an optional extra's (``llm``: transformers) imported
only inside the functions that need it; what the library never imports (Snakemake and its SLURM
executor) is not a dependency."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

REPO = Path(__file__).resolve().parents[1]
#: import name -> distribution name, where they differ
DISTRIBUTION = {"yaml": "pyyaml", "sklearn": "scikit-learn"}


def _name(requirement: str) -> str:
    return re.split(r"[<>=!~\[ ;]", requirement, maxsplit=1)[0].lower()


def _third_party_imports(module_level_only: bool = False) -> set[str]:
    stdlib = set(sys.stdlib_module_names)
    found = set()
    for path in (REPO / "src" / "unlearn_audit").rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in (tree.body if module_level_only else ast.walk(tree)):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            else:
                continue
            for name in names:
                top = name.split(".")[0]
                if top not in stdlib and top != "unlearn_audit":
                    found.add(DISTRIBUTION.get(top, top).lower())
    return found


def test_every_imported_package_is_a_core_dependency():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    core = {_name(r) for r in project["dependencies"]}
    extras = {_name(r) for r in project["optional-dependencies"]["llm"]}
    missing = _third_party_imports() - core - extras
    assert not missing, f"imported by the library but not core dependencies: {sorted(missing)}"
    eager = _third_party_imports(module_level_only=True) & extras
    assert not eager, f"the llm extra's {sorted(eager)} imported at module level: import it inside the function that needs it"
    assert "jsonschema" in core  # pipeline/config.py validates configs (unlearn-audit plan)


def test_the_workflow_tools_are_not_core_dependencies():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    core = {_name(r) for r in project["dependencies"]}
    assert not any(n.startswith("snakemake") for n in core), sorted(core)
    workflow = {_name(r) for r in project["optional-dependencies"]["workflow"]}
    assert {"snakemake", "snakemake-executor-plugin-slurm"} <= workflow
    assert not any(n.startswith("snakemake") for n in _third_party_imports())


def test_the_license_pyproject_declares_is_at_the_root():
    """pyproject.toml's license is the one the LICENSE file grants (a wheel and a clone carry the same terms)."""
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["license"]["text"]
    text = (REPO / "LICENSE").read_text()
    assert declared == "MIT" and text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text
