"""config/paper.yaml's kinds of job run by Snakemake at the paper's model and input shapes
(tests/support/paper_shapes.py): CIFAR-100-format files made here (32x32x3, 100 classes) and
generated plays; TinyNet at width 1, forget batches of B = 1 on the adversarial split and of
B = 750 (model clipping's and rewind-to-delete's joint certified audits, the latter's base models full-batch GD), the CharLSTM
of 256 units with retain fine-tuning; every rule from data preparation to the tables, a step or
two of each training.  A shape, config or job-script error of the paper's DAG appears here and
not hours into a cluster run.  Run by ``make test-paper-shapes`` (about three minutes on 2 cores), which
CI runs after ``make test``; ``make test`` leaves it out (the ``paper_shapes`` mark)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from paper_shapes import RUN_EXPERIMENTS, RUN_M, paper_shapes_run_config
from unlearn_audit.data.cifar100 import cifar100_folder, write_cifar100_pickles
from unlearn_audit.pipeline.plan import WorkflowPlan
from workflow_utils import planned_jobs, snakemake, validated

pytestmark = pytest.mark.paper_shapes

#: Training and test images of the CIFAR-100-format files: a training portion (90 %) that holds the
#: pool of m·B = 2 x 750 and a retain set beside it.
N_TRAIN, N_TEST = 2_000, 200


@pytest.fixture(scope="module")
def paper_shapes_run(tmp_path_factory, plays) -> tuple[Path, dict, dict[str, int]]:
    workdir = tmp_path_factory.mktemp("paper_shapes")
    rng = np.random.default_rng(0)
    write_cifar100_pickles(cifar100_folder(workdir / "resources"),
                           rng.integers(0, 256, (N_TRAIN, 3, 32, 32), dtype=np.uint8), rng.integers(0, 100, N_TRAIN),
                           rng.integers(0, 256, (N_TEST, 3, 32, 32), dtype=np.uint8), rng.integers(0, 100, N_TEST))
    cfg = paper_shapes_run_config(plays)
    configfile = workdir / "config.yaml"
    configfile.write_text(yaml.safe_dump(cfg, sort_keys=False))
    proc = snakemake(workdir, configfile, cores=2, timeout=1200)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-5000:]
    return workdir, cfg, planned_jobs(proc)


def test_every_kind_of_paper_job_runs_at_the_paper_shapes(paper_shapes_run):
    workdir, cfg, jobs = paper_shapes_run
    plan = WorkflowPlan(validated(cfg))
    assert jobs["nn_prepare_data"] == len(RUN_EXPERIMENTS)
    assert jobs["nn_unlearn"] == len(plan.nn.experiment_chunks())
    assert {"nn_train", "nn_audit", "certified_joint_audit", "certified_table6", "certified_figure", "nn_table"} <= set(jobs), jobs


def test_the_paper_designs_were_trained_and_scored_at_their_shapes(paper_shapes_run):
    """Each design's base models have the paper's parameter shapes, and each run scored the m·B
    candidates of the paper's B (text: every window of the m chunks)."""
    import torch

    from unlearn_audit.models import build_model

    workdir, cfg, _ = paper_shapes_run
    plan = WorkflowPlan(validated(cfg))
    for design in RUN_EXPERIMENTS:
        spec = cfg["nn"]["designs"][design]
        phase, run = ("candidate", 0) if plan.nn.is_joint(design) else ("calib", 0)
        state = torch.load(workdir / plan.nn.base_model(design, phase, run), map_location="cpu", weights_only=True)
        state = state.get("model", state)
        reference = build_model(spec["model"]["name"], **spec["model"].get("params", {})).state_dict()
        assert {k: tuple(v.shape) for k, v in state.items() if k in reference} == {k: tuple(v.shape) for k, v in reference.items()}, design
    for name, exp in cfg["nn"]["experiments"].items():
        spec = cfg["nn"]["designs"][exp["design"]]
        scores = pd.read_parquet(workdir / plan.nn.run_file(name, "calib", 0, "scores.parquet"))
        assert scores.batch.nunique() == RUN_M, name
        if spec["batch_size"]:
            assert len(scores) == RUN_M * spec["batch_size"], name
        assert np.isfinite(scores.score_logit).all(), name


def test_the_paper_shapes_tables_hold_a_bound_for_each_experiment(paper_shapes_run):
    """Each experiment shown in a table has its row there (the method column holds its label) with a
    bound >= 0 beside its accuracies."""
    workdir, cfg, _ = paper_shapes_run
    for name, exp in cfg["nn"]["experiments"].items():
        for table in exp.get("tables", []):
            frame = pd.read_csv(workdir / "results" / "tables" / f"{table}.csv")
            row = frame[frame.method == exp["label"]]
            assert len(row) == 1, (name, table, frame.method.tolist())
            bound = row.filter(like="epsilon_lb").iloc[0].dropna()
            assert len(bound) and (bound >= 0).all(), (name, table)
            assert row.test_acc.between(0, 1).all(), (name, table)
