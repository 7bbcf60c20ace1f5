"""Random relabelling (Graves et al. 2021, "Amnesiac Machine Learning", AAAI; their "Unlearning"
method): the forget rows get randomly chosen *incorrect* labels and the model is trained on them.

Here each forget row's new label is drawn once per run, uniformly from the other C − 1 classes,
y' = (y + U{1, …, C−1}) mod C (C the model's output width); for a next-character model each target
character of a window is a label and is redrawn so (a target set to ``IGNORE``, a question's token,
stays unscored).  The model is fine-tuned with SGD
on the union D_r ∪ D_f(S)' of the retain set and the relabelled forget set: ``epochs`` shuffled
passes over the union, every mini-batch a random mix of both (the random-labelling baseline as
SalUn, Fan et al. 2024, runs it: the retain rows keep the model accurate).  Labels and batch orders
come from the run's generator.  The forget rows are in every step, so the method runs per model (no
grouped final steps).
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ..training.sgd import IGNORE, loss_fn, random_batches, sgd_run
from .common import union_batch
from .params import RandomLabelsParams
from .registry import register

__all__ = ["random_labels", "wrong_labels", "relabelled_training", "num_classes"]

Data = tuple[torch.Tensor, torch.Tensor]


def num_classes(model: nn.Module, x: torch.Tensor) -> int:
    """The model's number of classes: the width of its output on one row (eval mode, no gradient)."""
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            return int(model(x[:1]).shape[-1])
    finally:
        model.train(was_training)


def wrong_labels(y: torch.Tensor, classes: int, generator: torch.Generator) -> torch.Tensor:
    """For each label (each target of a sequence), one drawn uniformly from the other ``classes`` − 1
    classes; a target equal to ``IGNORE`` stays ``IGNORE``."""
    if classes < 2:
        raise ValueError(f"random relabelling needs at least 2 classes, got {classes}")
    shift = torch.randint(1, classes, tuple(y.shape), generator=generator).to(y.device)
    return torch.where(y == IGNORE, y, (y + shift) % classes)


def relabelled_training(model: nn.Module, retain: Data, forget: Data, p: RandomLabelsParams, generator: torch.Generator, *,
                        desc: str = "random labels") -> nn.Module:
    """Draw the forget rows' wrong labels, then ``p.epochs`` shuffled SGD passes over D_r ∪ D_f(S)'."""
    xf, yf = forget
    relabelled = (xf, wrong_labels(yf, num_classes(model, xf), generator)) if len(xf) else forget
    cfg = p.finetune_config()
    batches = random_batches(len(retain[0]) + len(xf), cfg.batch_size, cfg.epochs, generator)

    def step_loss(m: nn.Module, t: int, rows: np.ndarray) -> torch.Tensor:
        x, y, _ = union_batch(retain, relabelled, rows)
        return loss_fn(m(x), y)

    return sgd_run(model, retain[0], retain[1], batches, cfg.lrs(len(batches)), momentum=cfg.momentum, weight_decay=cfg.weight_decay,
                   nesterov=cfg.nesterov, grad_clip=cfg.grad_clip, step_loss=step_loss, desc=desc)


@register("random_labels", description="fine-tune on D_r and D_f(S) relabelled with random wrong labels (Graves et al. 2021)")
def random_labels(model: nn.Module, retain: Data, forget: Data, params: RandomLabelsParams, generator: torch.Generator) -> nn.Module:
    """``epochs`` SGD passes over D_r ∪ D_f(S), each forget row relabelled with a random wrong class."""
    return relabelled_training(model, retain, forget, params, generator)
