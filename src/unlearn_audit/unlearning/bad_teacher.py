"""Bad Teacher (Chundawat et al. 2023, "Can Bad Teaching Induce Forgetting? Unlearning in Deep
Networks Using an Incompetent Teacher", AAAI; §3, the unlearning objective with the unlearning
label l_f and the temperature-softened teachers).

The student starts at the trained model.  Two teachers stay frozen: the competent one, the trained
model itself, and the incompetent one, the model's architecture randomly initialised (seeded from
the run's generator, :func:`~.teachers.random_copy`).  The student is distilled on a random subset
of ``retain_fraction`` of D_r (drawn without replacement from the generator) together with D_f(S),
each row from its teacher:

    L(x, l_f) = (1 − l_f) · KL(t_s(x) ‖ s(x)) + l_f · KL(t_d(x) ‖ s(x)),

l_f = 1 on a forget row, t_s and t_d the competent and incompetent teachers' softmaxes and s the
student's, all at temperature T.  ``epochs`` shuffled passes over the subset ∪ D_f(S), the mean loss
of each mini-batch minimised by Adam at a constant learning rate (AdamW with weight decay 0), as in
the paper.  The last phase distils, so the method runs per model (no grouped final steps).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..training.sgd import random_batches, sgd_run
from .common import union_batch
from .params import BadTeacherParams
from .registry import register
from .teachers import frozen_copy, random_copy, teacher_kl

__all__ = ["bad_teacher"]

Data = tuple[torch.Tensor, torch.Tensor]


@register("bad_teacher", description="distil the trained model on part of D_r and a random model on D_f(S) (Chundawat et al. 2023)")
def bad_teacher(model: nn.Module, retain: Data, forget: Data, params: BadTeacherParams, generator: torch.Generator) -> nn.Module:
    """Distil the competent teacher on the retain subset and the incompetent one on D_f(S)."""
    competent = frozen_copy(model)
    incompetent = random_copy(model, generator)
    n_retain = len(retain[0])
    subset = torch.randperm(n_retain, generator=generator)[: params.retain_rows(n_retain)].numpy()
    k = len(subset)
    batches = random_batches(k + len(forget[0]), params.batch_size, params.epochs, generator)

    def as_union_rows(rows: np.ndarray) -> np.ndarray:
        """Rows of subset ∪ D_f(S) (the subset's first) as rows of D_r ∪ D_f(S)."""
        out = np.asarray(rows, dtype=np.int64) - k + n_retain
        kept = out < n_retain
        out[kept] = subset[out[kept] - n_retain + k]
        return out

    def step_loss(m: nn.Module, t: int, rows: np.ndarray) -> torch.Tensor:
        x, _, n_kept = union_batch(retain, forget, as_union_rows(rows))
        with torch.no_grad():
            parts = [teacher(part) for teacher, part in ((competent, x[:n_kept]), (incompetent, x[n_kept:])) if len(part)]
        return teacher_kl(m(x), torch.cat(parts), params.temperature)

    return sgd_run(model, retain[0], retain[1], batches, [params.lr] * len(batches), optimizer="adamw", step_loss=step_loss, desc="bad teacher")
