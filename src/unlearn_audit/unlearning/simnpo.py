"""SimNPO (Fan et al. 2024): NPO without a reference model, on the length-normalised answer
log-likelihood with a margin, :mod:`.preference`'s loop with :func:`.preference.simnpo_loss`."""

from __future__ import annotations

import torch
from torch import nn

from .params import SimNPOParams
from .preference import preference_unlearn, simnpo_loss
from .registry import register

__all__ = ["simnpo"]


@register("simnpo", description="simple negative preference optimisation (Fan et al. 2024)")
def simnpo(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], forget: tuple[torch.Tensor, torch.Tensor], params: SimNPOParams, generator: torch.Generator) -> nn.Module:
    """−(2/β) log σ(−(β/|y|) log π_θ(y|x) − γ) on D_f(S) (+ ``retain_weight`` × the retain loss)."""
    return preference_unlearn(model, retain, forget, params, generator, simnpo_loss(params.beta, params.gamma))
