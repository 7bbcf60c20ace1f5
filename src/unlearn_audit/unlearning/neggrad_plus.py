"""NegGrad+ (Kurmanji et al. 2023, "Towards Unbounded Machine Unlearning", NeurIPS; the NegGrad+
baseline of its experiments): gradient descent on

    α · L(D_r) − (1 − α) · L(D_f)

(the paper's β is α here), each step on a retain mini-batch and a forget mini-batch.  The steps run
``epochs`` shuffled passes over D_r; the forget batches cycle through D_f(S), reshuffled at every
pass, all drawn from the run's generator (the retain batches first, so that α = 1 takes exactly the
steps of ``retain_finetune``).  SGD with the fine-tuning phase's schedule, momentum and weight
decay.  Every step has a forget term, so the method runs per model (no grouped final steps).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..training.sgd import loss_fn, random_batches, sgd_run
from .common import cycling_batches, take_rows
from .params import NegGradPlusParams
from .registry import register

__all__ = ["neggrad_plus"]


@register("neggrad_plus", description="descent on D_r weighted alpha, ascent on D_f(S) weighted 1 - alpha (Kurmanji et al. 2023)")
def neggrad_plus(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], forget: tuple[torch.Tensor, torch.Tensor], params: NegGradPlusParams, generator: torch.Generator) -> nn.Module:
    """``epochs`` passes over D_r, each step minimising α·L(retain batch) − (1 − α)·L(forget batch)."""
    cfg = params.finetune_config()
    xr, yr = retain
    batches = random_batches(len(xr), cfg.batch_size, cfg.epochs, generator)
    next_forget = cycling_batches(len(forget[0]), params.forget_batch_size or cfg.batch_size, generator) if len(forget[0]) else None

    def step_loss(m: nn.Module, t: int, rows: np.ndarray) -> torch.Tensor:
        x, y = take_rows(retain, rows)
        loss = params.alpha * loss_fn(m(x), y)
        if next_forget is not None:
            xf, yf = take_rows(forget, next_forget())
            loss = loss - (1.0 - params.alpha) * loss_fn(m(xf), yf)
        return loss

    return sgd_run(model, xr, yr, batches, cfg.lrs(len(batches)), momentum=cfg.momentum, weight_decay=cfg.weight_decay,
                   nesterov=cfg.nesterov, grad_clip=cfg.grad_clip, step_loss=step_loss, desc="NegGrad+")
