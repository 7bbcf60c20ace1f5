"""docs/development.md's map names only code that is there (its section "How the map names code"):
every backticked ``unlearn_audit.<module>:<Symbol>`` is defined in that module -- a top-level
``def``, ``class`` or assignment in its source, and for a function or class its ``__module__`` --
never merely imported there, and every backticked repository path exists.  A doctored map fails."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SRC = REPO / "src"
MAP = (REPO / "docs" / "development.md").read_text()

#: A symbol reference: `unlearn_audit.module.path:Symbol`.
SYMBOL = re.compile(r"`(unlearn_audit(?:\.[A-Za-z_][A-Za-z0-9_]*)*):([A-Za-z_][A-Za-z0-9_]*)`")
#: A path reference: a backticked path under one of the repository's top folders, no placeholder.
PATH = re.compile(r"`((?:src|workflow|tests|config|docs|examples|benchmarks)/[^`<>*\s]*)`")


def _source(module: str) -> Path | None:
    """The source file of a dotted module of the package (its ``__init__.py`` for a package)."""
    base = SRC.joinpath(*module.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def _defined_names(source: Path) -> dict[str, str]:
    """{name: "def" | "class" | "assign"} of the names a module's source defines at its top level."""
    out: dict[str, str] = {}
    for node in ast.parse(source.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[node.name] = "def"
        elif isinstance(node, ast.ClassDef):
            out[node.name] = "class"
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        out.setdefault(name.id, "assign")
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out.setdefault(node.target.id, "assign")
    return out


def map_problems(text: str, import_modules: bool = True) -> list[str]:
    """What is wrong with the references of a map ``text``: a module or path that does not exist, a
    symbol its module does not define (or, imported, whose ``__module__`` is another's)."""
    problems = []
    for module, name in sorted(set(SYMBOL.findall(text))):
        source = _source(module)
        if source is None:
            problems.append(f"`{module}:{name}`: no module {module} under src/")
            continue
        kind = _defined_names(source).get(name)
        if kind is None:
            problems.append(f"`{module}:{name}`: {name} is not defined in {source.relative_to(REPO)}")
        elif kind in ("def", "class") and import_modules:
            obj = getattr(importlib.import_module(module), name)
            if getattr(obj, "__module__", module) != module:
                problems.append(f"`{module}:{name}`: {name} is {obj.__module__}'s")
    for path in sorted(set(PATH.findall(text))):
        if not (REPO / path).exists():
            problems.append(f"`{path}`: no such file or folder")
    return problems


def test_the_map_uses_the_checked_form():
    symbols, paths = SYMBOL.findall(MAP), PATH.findall(MAP)
    assert len(set(symbols)) >= 30 and len(set(paths)) >= 20, (len(set(symbols)), len(set(paths)))
    for recipe in ("Add an unlearning method", "Add a model", "Add a dataset", "Add a membership score",
                   "Add a Gaussian-unlearning experiment"):
        assert f"### {recipe}\n" in MAP, recipe


def test_every_symbol_and_path_of_the_map_is_where_it_says():
    problems = map_problems(MAP)
    assert not problems, "docs/development.md:\n" + "\n".join(problems)


def test_a_doctored_map_fails():
    # SCORE_NAMES lives in catalogue; selection only imports it (a re-export is no definition)
    assert map_problems("`unlearn_audit.catalogue:SCORE_NAMES`") == []
    assert map_problems("`unlearn_audit.stats.selection:SCORE_NAMES`") == [
        "`unlearn_audit.stats.selection:SCORE_NAMES`: SCORE_NAMES is not defined in src/unlearn_audit/stats/selection.py"]
    # register is the registry's; the package re-exports it
    assert map_problems("`unlearn_audit.unlearning:register`", import_modules=False)
    assert map_problems("`unlearn_audit.unlearning.registry:register`", import_modules=False) == []
    assert map_problems("`unlearn_audit.no_such_module:thing`") == ["`unlearn_audit.no_such_module:thing`: no module unlearn_audit.no_such_module under src/"]
    assert map_problems("`src/unlearn_audit/unlearning/no_such_method.py`") == [
        "`src/unlearn_audit/unlearning/no_such_method.py`: no such file or folder"]
    assert map_problems("`src/unlearn_audit/unlearning/<name>.py`") == []  # a placeholder is not a path

