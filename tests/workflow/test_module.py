"""The workflow as a Snakemake module: a user's own Snakefile in another folder uses every rule of
this one with its own config and adds a rule that consumes our outputs (snakedeploy style).  The
module names ``workflow/Snakefile`` (docs/workflow.md, "Using the workflow as a module"); the root
``Snakefile``, which includes it, works too."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from workflow_utils import REPO, load_config, small_config

USER_SNAKEFILE = """\
configfile: "config.yaml"


module unlearn_audit:
    snakefile:
        "{snakefile}"
    config:
        config


use rule * from unlearn_audit


rule summary:
    \"\"\"The user's own rule: reads the App. F table this workflow wrote.\"\"\"
    input:
        rules.attainable_bounds.output[0],
        rules.config_snapshot.output[0],
    output:
        "summary.txt",
    run:
        import csv

        with open(input[0]) as fh:
            rows = list(csv.DictReader(fh))
        with open(output[0], "w") as out:
            out.write(f"cells {{len(rows)}}\\n")
            out.write(f"columns {{','.join(rows[0])}}\\n")
"""


def _user_workflow(tmp_path: Path, snakefile: Path) -> Path:
    user = tmp_path / "user"
    user.mkdir()
    cfg = load_config(small_config("statistics"))
    cfg["results_dir"] = "out"  # relative to the user's folder, not to this repository
    cfg["resources_dir"] = "res"
    (user / "config.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    (user / "Snakefile").write_text(USER_SNAKEFILE.format(snakefile=snakefile.as_posix()))
    return user


def _snakemake(cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    return subprocess.run([sys.executable, "-m", "snakemake", "--cores", "1", *args], cwd=cwd, capture_output=True, text=True, env=env, timeout=600)


@pytest.mark.workflow
@pytest.mark.parametrize("snakefile", ["workflow/Snakefile", "Snakefile"])
def test_user_snakefile_uses_the_workflow_as_a_module(tmp_path, snakefile):
    user = _user_workflow(tmp_path, REPO / snakefile)
    proc = _snakemake(user, "summary.txt")
    assert proc.returncode == 0, proc.stderr[-4000:]
    table = user / "out" / "tables" / "attainable_bounds.csv"
    assert table.is_file() and (user / "out" / "config.yaml").is_file()
    with table.open() as fh:
        rows = list(csv.DictReader(fh))
    grid = load_config(small_config("statistics"))["perfect_prediction"]["grid"]
    assert len(rows) == len(grid)
    lines = (user / "summary.txt").read_text().splitlines()
    assert lines[0] == f"cells {len(grid)}"
    assert lines[1] == "columns " + ",".join(rows[0])
    assert not (REPO / "out").exists()  # every output lives in the user's folder
    # the module's config is validated as ours is: a bad value stops the run before any job
    cfg = yaml.safe_load((user / "config.yaml").read_text())
    cfg["zeta"] = 2
    (user / "config.yaml").write_text(yaml.safe_dump(cfg))
    proc = _snakemake(user, "-n", "summary.txt")
    assert proc.returncode != 0
    assert "config key 'zeta'" in proc.stderr + proc.stdout
