"""Gradient ascent on the forget set's answers (Jang et al. 2023; TOFU's GA, Maini et al. 2024):
the language-model baseline, :mod:`.preference`'s loop with minus the token loss."""

from __future__ import annotations

import torch
from torch import nn

from .params import GradientAscentParams
from .preference import ascent_loss, preference_unlearn
from .registry import register

__all__ = ["gradient_ascent"]


@register("gradient_ascent", description="gradient ascent on D_f(S)'s answers (Jang et al. 2023)")
def gradient_ascent(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], forget: tuple[torch.Tensor, torch.Tensor], params: GradientAscentParams, generator: torch.Generator) -> nn.Module:
    """``params.epochs`` passes of AdamW ascent on D_f(S)'s mean token loss."""
    return preference_unlearn(model, retain, forget, params, generator, ascent_loss)
