"""config/llm.yaml's kind of run, end to end at a reduced size (docs/configuration.md#language-models):
a Hugging Face causal LM on synthetic question-answer pairs, trained with AdamW (``train.optimizer``),
NPO audited beside the controls in the llm_qa table, with TOFU's metrics and privleak beside ε
(docs/metrics.md; the reduced model need not memorise, so only their presence and ranges are checked)."""

from __future__ import annotations

import pandas as pd
import pytest
import yaml

from workflow_utils import REPO, snakemake

pytestmark = pytest.mark.workflow


def test_a_causal_lm_on_question_answer_pairs_is_audited_beside_its_controls(tmp_path):
    pytest.importorskip("transformers", reason="the llm extra: pip install -e '.[llm]'")
    cfg = yaml.safe_load((REPO / "config" / "llm.yaml").read_text())
    cfg["results_dir"], cfg["resources_dir"] = "results", "resources"
    design = cfg["nn"]["designs"]["qa_gpt2"]
    design.update(m=8, calibration_runs=16, evaluation_runs=2, chunk_size=18)
    design["dataset_params"]["n_entities"] = 16
    # base training with AdamW, the language-model recipe (config/tofu.yaml's), through the real job
    design["train"] = {"epochs": 8, "batch_size": 32, "lr": 3e-3, "weight_decay": 0.0, "optimizer": "adamw", "schedule": "onecycle",
                       "anneal": "linear", "pct_start": 0.2, "grad_clip": 1.0}
    design["model"]["params"]["config"].update(n_embd=32, n_layer=1)
    cfg["nn"]["experiments"] = {"qa_npo": {**cfg["nn"]["experiments"]["qa_npo"], "r": [8]}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(cfg))
    proc = snakemake(tmp_path, tmp_path / "config.yaml", cores=2)
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = pd.read_csv(tmp_path / "results" / "tables" / "llm_qa.csv").set_index("method")
    assert sorted(table.index) == ["NPO", "No unlearning", "Retrain"]
    assert (table.m == 8).all() and (table.L == 2).all()
    assert table[["retain_acc", "forget_acc", "test_acc"]].notna().all().all()
    assert (table.epsilon_lb_claim <= table.epsilon_lb_ceiling_claim).all() and (table.epsilon_lb_theorem42 <= table.epsilon_lb_ceiling_theorem42).all()
    assert table.loc["Retrain", "epsilon_lb_theorem42"] <= table.loc["No unlearning", "epsilon_lb_theorem42"]
    assert table.epsilon_lb_theorem42_at_paper_size.isna().all() and table.guess_fraction.between(0, 1).all()  # no paper size for QA pairs
    assert yaml.safe_load((tmp_path / "results" / "config.yaml").read_text())["nn"]["designs"]["qa_gpt2"]["train"]["optimizer"] == "adamw"
    # the model learnt its training pairs: answer tokens of D_f(S) better than of held-out entities
    assert table.loc["No unlearning", "forget_acc"] > table.loc["No unlearning", "test_acc"]
    # TOFU's metrics of the evaluation runs, in the per-run files and the table
    from unlearn_audit.schemas import QA_COLUMNS, QA_RUN_METRICS

    runs = pd.concat([pd.read_parquet(p) for p in (tmp_path / "results").rglob("metrics.parquet")])
    assert list(runs.columns) == QA_RUN_METRICS.names and runs[runs.phase == "eval"].model_utility.notna().all()
    assert set(QA_COLUMNS) <= set(table.columns)
    for part in ("forget", "retain", "test"):
        assert table[[f"{part}_answer_prob", f"{part}_rouge_l"]].apply(lambda c: c.between(0, 1)).all().all()
    assert table[["retain_truth_ratio", "test_truth_ratio", "model_utility", "forget_quality"]].apply(lambda c: c.between(0, 1)).all().all()
    assert (table.forget_truth_ratio > 0).all() and (table.answer_loss > 0).all() and not table.no_retrain.any()
    assert table.loc["Retrain", "forget_quality"] == 1.0  # Retrain against itself
    assert table.loc[["NPO", "No unlearning"], ["forget_quality", "privleak", "privleak_low", "privleak_high"]].notna().all().all()
    assert table.loc["Retrain", "privleak"] == 0.0 and table.damaged.dtype == bool
