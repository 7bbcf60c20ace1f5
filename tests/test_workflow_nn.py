"""End-to-end Snakemake run of the neural-network audits on a tiny digits design.

Checks the outputs of Tables 1b, 3, 4, 5, 7 and the figure, that a finished workflow
schedules nothing, and that changing one unlearning hyperparameter reruns only that
experiment's jobs (never base training).
"""

import numpy as np
import pandas as pd
import pytest
import yaml

from generated_plays import make_play
from workflow_utils import only, planned_jobs, snakemake, write_config

pytestmark = pytest.mark.workflow

FT = {"epochs": 1, "lr": 0.01, "batch_size": 64, "momentum": 0.9, "weight_decay": 0.0}
TINY = only(
    nn={
        "enabled": True,
        "designs": {
            "tiny": {
                "dataset": "digits", "split": "uniform", "batch_size": 1, "m": 24,
                "model": {"name": "tinynet", "params": {"in_channels": 1, "num_classes": 10, "width": 0.25}},
                "train": {"epochs": 2, "batch_size": 64, "lr": 0.01, "momentum": 0.9, "schedule": "onecycle"},
                "calibration_runs": 20, "evaluation_runs": 3, "chunk_size": 12,
            }
        },
        "experiments": {
            "tiny_ft": {"design": "tiny", "method": "retain_finetune", "params": FT, "r": [8, 24],
                        "tables": ["table1b", "table3", "table4", "table5"]},
            "tiny_hessian": {"design": "tiny", "method": "hessian", "r": [8],
                             "params": {"s1": 1, "s2": 10, "scale": 500.0, "sigma": 0.001}, "tables": ["table7"]},
        },
    },
)


def test_nn_audit_end_to_end(tmp_path):
    cfg = write_config(tmp_path, TINY, replace=("nn",))
    proc = snakemake(tmp_path, cfg, cores=2)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = tmp_path / "results"

    t1 = pd.read_csv(res / "tables" / "table1b.csv")
    for col in ("method", "params", "split", "epsilon_lb", "epsilon_ldp", "r", "retain_acc", "forget_acc", "test_acc"):
        assert col in t1.columns
    assert len(t1) == 1 and t1.r.iloc[0] == 24
    assert 0 <= t1.epsilon_lb.iloc[0] == pytest.approx(t1.epsilon_ldp.iloc[0] / 2)
    assert t1.test_acc.between(0, 1).all()
    assert set(pd.read_csv(res / "tables" / "table3.csv").columns) >= {"r", "epsilon_lb_logit", "epsilon_lb_loss"}
    assert set(pd.read_csv(res / "tables" / "table4.csv").columns) >= {"r", "epsilon_lb_mean", "epsilon_lb_median"}
    assert pd.read_csv(res / "tables" / "table7.csv").sigma.tolist() == [0.001]
    assert (res / "figures" / "nn_epsilon_vs_r.png").stat().st_size > 1000

    # scores are Parquet in the documented long format, calibration and evaluation separate
    scores = pd.read_parquet(res / "tiny_ft" / "runs" / "eval" / "0" / "scores.parquet")
    assert len(scores) == 24 and scores.phase.unique().tolist() == ["eval"]
    assert scores.in_forget.sum() == 12
    signs = pd.read_parquet(res / "designs" / "tiny" / "signs.parquet")
    assert set(signs[signs.phase == "calib"].seed).isdisjoint(signs[signs.phase == "eval"].seed)
    bounds = pd.read_parquet(res / "tiny_ft" / "bounds.parquet")
    assert set(bounds.statistic) == {"mean", "median"} and set(bounds.score) == {"logit", "loss"}

    again = snakemake(tmp_path, cfg, "-n")
    assert again.returncode == 0 and planned_jobs(again) == {}

    changed = yaml.safe_load(cfg.read_text())
    changed["nn"]["experiments"]["tiny_hessian"]["params"]["sigma"] = 0.005
    cfg.write_text(yaml.safe_dump(changed))
    dry = snakemake(tmp_path, cfg, "-n")
    jobs = planned_jobs(dry)
    assert not any(j.startswith("nn_train") for j in jobs), jobs
    assert not any("tiny_ft" in j for j in jobs), jobs
    assert sum(v for j, v in jobs.items() if j.startswith("nn_unlearn_tiny_hessian")) == 3
    assert jobs.get("nn_fit") == 1 and jobs.get("nn_audit") == 1


def test_unknown_method_parameter_refused(tmp_path):
    bad = yaml.safe_load(yaml.safe_dump(TINY))
    bad["nn"]["experiments"]["tiny_ft"]["params"]["learning_rate"] = 0.1
    proc = snakemake(tmp_path, write_config(tmp_path, bad, replace=("nn",)), "-n")
    assert proc.returncode != 0
    assert "nn.experiments.tiny_ft.params" in proc.stderr and "learning_rate" in proc.stderr


def test_r_larger_than_m_refused(tmp_path):
    bad = yaml.safe_load(yaml.safe_dump(TINY))
    bad["nn"]["experiments"]["tiny_ft"]["r"] = [8, 30]
    proc = snakemake(tmp_path, write_config(tmp_path, bad, replace=("nn",)), "-n")
    assert proc.returncode != 0 and "nn.experiments.tiny_ft.r[1]" in proc.stderr and "<= m = 24" in proc.stderr


def test_text_audit_end_to_end_table1a(tmp_path):
    """Table 1a on generated plays: CharLSTM, chunks of windows (batch_size null), sequence scores."""
    plays = tmp_path / "plays"
    plays.mkdir()
    rng = np.random.default_rng(3)
    for k in range(3):
        (plays / f"play_{k}_gut.txt").write_text(make_play(rng, f"Play {k}", 20))
    ft = {"epochs": 1, "lr": 0.5, "batch_size": 16, "momentum": 0.0, "weight_decay": 0.0, "schedule": "constant", "grad_clip": 1.0}
    text = only(
        nn={
            "enabled": True,
            "designs": {
                "plays": {
                    "dataset": "shakespeare", "split": "uniform", "batch_size": None, "m": 6,
                    "dataset_params": {"source": str(plays), "num_roles": 40, "window": 12, "stride": 3},
                    "model": {"name": "charlstm", "params": {"hidden_size": 8}},
                    "train": {"epochs": 1, "batch_size": 16, "lr": 0.5, "momentum": 0.0, "schedule": "constant", "grad_clip": 1.0},
                    "calibration_runs": 16, "evaluation_runs": 2, "chunk_size": 9,
                }
            },
            "experiments": {
                "plays_ft": {"design": "plays", "method": "retain_finetune", "label": "Retain fine-tune", "params": ft,
                             "r": [2, 6], "report_r": 6, "tables": ["table1a"]},
            },
        },
    )
    cfg = write_config(tmp_path, text, replace=("nn",))
    proc = snakemake(tmp_path, cfg, cores=2)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = tmp_path / "results"
    t1a = pd.read_csv(res / "tables" / "table1a.csv")
    assert t1a.method.tolist() == ["Retain fine-tune"] and t1a.r.tolist() == [6]
    assert t1a.epsilon_lb.iloc[0] >= 0 and t1a.test_acc.between(0, 1).all()
    scores = pd.read_parquet(res / "plays_ft" / "runs" / "eval" / "1" / "scores.parquet")
    sizes = scores.groupby("batch").size()
    assert len(sizes) == 6 and sizes.nunique() == 1  # equal chunks of windows
    assert (scores.score_logit == -scores.score_loss).all()  # text: logit score is minus the mean CE
    assert scores.in_forget.groupby(scores.batch).first().sum() == 3
