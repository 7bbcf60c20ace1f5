"""SalUn, saliency unlearning (Fan et al. 2024, "SalUn: Empowering Machine Unlearning via
Gradient-based Weight Saliency", ICLR; §4).

1. Weight saliency (Eq. 3): m_S = 1[|∇_θ ℓ_f(θ; D_f)|_{θ = θ_o}| ≥ γ], with ℓ_f the forget set's
   mean cross-entropy (gradient ascent's forgetting loss, up to its sign) at the trained weights θ_o.
   γ is a quantile of all the weights' saliencies together: the mask keeps the ``mask_fraction`` of
   the weights with the largest |∇ℓ_f| (exactly that many, ties broken by position; the paper's
   default keeps half).  An empty D_f(S) has zero saliency everywhere, all at γ = 0: every weight
   is kept.
2. Random-label unlearning of the salient weights only (Eq. 4, θ_u = m_S ⊙ (Δθ + θ_o) +
   (1 − m_S) ⊙ θ_o, with §4's classification objective: cross-entropy of D_f under random labels
   y' ≠ y plus that of D_r): ``random_labels``' SGD over
   D_r ∪ D_f(S)', every gradient replaced by m_S ⊙ (g + λθ) — the weight decay λ is masked with it —
   so that momentum, weight decay and gradient clipping (whose norm includes the decay term here)
   never move an unmasked weight: those stay bit for bit θ_o.

The mask's gradient is taken in eval mode.  The last phase is masked, so the method runs per model
(no grouped final steps).
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Iterator, Sequence

import torch
from torch import nn

from ..torch_utils import deterministic_algorithms
from .hessian import retain_gradient
from .params import SalUnParams
from .random_labels import relabelled_training
from .registry import register

__all__ = ["salun", "saliency_mask", "masked_updates"]

Data = tuple[torch.Tensor, torch.Tensor]


def saliency_mask(model: nn.Module, forget: Data, p: SalUnParams) -> list[torch.Tensor]:
    """m_S (Eq. 3), one bool tensor per trainable parameter: the ``round(mask_fraction · N)`` of the
    N weights with the largest |∇ℓ_f(θ_o; D_f)|, first positions first among equals."""
    params = [q for q in model.parameters() if q.requires_grad]
    if len(forget[0]) == 0:
        return [torch.ones_like(q, dtype=torch.bool) for q in params]
    was_training = model.training
    model.eval()
    try:
        with deterministic_algorithms():
            grads = retain_gradient(model, forget, chunk=p.batch_size)
    finally:
        model.train(was_training)
    saliency = torch.cat([g.abs().flatten() for g in grads])
    keep = int(p.mask_fraction * saliency.numel() + 0.5)
    flat = torch.zeros_like(saliency, dtype=torch.bool)
    flat[torch.sort(saliency, descending=True, stable=True).indices[:keep]] = True
    return [m.view_as(q) for m, q in zip(flat.split([q.numel() for q in params]), params)]


@contextlib.contextmanager
def masked_updates(model: nn.Module, masks: Sequence[torch.Tensor], weight_decay: float) -> Iterator[None]:
    """Within the block, the gradient of each trainable parameter θ is m ⊙ (g + ``weight_decay``·θ)
    (train with the optimiser's own weight decay 0)."""
    params = [q for q in model.parameters() if q.requires_grad]

    def hook(q: torch.Tensor, mask: torch.Tensor):
        return lambda g: (g.add(q.detach(), alpha=weight_decay) if weight_decay else g).mul(mask)

    handles = [q.register_hook(hook(q, m.to(q.dtype))) for q, m in zip(params, masks)]
    try:
        yield
    finally:
        for h in handles:
            h.remove()


@register("salun", description="random-label fine-tuning of the weights most salient to D_f(S) only (Fan et al. 2024)")
def salun(model: nn.Module, retain: Data, forget: Data, params: SalUnParams, generator: torch.Generator) -> nn.Module:
    """The saliency mask of D_f(S), then ``random_labels``' training with only the masked weights moving."""
    masks = saliency_mask(model, forget, params)
    with masked_updates(model, masks, params.weight_decay):
        return relabelled_training(model, retain, forget, dataclasses.replace(params, weight_decay=0.0), generator, desc="SalUn")
