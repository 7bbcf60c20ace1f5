"""The release (docs/development.md, "Releasing"): the version the CHANGELOG's top entry names is the
package's, the wheel builds and passes ``twine check``, and installed without its dependencies beside
them, away from the checkout, it runs the statistics quick start."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

import unlearn_audit

REPO = Path(__file__).resolve().parents[1]


def test_the_changelog_leads_with_the_packages_version():
    top = re.search(r"^## (\S+)", (REPO / "CHANGELOG.md").read_text(), re.MULTILINE)
    assert top and top.group(1) == unlearn_audit.__version__


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(REPO)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]
    (built,) = out.glob("*.whl")
    return built


def test_the_wheel_builds_and_passes_twine_check(wheel):
    assert wheel.name == f"unlearn_audit-{unlearn_audit.__version__}-py3-none-any.whl"
    check = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel)], capture_output=True, text=True)
    assert check.returncode == 0 and "PASSED" in check.stdout, check.stdout + check.stderr
    names = zipfile.ZipFile(wheel).namelist()
    meta = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    assert "unlearn_audit/cli.py" in names and "unlearn_audit/stats/bounds.py" in names
    assert f"Version: {unlearn_audit.__version__}" in meta and "License: MIT" in meta
    assert not any(n.startswith(("tests/", "analysis/", "workflow/")) for n in names)


def test_the_installed_wheel_runs_the_quick_start_away_from_the_checkout(wheel, tmp_path):
    """A venv that sees this environment's packages but not the checkout's package, the wheel
    installed into it with --no-deps; the CLI's quick start from a folder outside the checkout."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    target = tmp_path / "installed"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", "--target", str(target), str(wheel)],
                         capture_output=True, text=True, timeout=300)
    assert pip.returncode == 0, pip.stderr[-2000:]
    # the dependencies as plain path entries (the editable install's .pth hook does not run), the wheel first
    (site / "deps.pth").write_text(f"{target}\n{sysconfig.get_paths()['purelib']}\n")
    work = tmp_path / "work"
    shutil.copytree(REPO / "examples" / "scores", work / "scores")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}

    def cli(*args: str) -> dict:
        proc = subprocess.run([str(python), "-m", "unlearn_audit", *args], capture_output=True, text=True, cwd=work, env=env, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return json.loads(proc.stdout)

    where = subprocess.run([str(python), "-c", "import unlearn_audit; print(unlearn_audit.__file__, unlearn_audit.__version__)"],
                           capture_output=True, text=True, cwd=work, env=env, check=True).stdout.split()
    assert Path(where[0]).is_relative_to(target) and where[1] == unlearn_audit.__version__
    bound = cli("bound", "--m", "100", "--r", "60", "--overlaps", "58,56,60,55,57,59,58,56,60,57")
    assert bound["epsilon_lb"] > 0 and bound["rejected"]
    audit = cli("audit", "--scores", "scores", "--r", "20,40,60")
    rows = [b for a in audit["audits"] for b in a["bounds"]]
    assert [a["r"] for a in audit["audits"]] == [20, 40, 60] and audit["evaluation_runs"] == 10
    assert [b["r"] for b in rows if b["role"] == "preregistered"] == [60]  # the quick start's pre-registered cell
