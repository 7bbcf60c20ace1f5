"""Interleaved descent–ascent, IDA (App. G.5).

For the first E_f epochs (over the retain set) every step descends the retain loss, and every
(q+1)-th step also ascends the loss on a mini-batch of D_f(S):

    x_{t+1} = x_t − η (g_r^t − λ·1{(t+1) ≡ 0 mod (q+1)} g_f^t)                      (Eq. 16)

i.e. q plain retain steps, then one combined step, as in the authors' implementation (the forget
term is scaled by the step size η and passes through the same momentum as the retain gradient).
The interleaved phase uses a constant learning rate (CIFAR-100: 1e-3; Shakespeare: 0.05).  Then
plain retain descent follows with a fresh optimiser and the fine-tuning schedule (CIFAR-100:
one-cycle, maximum 0.1; Shakespeare: constant 0.1).  Forget mini-batches cycle through D_f(S)
only, reshuffled at every pass; the weight decay of the fine-tuning phase applies throughout.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..training.sgd import loss_fn, random_batches, resident_schedule, sgd_run
from .registry import register
from .common import RetainSteps, cycling_batches, finetune_steps, run_final
from .params import IDAParams

__all__ = ["interleave", "ida"]


def interleave(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], forget: tuple[torch.Tensor, torch.Tensor], p: IDAParams, generator: torch.Generator) -> nn.Module:
    """Phase 1: ``p.forget_epochs`` epochs of retain descent with a forget-ascent term every (q+1)-th step."""
    xr, yr = retain
    xf, yf = forget
    if p.forget_epochs == 0 or len(xr) == 0:
        return model
    batches = random_batches(len(xr), p.batch_size, p.forget_epochs, generator)
    next_forget_rows = cycling_batches(len(xf), p.forget_batch_size or p.batch_size, generator)
    # Every step's rows cross to the device once, up front (no copy a step).  The forget batches are
    # drawn here in the order the steps would draw them, nothing else drawing from the generator in
    # between, so the draws are those of a step-by-step loop.
    combined = [t for t in range(len(batches)) if (t + 1) % (p.q + 1) == 0] if len(xf) and p.lam > 0 else []
    retain_rows = resident_schedule(batches, xr.device)
    forget_rows = dict(zip(combined, resident_schedule([next_forget_rows() for _ in combined], xf.device)))

    def step_loss(m: nn.Module, t: int, rows: np.ndarray) -> torch.Tensor:
        idx = retain_rows[t]
        loss = loss_fn(m(xr.index_select(0, idx)), yr.index_select(0, idx))
        if t in forget_rows:
            fidx = forget_rows[t]
            loss = loss - p.lam * loss_fn(m(xf.index_select(0, fidx)), yf.index_select(0, fidx))
        return loss

    lrs = [p.interleaved_lr] * len(batches)
    return sgd_run(model, xr, yr, batches, lrs, momentum=p.momentum, weight_decay=p.weight_decay, nesterov=p.nesterov,
                   grad_clip=p.grad_clip, step_loss=step_loss, desc="interleaved descent-ascent")


def _interleave_then_steps(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], forget: tuple[torch.Tensor, torch.Tensor], params: IDAParams, generator: torch.Generator) -> RetainSteps | None:
    """The interleaved phase (in place), then the plain retain steps drawn from the same generator."""
    interleave(model, retain, forget, params, generator)
    return finetune_steps(len(retain[0]), params, generator)


@register("ida", description="interleaved descent-ascent on D_r and D_f(S), then retain descent (G.5)", final_steps=_interleave_then_steps)
def ida(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], forget: tuple[torch.Tensor, torch.Tensor], params: IDAParams, generator: torch.Generator) -> nn.Module:
    """Interleaved phase for E_f epochs, then ``epochs`` epochs of plain retain descent (G.5)."""
    return run_final(model, retain, _interleave_then_steps(model, retain, forget, params, generator))
