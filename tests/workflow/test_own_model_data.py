"""examples/own_model_data end to end (docs/configuration.md#your-own-model-and-data): a tabular
dataset and an MLP of one's own, named by import path, trained, unlearned and audited by the
workflow beside the design's controls, with no file of the library edited."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from workflow_utils import REPO, snakemake

pytestmark = pytest.mark.workflow

EXAMPLE = REPO / "examples" / "own_model_data"


def test_the_own_model_and_data_example_is_audited_beside_its_controls(tmp_path):
    cfg = yaml.safe_load((EXAMPLE / "config.yaml").read_text())
    cfg["results_dir"], cfg["resources_dir"] = "results", "resources"
    cfg["nn"]["designs"]["tabular"]["train"]["epochs"] = 60  # the example's regime at a third of its training
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    proc = snakemake(tmp_path, tmp_path / "config.yaml", cores=2, pythonpath=str(EXAMPLE))
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = pd.read_csv(tmp_path / "results" / "tables" / "table1b.csv").set_index("method")
    assert sorted(table.index) == ["No unlearning", "Retain fine-tune", "Retrain"]
    assert (table.m == 24).all() and (table.L == 6).all()
    assert (table.test_acc > 0.4).all()  # 4 classes: well above chance
    assert table.loc["No unlearning", "retain_acc"] > 0.9  # the models fit their training rows
    assert table.loc["No unlearning", "epsilon_lb_theorem42"] >= table.loc["Retrain", "epsilon_lb_theorem42"]
    assert (table.epsilon_lb_claim <= table.epsilon_lb_ceiling_claim).all() and (table.epsilon_lb_theorem42 <= table.epsilon_lb_ceiling_theorem42).all()
