"""AdamW (Loshchilov and Hutter 2019), the optimizer of language-model fine-tuning (TOFU's, Maini et
al. 2024), with the interface of :class:`~.sgd.MomentumSGD`: the learning rate given to each step
(the schedule of :func:`~.config.lr_schedule`) and its state as a flat list of tensors that a
:class:`~.resume.TrainingCheckpoint` saves and restores (docs/configuration.md#language-models).
"""

from __future__ import annotations

from typing import Sequence

import torch

__all__ = ["AdamW"]


class AdamW:
    """``torch.optim.AdamW``'s update (no amsgrad, no maximize): ``θ ← θ·(1 − lr·wd)``;
    ``m ← β1·m + (1 − β1)·g``; ``v ← β2·v + (1 − β2)·g²``; ``θ ← θ − lr·m̂ / (√v̂ + eps)`` with the
    bias corrections ``m̂ = m / (1 − β1^t)`` and ``v̂ = v / (1 − β2^t)``, t counted per parameter.

    ``buffers`` is ``[m_0, v_0, t_0, m_1, v_1, t_1, ...]`` (``None`` before a parameter's first
    step; t a 0-d tensor), so that a checkpoint restores it as it restores SGD's momentum."""

    def __init__(self, params: Sequence[torch.Tensor], *, weight_decay: float = 0.0, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8) -> None:
        if weight_decay < 0 or eps <= 0 or not all(0 <= b < 1 for b in betas):
            raise ValueError(f"AdamW needs weight_decay >= 0, eps > 0 and betas in [0, 1), got {weight_decay}, {eps}, {betas}")
        self.params = list(params)
        self.weight_decay, self.betas, self.eps = float(weight_decay), (float(betas[0]), float(betas[1])), float(eps)
        self.buffers: list[torch.Tensor | None] = [None] * (3 * len(self.params))

    def zero_grad(self) -> None:
        """Drop every gradient (``set_to_none``)."""
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self, lr: float) -> None:
        """One update of every parameter that has a gradient, at learning rate ``lr``."""
        b1, b2 = self.betas
        for i, p in enumerate(self.params):
            if p.grad is None:
                continue
            if self.buffers[3 * i] is None:
                self.buffers[3 * i: 3 * i + 3] = [torch.zeros_like(p), torch.zeros_like(p), torch.zeros((), dtype=torch.float64)]
            m, v, t = self.buffers[3 * i: 3 * i + 3]
            if t.device.type != "cpu":  # restored onto the device by a checkpoint: the count stays on the host
                t = self.buffers[3 * i + 2] = t.cpu()
            t += 1
            step = int(t.item())
            p.mul_(1 - lr * self.weight_decay)
            m.lerp_(p.grad, 1 - b1)
            v.mul_(b2).addcmul_(p.grad, p.grad, value=1 - b2)
            denom = (v.sqrt() / (1 - b2 ** step) ** 0.5).add_(self.eps)
            p.addcdiv_(m, denom, value=-lr / (1 - b1 ** step))
