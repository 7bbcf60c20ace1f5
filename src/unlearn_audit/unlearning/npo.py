"""Negative preference optimisation (Zhang et al. 2024): the forget pairs as dispreferred answers
against the model before unlearning, :mod:`.preference`'s loop with :func:`.preference.npo_loss`."""

from __future__ import annotations

import torch
from torch import nn

from .params import NPOParams
from .preference import npo_loss, preference_unlearn
from .registry import register

__all__ = ["npo"]


@register("npo", description="negative preference optimisation (Zhang et al. 2024)")
def npo(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], forget: tuple[torch.Tensor, torch.Tensor], params: NPOParams, generator: torch.Generator) -> nn.Module:
    """(2/β) log(1 + (π_θ/π_ref)^β) on D_f(S) (+ ``retain_weight`` × the retain loss: NPO+RT)."""
    return preference_unlearn(model, retain, forget, params, generator, npo_loss(params.beta), reference=True)
