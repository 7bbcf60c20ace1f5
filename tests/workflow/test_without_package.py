"""The workflow where Snakemake users look for it: in an environment with Snakemake and the runtime
dependencies but without this package installed (a clone used in place, a workflow
catalog's linter), workflow/Snakefile takes the library from the checkout's src/, so ``snakemake
--lint`` passes and a job that imports the library runs."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
import yaml

from workflow_utils import REPO, SNAKEFILE

pytestmark = pytest.mark.workflow


def _python_without_the_package(folder: Path) -> Path:
    """A venv whose interpreter sees this environment's installed packages (its site-packages as a
    plain path entry, so the editable install's own .pth hook is not run) but not unlearn_audit."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True)
    python = folder / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python


def _run(python: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"OMP_NUM_THREADS": "1"}
    return subprocess.run([str(python), "-m", "snakemake", "-s", str(SNAKEFILE), "-d", str(cwd), *args],
                          capture_output=True, text=True, env=env, timeout=300, cwd=cwd)


def test_the_workflow_lints_and_runs_a_job_without_the_package_installed(tmp_path):
    python = _python_without_the_package(tmp_path / "venv")
    probe = subprocess.run([str(python), "-c", "import snakemake, numpy, pandas\nimport unlearn_audit"], capture_output=True, text=True)
    assert "No module named 'unlearn_audit'" in probe.stderr  # the dependencies are there, the package is not
    work = tmp_path / "work"
    work.mkdir()
    lint = _run(python, "--lint", cwd=work)
    assert lint.returncode == 0, (lint.stdout + lint.stderr)[-3000:]
    assert "Congratulations, your workflow is in a good condition" in lint.stdout + lint.stderr
    # a script job: the library reaches the job's own process too
    job = _run(python, "--cores", "1", "results/config.yaml", cwd=work)
    assert job.returncode == 0, (job.stdout + job.stderr)[-3000:]
    snapshot = yaml.safe_load((work / "results" / "config.yaml").read_text())
    assert snapshot["nn"]["designs"] and snapshot["seed"] == yaml.safe_load((REPO / "config" / "config.yaml").read_text())["seed"]
