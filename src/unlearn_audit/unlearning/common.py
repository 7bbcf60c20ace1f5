"""Shared pieces of the gradient-based unlearning algorithms: the retain fine-tuning phase (G.7)."""

from __future__ import annotations

import torch
from torch import nn

from ..training.sgd import random_batches, sgd_run
from .params import FinetuneParams

__all__ = ["FinetuneParams", "finetune"]


def finetune(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], p: FinetuneParams, generator: torch.Generator, *, desc: str = "retain fine-tuning") -> nn.Module:
    """``p.epochs`` epochs of SGD on the retain set, shuffled by ``generator`` (G.7); fresh momentum."""
    cfg = p.finetune_config()
    x, y = retain
    if cfg.epochs == 0 or len(x) == 0:
        return model
    batches = random_batches(len(x), cfg.batch_size, cfg.epochs, generator)
    return sgd_run(
        model, x, y, batches, cfg.lrs(len(batches)), momentum=cfg.momentum, weight_decay=cfg.weight_decay,
        nesterov=cfg.nesterov, grad_clip=cfg.grad_clip, desc=desc,
    )
