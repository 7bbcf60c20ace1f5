"""The house's floors (ARCHITECTURE): stats and auditors never import torch; parsing the
Snakefile (a dry run) works with torch not importable at all."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SRC = REPO / "src" / "unlearn_audit"


def _imports_of(path: Path) -> set[str]:
    """Absolute names of the modules a file imports (relative imports resolved in the package)."""
    tree = ast.parse(path.read_text())
    parts = path.relative_to(SRC.parent).with_suffix("").parts
    package = parts[:-1] if parts[-1] != "__init__" else parts[:-1]
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - node.level + 1]
                out.add(".".join(base + ((node.module,) if node.module else ())))
            else:
                out.add(node.module or "")
    return out


def test_stats_imports_only_numpy_scipy_and_checks():
    for path in (SRC / "stats").glob("*.py"):
        for name in _imports_of(path):
            top = name.split(".")[0]
            if top == "unlearn_audit":
                assert name.startswith(("unlearn_audit.stats", "unlearn_audit.checks")), f"{path.name} imports {name}"
            else:
                assert top in {"numpy", "scipy", "math", "dataclasses", "functools", "typing", "itertools", "__future__", ""}, f"{path.name} imports {name}"


def test_auditors_never_import_torch_or_training():
    for path in (SRC / "auditors").glob("*.py"):
        for name in _imports_of(path):
            assert name.split(".")[0] != "torch", f"{path.name} imports {name}"
            assert not name.startswith(("unlearn_audit.training", "unlearn_audit.models", "unlearn_audit.unlearning", "unlearn_audit.pipeline")), f"{path.name} imports {name}"


def test_report_computes_no_statistics():
    for path in (SRC / "report").glob("*.py"):
        for name in _imports_of(path):
            assert not name.startswith(("unlearn_audit.stats", "unlearn_audit.auditors", "unlearn_audit.gaussian_unlearning")), f"report/{path.name} imports {name}"


def test_nothing_in_the_library_imports_snakemake():
    for path in SRC.rglob("*.py"):
        assert not any(n.split(".")[0] == "snakemake" for n in _imports_of(path)), path


@pytest.mark.parametrize("module", ["unlearn_audit", "unlearn_audit.stats.bounds", "unlearn_audit.auditors", "unlearn_audit.pipeline.config", "unlearn_audit.unlearning"])
def test_import_does_not_load_torch(module):
    code = f"import sys, {module}; assert 'torch' not in sys.modules, sorted(m for m in sys.modules if m.startswith('torch'))[:3]"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


@pytest.mark.parametrize(
    "module",
    ["unlearn_audit.pipeline.nn", "unlearn_audit.pipeline.certified", "unlearn_audit.pipeline.convex",
     "unlearn_audit.pipeline.gaussian_unlearning", "unlearn_audit.pipeline.statistics", "unlearn_audit.pipeline.tradeoff", "unlearn_audit.report"],
)
def test_statistics_and_table_jobs_load_neither_torch_nor_matplotlib(module):
    """The many small jobs of the audit, table and figure rules start without torch, matplotlib
    (figures import it when drawn) and scipy.stats (the library uses scipy.special); only the
    training rules (pipeline.nn_runs) load torch."""
    code = (
        f"import sys, {module}; loaded = [m for m in ('torch', 'matplotlib', 'scipy.stats') if m in sys.modules]; "
        "assert not loaded, loaded"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO)


@pytest.mark.workflow
def test_dry_run_works_with_torch_not_importable(tmp_path):
    blocker = tmp_path / "block"
    (blocker / "torch").mkdir(parents=True)
    (blocker / "torch" / "__init__.py").write_text("raise ImportError('torch is blocked in this test')\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(blocker), os.environ.get("PYTHONPATH", "")]))
    check = subprocess.run([sys.executable, "-c", "import torch"], env=env, capture_output=True, text=True)
    assert check.returncode != 0 and "blocked" in check.stderr
    proc = subprocess.run(
        [sys.executable, "-m", "snakemake", "-n", "--cores", "1", "-s", str(REPO / "Snakefile"), "-d", str(tmp_path / "work")],
        env=env, capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "nn_train_digits_uniform_calib_0" in proc.stdout + proc.stderr
