"""Pure fine-tuning on the retain set (App. G.7).

The unlearning phase is retain-set fine-tuning only — model clipping with C = C2 = ∞ and σ = 0 —
with the schedule of the retain fine-tuning phases of G.3 (CIFAR-100: one-cycle, maximum 0.1).
D_f(S) is not used.
"""

from __future__ import annotations

import torch
from torch import nn

from .registry import register
from .common import RetainSteps, finetune_steps, run_final
from .params import RetainFinetuneParams

__all__ = ["retain_finetune"]


def _steps(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], forget: tuple[torch.Tensor, torch.Tensor], params: RetainFinetuneParams, generator: torch.Generator) -> RetainSteps | None:
    return finetune_steps(len(retain[0]), params, generator)


@register("retain_finetune", description="fine-tune on the retain set (G.7)", final_steps=_steps)
def retain_finetune(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], forget: tuple[torch.Tensor, torch.Tensor], params: RetainFinetuneParams, generator: torch.Generator) -> nn.Module:
    """Fine-tune on D_r for ``params.epochs`` epochs (G.7)."""
    return run_final(model, retain, _steps(model, retain, forget, params, generator))
