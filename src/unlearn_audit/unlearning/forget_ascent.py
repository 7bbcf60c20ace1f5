"""Gradient ascent on the forget set, then retain fine-tuning (App. G.6).

Phase 1 ascends the cross-entropy on D_f(S) only, x_{t+1} = x_t + η g_f^t (Eq. 17), for a fixed
number of epochs over D_f(S) with a constant learning rate (CIFAR-100: 2 epochs at 1e-3;
Shakespeare: 2 epochs at 0.05).  Phase 2 is retain-set fine-tuning (G.7; CIFAR-100: one-cycle,
maximum 0.1) with a fresh optimiser.  The ascent touches only the sampled forget set D_f(S)
(the authors' code ascended on the whole candidate pool; docs/calibrations.md §0).  No weight decay is applied
during the ascent (ascending a weight-decay term would only inflate the weights).
"""

from __future__ import annotations

import torch
from torch import nn

from ..training.sgd import random_batches, sgd_run
from .registry import register
from .common import RetainSteps, finetune_steps, run_final
from .params import ForgetAscentParams

__all__ = ["ascend", "forget_ascent"]


def ascend(model: nn.Module, forget: tuple[torch.Tensor, torch.Tensor], p: ForgetAscentParams, generator: torch.Generator) -> nn.Module:
    """Phase 1: ``p.ascent_epochs`` epochs of gradient ascent on D_f(S) at the constant ``p.ascent_lr``."""
    x, y = forget
    if p.ascent_epochs == 0 or len(x) == 0:
        return model
    bs = p.ascent_batch_size or p.batch_size
    batches = random_batches(len(x), bs, p.ascent_epochs, generator)
    lrs = [p.ascent_lr] * len(batches)
    return sgd_run(model, x, y, batches, lrs, momentum=p.ascent_momentum, grad_clip=p.grad_clip, ascent=True, desc="forget ascent")


def _ascend_then_steps(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], forget: tuple[torch.Tensor, torch.Tensor], params: ForgetAscentParams, generator: torch.Generator) -> RetainSteps | None:
    """The ascent (in place), then the fine-tuning steps drawn from the same generator."""
    ascend(model, forget, params, generator)
    return finetune_steps(len(retain[0]), params, generator)


@register("forget_ascent", description="gradient ascent on D_f(S), then retain fine-tuning (G.6)", final_steps=_ascend_then_steps)
def forget_ascent(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], forget: tuple[torch.Tensor, torch.Tensor], params: ForgetAscentParams, generator: torch.Generator) -> nn.Module:
    """Ascent on D_f(S) for ``ascent_epochs`` epochs, then ``epochs`` epochs of retain fine-tuning (G.6)."""
    return run_final(model, retain, _ascend_then_steps(model, retain, forget, params, generator))
