"""Gradient difference (Liu et al. 2022; TOFU's GD, Maini et al. 2024): ascent on a forget batch and
descent on a retain batch in each step, :mod:`.preference`'s loop."""

from __future__ import annotations

import torch
from torch import nn

from .params import GradientDifferenceParams
from .preference import ascent_loss, preference_unlearn
from .registry import register

__all__ = ["gradient_difference"]


@register("gradient_difference", description="ascent on D_f(S) plus descent on D_r (Liu et al. 2022)")
def gradient_difference(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], forget: tuple[torch.Tensor, torch.Tensor], params: GradientDifferenceParams, generator: torch.Generator) -> nn.Module:
    """Each step: minus the forget batch's token loss plus ``retain_weight`` times a retain batch's."""
    return preference_unlearn(model, retain, forget, params, generator, ascent_loss)
