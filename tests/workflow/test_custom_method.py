"""An algorithm of one's own given by import path (examples/noisy_finetune), audited in the shared
run, and the run that stops before any job when its module is not on PYTHONPATH.  Its unit tests:
tests/unlearning/test_custom_method.py."""

import json

import pandas as pd
import pytest

from unlearn_audit import cli
from workflow_utils import REPO, snakemake, write_config

EXAMPLE_CONFIG = REPO / "examples" / "noisy_finetune" / "config.yaml"
KEY = "nn.experiments.noisy_ft.method"


def test_without_the_module_on_pythonpath_the_run_stops_before_any_job(tmp_path):
    proc = snakemake(tmp_path, write_config(tmp_path, EXAMPLE_CONFIG), "-n", pythonpath=None)
    assert proc.returncode != 0
    err = proc.stderr + proc.stdout
    assert f"config key '{KEY}'" in err and "cannot import module 'noisy_finetune.algorithm'" in err and "PYTHONPATH" in err
    assert not (tmp_path / "results").exists()


def test_example_audited_end_to_end(shared_run, capsys):
    chunks = [c for g, c, _ in shared_run.plan.nn.experiment_chunks() if g == ["noisy_ft"]]
    assert len(chunks) == 1 and (shared_run.results / "noisy_ft" / "runs" / chunks[0]).is_dir()
    res = shared_run.results
    experiment = shared_run.config["nn"]["experiments"]["noisy_ft"]
    design = shared_run.config["nn"]["designs"][experiment["design"]]
    bounds = pd.read_parquet(res / "noisy_ft" / "bounds.parquet")
    assert set(bounds["experiment"]) == {"noisy_ft"}
    assert sorted(set(bounds["r"])) == experiment["r"] == [4, 12]
    assert len(bounds) == 2 * 2 * 2  # r x score x statistic
    assert (bounds["L"] == design["evaluation_runs"]).all() and (bounds["m"] == design["m"]).all()
    assert ((bounds["epsilon_lb"] >= 0) & (bounds["epsilon_lb"] <= bounds["epsilon_ldp"])).all()
    assert (bounds["role"] == "preregistered").sum() == 1
    table = pd.read_csv(res / "tables" / "table1b.csv")
    assert "Noisy fine-tune" in table.to_string()
    # unlearn-audit audit on the run folders' scores reproduces the logit rows of bounds.parquet
    rc = cli.main(["audit", "--scores", str(res / "noisy_ft" / "runs"), "--glob", "scores.parquet", "--r", "4,12"])
    out, err = capsys.readouterr()
    assert rc == 0, err
    rows = [b for a in json.loads(out)["audits"] for b in a["bounds"]]
    ours = bounds[bounds.score == "logit"].sort_values(["r", "statistic"])
    assert [(b["r"], b["statistic"]) for b in rows] == list(zip(ours.r, ours.statistic))
    for b, (_, row) in zip(rows, ours.iterrows()):
        assert b["mean_overlap"] == row.mean_overlap and b["epsilon_ldp"] == pytest.approx(row.epsilon_ldp)
        assert b["rejected"] == bool(row.rejected) and b["role"] == row.role
