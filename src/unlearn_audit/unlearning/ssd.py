"""Selective Synaptic Dampening, SSD (Foster et al. 2024, "Fast Machine Unlearning Without Retraining
Through Selective Synaptic Dampening", AAAI; §3).

No training.  The importance of each parameter is the diagonal of the Fisher information matrix,
the mean squared gradient of the loss: []_D over the training data D = D_r ∪ D_f(S) and []_f over the
forget set D_f(S), both at the trained weights, in eval mode.  §3's selection rule dampens each
parameter θ_i with

    []_f,i > α · []_D,i,

θ_i ← β · θ_i with the dampening factor β = min(λ · []_D,i / []_f,i, 1); every other parameter (and
every buffer) is left exactly as it is.  An importance is the mean, over mini-batches of
``batch_size`` rows, of the squared gradient of the batch's mean cross-entropy (``batch_size`` 1:
the per-example Fisher); the batches are shuffled from the run's generator.  The method runs per
model (no grouped final steps).
"""

from __future__ import annotations

from typing import Iterable, Sequence

import torch
from torch import nn

from ..torch_utils import deterministic_algorithms
from ..training.sgd import loss_fn, random_batches
from .common import take_rows, union_batch
from .params import SSDParams
from .registry import register

__all__ = ["ssd", "importances", "dampen"]

Data = tuple[torch.Tensor, torch.Tensor]


def importances(model: nn.Module, batches: Iterable[Data]) -> list[torch.Tensor]:
    """The mean over ``batches`` of the squared gradient of each batch's mean loss, per trainable
    parameter (float64), in eval mode."""
    params = [q for q in model.parameters() if q.requires_grad]
    total = [torch.zeros_like(q, dtype=torch.float64) for q in params]
    count = 0
    was_training = model.training
    model.eval()
    try:
        with deterministic_algorithms():
            for x, y in batches:
                for acc, g in zip(total, torch.autograd.grad(loss_fn(model(x), y), params, allow_unused=True)):
                    if g is not None:
                        acc.add_(g.double().square())
                count += 1
    finally:
        model.train(was_training)
    return [t / max(count, 1) for t in total]


@torch.no_grad()
def dampen(params: Sequence[torch.Tensor], full: Sequence[torch.Tensor], forget: Sequence[torch.Tensor], alpha: float, lam: float) -> None:
    """θ_i ← min(λ·full_i / forget_i, 1)·θ_i where forget_i > α·full_i (§3), in place; the other
    entries are untouched."""
    for q, d, f in zip(params, full, forget):
        selected = f > alpha * d
        beta = torch.where(selected, (lam * d / f).clamp(max=1.0), torch.ones_like(d))
        q.copy_(torch.where(selected, q * beta.to(q.dtype), q))


@register("ssd", description="dampen the parameters far more important to D_f(S) than to the training data (Foster et al. 2024)")
def ssd(model: nn.Module, retain: Data, forget: Data, params: SSDParams, generator: torch.Generator) -> nn.Module:
    """Importances on D_r ∪ D_f(S) and on D_f(S), then the selective dampening of §3."""
    n_forget = len(forget[0])
    if n_forget == 0:
        return model
    full = random_batches(len(retain[0]) + n_forget, params.batch_size, 1, generator)
    forget_batches = random_batches(n_forget, params.batch_size, 1, generator)
    imp_full = importances(model, (union_batch(retain, forget, rows)[:2] for rows in full))
    imp_forget = importances(model, (take_rows(forget, rows) for rows in forget_batches))
    dampen([q for q in model.parameters() if q.requires_grad], imp_full, imp_forget, params.alpha, params.lam)
    return model
