"""Every design of config/paper.yaml and its experiments at their real model and input shapes, on
the ``meta`` device (tests/support/meta_device.py): the design's model, its base training's steps
at its batch size, schedule and clipping, and each method of its experiments with their
hyperparameters, once per model, method and shape-setting hyperparameters (``SHAPE_PARAMS``; a few
counts smaller: ``paper_shapes.fewer_params``, one epoch a phase), on a retain set of two batches and the design's
forget set.  A shape, dtype, parameter or device error (a tensor made on the host where the data's
device was meant) appears here and not hours into a cluster run; each inside the precision region
a GPU job enters (its flags are global, so a method that trips on them trips here).  Left to `benchmarks/gpu.sh` on
a GPU: memory, cuDNN, in-place operations with a host operand, and the repetitions left out."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from meta_device import META, host_reads_answered
from paper_shapes import fewer_params
from unlearn_audit.data import DATASETS
from unlearn_audit.models import GroupedTinyNet, build_model
from unlearn_audit.pipeline.config import validate_config
from unlearn_audit.pipeline.nn_runs import train_config
from unlearn_audit.torch_utils import compute_precision
from unlearn_audit.training import train_model
from unlearn_audit.unlearning import make_params, unlearn, unlearn_many

REPO = Path(__file__).resolve().parents[2]
PAPER = validate_config(yaml.safe_load((REPO / "config" / "paper.yaml").read_text()), REPO / "workflow" / "schemas" / "config.schema.yaml")
DESIGNS = PAPER["nn"]["designs"]
def _examples(design: dict, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    """``n`` examples of the design's data on meta: images (N, C, H, W) and labels, or windows (N, T)
    of characters and their next characters."""
    model = design["model"]
    if model["name"] == "charlstm":
        window = int(design.get("dataset_params", {}).get("window", 80))
        return torch.empty(n, window, dtype=torch.long, device=META), torch.empty(n, window, dtype=torch.long, device=META)
    side, channels = DATASETS[design["dataset"]].image
    return torch.empty(n, channels, side, side, device=META), torch.empty(n, dtype=torch.long, device=META)


def _model(design: dict):
    return build_model(design["model"]["name"], **design["model"].get("params", {})).to(META)


def _forget_size(design: dict) -> int:
    """|D_f(S)|: half the pool (m/2 batches of B), or, for a design whose B is every window of a chunk, 64."""
    return int(design["m"]) // 2 * int(design["batch_size"]) if design.get("batch_size") else 64


#: The hyperparameters that set a shape (batch sizes); the others (learning rates, lambda, sigma, ...)
#: change numbers, not shapes, and are checked with every config.
SHAPE_PARAMS = ("batch_size", "ascent_batch_size", "forget_batch_size", "noisy_batch_size", "micro_batch", "grad_batch_size", "checkpoint_steps")


def _method_cases() -> list[tuple[str, str]]:
    """(experiment, design) of the paper's experiments, one per model and input shape, method and
    shape-setting hyperparameters."""
    seen, out = set(), []
    for name, exp in PAPER["nn"]["experiments"].items():
        design = DESIGNS[exp["design"]]
        shape = (json.dumps(design["model"], sort_keys=True), design["dataset"], design.get("dataset_params", {}).get("window"),
                 design.get("batch_size"), design["m"])
        key = (shape, exp["method"], json.dumps({k: v for k, v in exp.get("params", {}).items() if k in SHAPE_PARAMS}, sort_keys=True))
        if key not in seen:
            seen.add(key)
            out.append((name, exp["design"]))
    return out


def _precision(design: dict) -> str:
    """The design's precision: each step below runs inside the region a GPU job enters for it
    (``compute_precision(p, "cuda")``: its global cuDNN and matmul flags, or autocast), as the workflow does."""
    return design.get("precision", "fp32")


@pytest.mark.parametrize("design_name", sorted(DESIGNS))
def test_a_base_training_step_of_every_paper_design(design_name):
    design = DESIGNS[design_name]
    cfg = dataclasses.replace(train_config(design["train"]), epochs=1)
    n = min(2 * cfg.batch_size, 4096)  # a full-batch design (rewind-to-delete's GD) takes all 4,096 in one step
    x, y = _examples(design, n)
    model = _model(design)
    shapes = {k: v.shape for k, v in model.state_dict().items()}
    with compute_precision(_precision(design), "cuda"), host_reads_answered():
        out = train_model(model, x, y, np.arange(n), None, cfg, generator=0, progress=False)
    assert {k: v.shape for k, v in out.state_dict().items()} == shapes
    assert {p.device for p in out.parameters()} == {META}


@pytest.mark.parametrize(("experiment", "design_name"), _method_cases())
def test_every_paper_experiments_unlearning_at_its_shapes(experiment, design_name):
    design, exp = DESIGNS[design_name], PAPER["nn"]["experiments"][experiment]
    params = fewer_params(exp["method"], exp.get("params", {}))
    p = make_params(exp["method"], params)
    batch = min(int(getattr(p, "batch_size", None) or getattr(p, "micro_batch", None) or design["train"]["batch_size"]), 2048)
    retain, forget = _examples(design, 2 * batch), _examples(design, _forget_size(design))
    with compute_precision(_precision(design), "cuda"), host_reads_answered() as reads:
        out = unlearn(exp["method"], _model(design), retain, forget, params, generator=1)
    assert {p.device for p in out.parameters()} == {META}, experiment
    assert reads.count < 1000, f"{experiment}: {reads.count} host reads"


@pytest.mark.parametrize("group_mode", ["grouped", "vmap"])
def test_grouped_forms_at_the_paper_tinynet_shapes(group_mode):
    """The K-at-once forms of a groupable method (retain fine-tuning, K = 4) on the paper's TinyNet."""
    design = DESIGNS["cifar_uniform"]
    params = {"epochs": 1, "batch_size": 128, "lr": 0.1, "schedule": "onecycle", "momentum": 0.9, "weight_decay": 5e-4}
    retain, forget = _examples(design, 256), _examples(design, 8)
    model_params = design["model"]["params"]
    make_grouped = (lambda k: GroupedTinyNet(k, **model_params).to(META)) if group_mode == "grouped" else None
    with compute_precision(_precision(design), "cuda"), host_reads_answered():
        out = unlearn_many("retain_finetune", [_model(design) for _ in range(4)], retain, [forget] * 4, params,
                           [torch.Generator().manual_seed(i) for i in range(4)], make_grouped, group_size=4, group_mode=group_mode)
    assert len(out) == 4 and all({p.device for p in m.parameters()} == {META} for m in out)


def test_a_host_tensor_meeting_the_data_is_caught():
    """What the harness exists for: an operation mixing a host tensor into the device's data fails."""
    x, _ = _examples(DESIGNS["cifar_uniform"], 4)
    with pytest.raises(RuntimeError, match="not on the expected device meta"):
        x + torch.zeros(x.shape)
