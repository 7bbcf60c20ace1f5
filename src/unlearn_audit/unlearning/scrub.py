"""SCRUB (Kurmanji et al. 2023, "Towards Unbounded Machine Unlearning", NeurIPS; §3, Eqs. 1–3, and
its Algorithm 1).

The student w^u starts at the trained model w^o; the teacher is a frozen copy of w^o.  With

    d(x; w^u) = T² · KL(p_T(f(x; w^o)) ‖ p_T(f(x; w^u))),    p_T = softmax(logits / T)     (Eq. 1)

(the softening by T and Hinton et al.'s factor T² as in the authors' distillation), each of the
``epochs`` epochs is

* for the first ``max_steps`` epochs, a max epoch: one shuffled pass over D_f(S) ascending the mean
  d(x_f) of each forget batch (the forget term of Eqs. 2–3, DO-MAX-EPOCH);
* a min epoch: one shuffled pass over D_r descending α · mean d(x_r) + γ · mean CE(x_r, y_r)
  (the retain terms of Eq. 3, DO-MIN-EPOCH).

SGD at a constant learning rate, with momentum and weight decay in both kinds of step; the momentum
starts afresh at each max epoch and at the min epoch after it (the min epochs after the last max
epoch run as one pass, in one optimiser).  Every batch order comes from the run's generator.  The
last phase distils from the teacher, so the method runs per model (no grouped final steps).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..training.sgd import loss_fn, random_batches, sgd_run
from .common import take_rows
from .params import ScrubParams
from .registry import register
from .teachers import frozen_copy, teacher_kl

__all__ = ["scrub", "max_epoch", "min_epochs", "divergence"]

Data = tuple[torch.Tensor, torch.Tensor]


def divergence(student_logits: torch.Tensor, teacher: nn.Module, x: torch.Tensor, temperature: float) -> torch.Tensor:
    """Mean d(x; w^u) of a batch (Eq. 1): T² · KL(teacher ‖ student) of the softened outputs."""
    with torch.no_grad():
        target = teacher(x)
    return temperature**2 * teacher_kl(student_logits, target, temperature)


def max_epoch(student: nn.Module, teacher: nn.Module, forget: Data, p: ScrubParams, generator: torch.Generator) -> nn.Module:
    """One pass over D_f(S) ascending d (DO-MAX-EPOCH)."""
    xf, yf = forget
    batches = random_batches(len(xf), p.forget_batch_size or p.batch_size, 1, generator)

    def step_loss(m: nn.Module, t: int, rows: np.ndarray) -> torch.Tensor:
        x, _ = take_rows(forget, rows)
        return divergence(m(x), teacher, x, p.temperature)

    return sgd_run(student, xf, yf, batches, [p.lr] * len(batches), momentum=p.momentum, weight_decay=p.weight_decay,
                   ascent=True, step_loss=step_loss, desc="SCRUB max steps")


def min_epochs(student: nn.Module, teacher: nn.Module, retain: Data, p: ScrubParams, generator: torch.Generator, epochs: int) -> nn.Module:
    """``epochs`` passes over D_r descending α·d + γ·CE (DO-MIN-EPOCH), in one optimiser."""
    xr, yr = retain
    batches = random_batches(len(xr), p.batch_size, epochs, generator)

    def step_loss(m: nn.Module, t: int, rows: np.ndarray) -> torch.Tensor:
        x, y = take_rows(retain, rows)
        logits = m(x)
        return p.alpha * divergence(logits, teacher, x, p.temperature) + p.gamma * loss_fn(logits, y)

    return sgd_run(student, xr, yr, batches, [p.lr] * len(batches), momentum=p.momentum, weight_decay=p.weight_decay,
                   step_loss=step_loss, desc="SCRUB min steps")


@register("scrub", description="distil the trained model on D_r, move away from it on D_f(S) (Kurmanji et al. 2023)")
def scrub(model: nn.Module, retain: Data, forget: Data, params: ScrubParams, generator: torch.Generator) -> nn.Module:
    """Algorithm 1: ``max_steps`` epochs of a max then a min epoch, then the remaining min epochs."""
    teacher = frozen_copy(model)
    for _ in range(params.max_steps):
        if len(forget[0]):
            max_epoch(model, teacher, forget, params, generator)
        min_epochs(model, teacher, retain, params, generator, 1)
    return min_epochs(model, teacher, retain, params, generator, params.epochs - params.max_steps)
