"""config/tofu.yaml's design and methods at their real shapes on the ``meta`` device
(tests/support/meta_device.py), as tests/training/test_paper_shapes.py does for config/paper.yaml:
Llama-3.2-1B's architecture (its published config, randomly initialised, nothing downloaded) on
sequences of ``max_length`` tokens, a base-training AdamW step at the design's batch size and each
method's steps on a full and the last, partial forget batch of m/2 authors' pairs (the controls
train nothing).  A shape, dtype or device error
appears here, not in a GPU job; memory and speed are left to a GPU."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import yaml

from meta_device import META, host_reads_answered
from unlearn_audit.pipeline.config import validate_config
from unlearn_audit.pipeline.nn_runs import train_config
from unlearn_audit.language_model_shapes import lm_config
from unlearn_audit.training import train_model
from unlearn_audit.unlearning import unlearn

pytest.importorskip("transformers", reason="the llm extra: pip install -e '.[llm]'")
torch = pytest.importorskip("torch")

REPO = Path(__file__).resolve().parents[2]
TOFU = validate_config(yaml.safe_load((REPO / "config" / "tofu.yaml").read_text()), REPO / "workflow" / "schemas" / "config.schema.yaml",
                       read_data=False)
DESIGN = TOFU["nn"]["designs"]["tofu_llama"]
TOKENS = DESIGN["dataset_params"]["max_length"]


def _model():
    from unlearn_audit.models import build_model

    with torch.device(META):  # the architecture of the Hub model, its weights left out
        return build_model("causal_lm", config=lm_config(DESIGN["model"]["params"]))


def _pairs(n: int):
    """``n`` encoded pairs on meta: token ids (N, T) and targets (N, T) (IGNORE off the answers)."""
    return torch.empty(n, TOKENS, dtype=torch.long, device=META), torch.empty(n, TOKENS, dtype=torch.long, device=META)


def test_the_model_is_llama_3_2_1b_and_takes_the_designs_sequences():
    model = _model()
    assert sum(p.numel() for p in model.parameters()) == 1_235_814_400
    with host_reads_answered():
        logits = model(_pairs(2)[0])
    assert logits.shape == (2, TOKENS, 128256) and logits.device == META


def test_a_base_training_step_at_the_designs_shapes():
    cfg = dataclasses.replace(train_config(DESIGN["train"]), epochs=1)
    assert cfg.optimizer == "adamw"
    x, y = _pairs(cfg.batch_size)
    with host_reads_answered():
        out = train_model(_model(), x, y, np.arange(cfg.batch_size), None, cfg, generator=0, progress=False)
    assert {p.device for p in out.parameters()} == {META}


def test_the_per_pair_design_runs_the_same_methods_at_the_same_shapes():
    """The per-pair design (B = 1) repeats the author-level design's methods with their parameters and
    its model and sequences, so the shapes below cover it (its candidates drawn among all authors,
    the one difference of its data)."""
    by_design = {}
    for exp in TOFU["nn"]["experiments"].values():
        by_design.setdefault(exp["design"], []).append((exp["method"], repr(sorted(exp.get("params", {}).items()))))
    assert set(by_design) == {"tofu_llama", "tofu_llama_pair"} and sorted(by_design["tofu_llama"]) == sorted(by_design["tofu_llama_pair"])
    pair = TOFU["nn"]["designs"]["tofu_llama_pair"]
    assert (pair["model"], pair["train"]) == (DESIGN["model"], DESIGN["train"])
    assert pair["dataset_params"] == {**DESIGN["dataset_params"], "candidates": "all"} and DESIGN["dataset_params"]["candidates"] == "with_alternates"


@pytest.mark.parametrize("experiment", sorted(e for e, x in yaml.safe_load((REPO / "config" / "tofu.yaml").read_text())["nn"]["experiments"].items()
                                              if x["design"] == "tofu_llama"))
def test_every_method_at_the_designs_shapes(experiment):
    exp = TOFU["nn"]["experiments"][experiment]
    params = {**exp.get("params", {}), "epochs": 1}
    batch = int(params.get("batch_size", 32))
    n_forget = int(DESIGN["m"]) // 2 * int(DESIGN["batch_size"])  # 200 pairs: 6 full batches of 32 and one of 8
    forget = _pairs(batch + n_forget % batch)  # a full batch and the last, partial one
    retain = _pairs(2 * batch)
    with host_reads_answered() as reads:
        out = unlearn(exp["method"], _model(), retain, forget, params, generator=1)
    assert {p.device for p in out.parameters()} == {META}, experiment
    assert reads.count < 1000, f"{experiment}: {reads.count} host reads"
