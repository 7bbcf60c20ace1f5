"""Noisy fine-tuning: SGD on the retain set D_r, then Gaussian noise on every weight.

A variant of retain fine-tuning (App. G.7) that ends with an output perturbation, written as a
user of unlearn_audit would write their own algorithm: plain torch, the signature of the
registry (``fn(model, retain, forget, params, generator) -> model``) and a frozen dataclass of its
hyperparameters as the annotation of ``params``.  The workflow validates an experiment's
``params`` against that dataclass before any job runs.  Without a calibrated σ the noise certifies
nothing: the audit measures how much of D_f(S) the released model still reveals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

__all__ = ["NoisyFinetuneParams", "noisy_finetune"]


@dataclass(frozen=True)
class NoisyFinetuneParams:
    """Hyperparameters of :func:`noisy_finetune`; invalid values raise ``ValueError`` at config validation."""

    epochs: int = 1
    batch_size: int = 64
    lr: float = 0.01
    momentum: float = 0.9
    sigma: float = 0.01

    def __post_init__(self):
        if not (isinstance(self.epochs, int) and self.epochs >= 0):
            raise ValueError(f"epochs must be an integer >= 0, got {self.epochs!r}")
        if not (isinstance(self.batch_size, int) and self.batch_size >= 1):
            raise ValueError(f"batch_size must be an integer >= 1, got {self.batch_size!r}")
        if not (self.lr > 0 and math.isfinite(self.lr)):
            raise ValueError(f"lr must be > 0, got {self.lr!r}")
        if not 0 <= self.momentum < 1:
            raise ValueError(f"momentum must lie in [0, 1), got {self.momentum!r}")
        if not (self.sigma >= 0 and math.isfinite(self.sigma)):
            raise ValueError(f"sigma must be >= 0, got {self.sigma!r}")


def noisy_finetune(
    model: nn.Module,
    retain: tuple[torch.Tensor, torch.Tensor],
    forget: tuple[torch.Tensor, torch.Tensor],
    params: NoisyFinetuneParams,
    generator: torch.Generator,
) -> nn.Module:
    """Fine-tune on D_r for ``params.epochs`` epochs, then add N(0, σ²) to every parameter.

    D_f(S) is not read.  All randomness (the data order and the noise) comes from ``generator``,
    a CPU ``torch.Generator``, so a run is reproducible from its seed.
    """
    x, y = retain
    opt = torch.optim.SGD(model.parameters(), lr=params.lr, momentum=params.momentum)
    model.train()
    for _ in range(params.epochs):
        order = torch.randperm(len(x), generator=generator).to(x.device)
        for start in range(0, len(x), params.batch_size):
            idx = order[start : start + params.batch_size]
            out = model(x[idx])
            loss = F.cross_entropy(out.reshape(-1, out.shape[-1]), y[idx].reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()
    model.eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(params.sigma * torch.randn(p.shape, generator=generator, dtype=p.dtype).to(p.device))
    return model
