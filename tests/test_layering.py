"""The house's floors (docs/development.md): stats and auditors never import torch, report computes no
statistics, nothing imports snakemake, and the small jobs start without torch or matplotlib
(tests/workflow/test_core.py dry-runs the Snakefile with torch not importable at all)."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest


REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "unlearn_audit"


def _is_module(name: str, root: Path) -> bool:
    """Whether the dotted ``name`` is a module file or a package folder of the package at ``root``."""
    path = root.parent.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def _imports_of(path: Path, root: Path = SRC) -> set[str]:
    """Absolute names of the modules a file of the package at ``root`` imports, relative imports
    resolved in the package.  ``from X import y`` names X and, where y is a submodule or subpackage
    of X (``from . import y``, ``from .. import y``), X.y as well: importing it runs that module."""
    tree = ast.parse(path.read_text())
    package = path.relative_to(root.parent).with_suffix("").parts[:-1]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                module = ".".join(base + ((node.module,) if node.module else ()))
            else:
                module = node.module or ""
            out.add(module)
            if module.split(".")[0] == root.name:
                out |= {f"{module}.{a.name}" for a in node.names if a.name != "*" and _is_module(f"{module}.{a.name}", root)}
    return out


def test_stats_imports_only_numpy_scipy_and_checks():
    for path in (SRC / "stats").glob("*.py"):
        for name in _imports_of(path):
            top = name.split(".")[0]
            if top == "unlearn_audit":
                # catalogue: the lists of the ground floor (standard library only), e.g. the score names
                assert name.startswith(("unlearn_audit.stats", "unlearn_audit.checks", "unlearn_audit._lazy", "unlearn_audit.catalogue")), f"{path.name} imports {name}"
            else:
                assert top in {"numpy", "scipy", "math", "dataclasses", "functools", "typing", "itertools", "__future__", ""}, f"{path.name} imports {name}"


def test_auditors_never_import_torch_or_training():
    for path in (SRC / "auditors").glob("*.py"):
        for name in _imports_of(path):
            assert name.split(".")[0] != "torch", f"{path.name} imports {name}"
            assert not name.startswith(("unlearn_audit.training", "unlearn_audit.models", "unlearn_audit.unlearning", "unlearn_audit.pipeline")), f"{path.name} imports {name}"


def test_training_never_looks_models_up_by_name():
    """``training`` takes model factories (``models.model_factories``); it never imports the registry."""
    for path in (SRC / "training").glob("*.py"):
        for name in _imports_of(path):
            assert not name.startswith(("unlearn_audit.models", "unlearn_audit.unlearning", "unlearn_audit.pipeline")), f"training/{path.name} imports {name}"


def test_report_computes_no_statistics():
    for path in (SRC / "report").glob("*.py"):
        for name in _imports_of(path):
            assert not name.startswith(("unlearn_audit.stats", "unlearn_audit.auditors", "unlearn_audit.gaussian_unlearning")), f"report/{path.name} imports {name}"


def test_nothing_in_the_library_imports_snakemake():
    for path in SRC.rglob("*.py"):
        assert not any(n.split(".")[0] == "snakemake" for n in _imports_of(path)), path


#: What each module may not load on import: torch for everything the torch-free layers and the
#: Snakefile import; also matplotlib (figures import it when drawn) and scipy.stats (the library
#: uses scipy.special) for the many small jobs of the audit, table and figure rules.  Only the
#: training rules (pipeline.nn_runs) load torch.
NOT_LOADED = {
    **{m: ("torch",) for m in ("unlearn_audit", "unlearn_audit.stats.bounds", "unlearn_audit.auditors",
                               "unlearn_audit.pipeline.config", "unlearn_audit.unlearning", "unlearn_audit.pipeline.provenance")},
    **{m: ("torch", "matplotlib", "scipy.stats") for m in (
        "unlearn_audit.pipeline.nn", "unlearn_audit.pipeline.certified", "unlearn_audit.pipeline.convex",
        "unlearn_audit.pipeline.gaussian_unlearning", "unlearn_audit.pipeline.statistics",
        "unlearn_audit.pipeline.tradeoff", "unlearn_audit.report")},
}

# One interpreter imports what every job may load (numpy, pandas, pyarrow, scipy.special and
# scipy.optimize, yaml, jsonschema: none of them loads a forbidden module) and forks a fresh child
# per module, which imports it and reports what forbidden modules it loaded.
FORKED_IMPORTS = r"""
import json, os, sys
import numpy, pandas, pyarrow.parquet, scipy.optimize, scipy.special, yaml, jsonschema
for module, forbidden in json.loads(sys.argv[1]).items():
    assert not [m for m in forbidden if m in sys.modules], "the parent loaded a forbidden module"
    pid = os.fork()
    if pid == 0:
        __import__(module)
        print(json.dumps({module: [m for m in forbidden if m in sys.modules]}), flush=True)
        os._exit(0)
    if os.waitpid(pid, 0)[1] != 0:
        print(json.dumps({module: "import failed"}), flush=True)
"""


def _forbidden_loaded(not_loaded: dict, parent_imports: str) -> dict:
    script = FORKED_IMPORTS.replace("import numpy, pandas, pyarrow.parquet, scipy.optimize, scipy.special, yaml, jsonschema", parent_imports)
    proc = subprocess.run([sys.executable, "-c", script, json.dumps(not_loaded)], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return {k: v for line in proc.stdout.splitlines() for k, v in json.loads(line).items()}


def test_imports_do_not_load_torch_or_what_the_small_jobs_do_not_need():
    loaded = _forbidden_loaded(NOT_LOADED, "import numpy, pandas, pyarrow.parquet, scipy.optimize, scipy.special, yaml, jsonschema")
    assert loaded == {module: [] for module in NOT_LOADED}, loaded


#: Every Snakemake start (each dry run, each cluster job's two starts) imports the Snakefile's
#: modules, and every training or unlearning job imports pipeline.nn_runs: the package tops are
#: lazy (unlearn_audit._lazy), so neither pays for the auditors' scipy.optimize and pandas.
NOT_LOADED_AT_START = {
    "unlearn_audit.pipeline.plan": ("pandas", "scipy", "torch"),
    "unlearn_audit.pipeline.config": ("pandas", "scipy", "torch"),
    "unlearn_audit.pipeline.nn_runs": ("scipy.optimize", "unlearn_audit.auditors", "unlearn_audit.stats.bounds"),
}


def test_the_snakefile_and_the_training_jobs_import_only_what_they_use():
    loaded = _forbidden_loaded(NOT_LOADED_AT_START, "import numpy, yaml, jsonschema")
    assert loaded == {module: [] for module in NOT_LOADED_AT_START}, loaded


def test_the_public_names_of_the_package_tops_resolve():
    import unlearn_audit
    import unlearn_audit.auditors
    import unlearn_audit.stats

    for package in (unlearn_audit, unlearn_audit.stats, unlearn_audit.auditors):
        for name in package.__all__:
            assert getattr(package, name) is not None, f"{package.__name__}.{name}"
        assert set(package.__all__) <= set(dir(package))
    assert unlearn_audit.stats.bounds.epsilon_lower_bound is unlearn_audit.epsilon_lower_bound
    with pytest.raises(AttributeError, match="no attribute 'not_a_name'"):
        unlearn_audit.not_a_name


def _module_graph(root: Path = SRC) -> dict[str, set[str]]:
    """{module: the modules of the package at ``root`` it imports}, lazy imports (inside functions) included."""
    modules = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in modules.items():
        deps = set()
        for imported in _imports_of(path, root):
            target = imported  # "pkg.mod.name" -> the longest prefix that is a module
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name:
                deps.add(target)
        graph[name] = deps
    return graph


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan): every import circle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    circles: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(circles)


#: Import circles allowed to remain: none (every circle found was taken apart; none may be added).
KNOWN_CIRCLES: list[list[str]] = []


def test_the_graph_resolves_from_dot_import_to_submodules(tmp_path):
    """``from . import b`` and ``from .. import e`` import the submodules b and e, so a circle through
    them (a imports b by ``from . import b``, b imports a by ``from .a import f``) is seen; a name
    that is not a module (``from . import VALUE``) stays an import of the package."""
    files = {
        "pkg/__init__.py": "VALUE = 1\n",
        "pkg/a.py": "from . import b\n\ndef f():\n    return b\n",
        "pkg/b.py": "from .a import f\n",
        "pkg/c.py": "from . import VALUE\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/d.py": "from .. import e\n",
        "pkg/e.py": "def g():\n    from .sub import d\n    return d\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = _module_graph(tmp_path / "pkg")
    assert graph["pkg.a"] == {"pkg", "pkg.b"} and graph["pkg.b"] == {"pkg.a"}
    assert graph["pkg.c"] == {"pkg"}
    assert graph["pkg.sub.d"] == {"pkg", "pkg.e"} and graph["pkg.e"] == {"pkg.sub", "pkg.sub.d"}
    assert import_circles(graph) == [["pkg.a", "pkg.b"], ["pkg.e", "pkg.sub.d"]]


def test_no_new_import_circle_lazy_imports_included():
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]  # the detector finds one
    circles = import_circles(_module_graph())
    new = [c for c in circles if c not in KNOWN_CIRCLES]
    assert not new, f"import circle(s) {new}: move the shared code into a module both can import"
    assert circles == KNOWN_CIRCLES, f"a known circle is gone ({[c for c in KNOWN_CIRCLES if c not in circles]}): drop it from KNOWN_CIRCLES"


def test_the_catalogue_is_the_ground_floor():
    """catalogue.py holds the lists every floor reads (tables, figures, convex mechanisms, scores):
    it imports nothing of the package and nothing outside the standard library."""
    for name in _imports_of(SRC / "catalogue.py"):
        assert name.split(".")[0] in {"__future__", "dataclasses", "re", "typing"}, f"catalogue.py imports {name}"


def test_the_plan_imports_nothing_above_it_and_its_reports_sit_on_the_cli_floor():
    """Inside pipeline/plan/ no module imports its package's root (``WorkflowPlan``) from a subpackage
    or anything of pipeline/ outside plan/ (0 arrows back up); the reports of ``plan`` and ``plan
    --check`` (plan_reports/) read the plan, and nothing in pipeline/ imports them."""
    plan = SRC / "pipeline" / "plan"
    for path in plan.rglob("*.py"):
        for name in _imports_of(path):
            if not name.startswith("unlearn_audit.pipeline"):
                continue
            assert name.startswith("unlearn_audit.pipeline.plan"), f"{path.relative_to(SRC)} imports {name}"
            if path.parent != plan:
                assert name != "unlearn_audit.pipeline.plan", f"{path.relative_to(SRC)} imports the plan's root"
    for path in (SRC / "pipeline").rglob("*.py"):
        assert not any(n.startswith("unlearn_audit.plan_reports") for n in _imports_of(path)), path
    assert {"unlearn_audit.pipeline.plan"} <= _imports_of(SRC / "plan_reports" / "hours.py")
