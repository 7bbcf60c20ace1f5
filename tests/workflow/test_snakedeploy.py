"""The workflow deployed by snakedeploy, the Snakemake workflow catalog's route, from a local clone at
a commit, offline (docs/workflow.md, "Deploying with snakedeploy").

snakedeploy writes a folder holding our ``config/`` and ``profiles/`` and a ``workflow/Snakefile``
that uses every rule of ours as a module.  From a GitHub repository the module names
``github("owner/repo", path="workflow/Snakefile", commit=...)``; from a local clone snakedeploy
0.17.1 writes ``"workflow/Snakefile"``, relative, which from the deployed folder names the deployed
Snakefile itself.  The documented step names the clone's Snakefile by its absolute path; with it the
deployed folder's dry run plans the default config's every table."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from workflow_utils import REPO, planned_jobs

pytestmark = pytest.mark.workflow

SNAKEDEPLOY = shutil.which("snakedeploy", path=str(Path(sys.executable).parent)) or shutil.which("snakedeploy")


def _run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", GIT_TERMINAL_PROMPT="0")
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.skipif(SNAKEDEPLOY is None, reason="snakedeploy is not installed (the dev extra: pip install -e '.[dev]')")
def test_snakedeploy_of_a_local_clone_at_a_commit_dry_runs_the_default_config(tmp_path):
    clone = tmp_path / "unlearn-audit"
    proc = _run(["git", "clone", "--quiet", "--no-hardlinks", REPO.as_uri(), str(clone)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    commit = _run(["git", "rev-parse", "HEAD"], clone).stdout.strip()
    dest = tmp_path / "deployed"
    proc = _run([SNAKEDEPLOY, "deploy-workflow", str(clone), str(dest), "--commit", commit], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # what the deployment holds: our configs and profiles, and a Snakefile using our rules as a module
    assert (dest / "config" / "config.yaml").read_bytes() == (clone / "config" / "config.yaml").read_bytes()
    assert (dest / "profiles" / "default").is_dir()
    snakefile = dest / "workflow" / "Snakefile"
    text = snakefile.read_text()
    assert "use rule * from" in text and 'configfile: "config/config.yaml"' in text
    # snakedeploy's local route names the module relative to nothing it deploys (docs/workflow.md);
    # the documented step names the clone's Snakefile instead
    assert '"workflow/Snakefile"' in text
    snakefile.write_text(text.replace('"workflow/Snakefile"', f'"{(clone / "workflow" / "Snakefile").as_posix()}"'))
    proc = _run([sys.executable, "-m", "snakemake", "-n", "--cores", "1"], dest)
    assert proc.returncode == 0, proc.stderr[-4000:]
    jobs = planned_jobs(proc)
    assert jobs.get("all") == 1 and jobs.get("nn_table", 0) >= 1 and jobs.get("attainable_bounds") == 1
    assert not (clone / "results" / "config.yaml").exists()  # the outputs belong to the deployed folder
