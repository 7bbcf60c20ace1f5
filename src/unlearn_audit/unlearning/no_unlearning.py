"""The *No unlearning* control (paper §7, the design's own leakage): the trained model as is.

Audited on A(D(S)) it measures how much the design leaks before any unlearning, the level a method
must fall below to have unlearned anything.  Audited on A(D_r), the model retrained without the
forget set (an experiment with ``base: retrain``), it is the *Retrain* control: exact unlearning,
whose induced mechanism does not depend on S, so its ε_LB is 0 with probability at least 1 − ζ.
"""

from __future__ import annotations

import torch
from torch import nn

from .registry import register
from .params import NoUnlearningParams

__all__ = ["no_unlearning"]


@register("no_unlearning", description="the trained model as is (the No unlearning and Retrain controls)")
def no_unlearning(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], forget: tuple[torch.Tensor, torch.Tensor], params: NoUnlearningParams, generator: torch.Generator) -> nn.Module:
    """Return ``model`` unchanged (a control, not an unlearning algorithm)."""
    return model
