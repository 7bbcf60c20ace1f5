"""Shared pieces of the gradient-based unlearning algorithms: the retain fine-tuning phase (G.7)."""

from __future__ import annotations

from dataclasses import dataclass, fields

import torch
from torch import nn

from ..training import TrainConfig, random_batches, sgd_run

__all__ = ["FinetuneParams", "finetune", "check_positive_int", "check_nonneg"]


def check_positive_int(name: str, value: object, *, allow_zero: bool = False) -> None:
    ok = isinstance(value, (int,)) and not isinstance(value, bool) and (value >= 0 if allow_zero else value >= 1)
    if not ok:
        raise ValueError(f"{name} must be a {'non-negative' if allow_zero else 'positive'} integer, got {value!r}")


def check_nonneg(name: str, value: object) -> None:
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value >= 0:
        raise ValueError(f"{name} must be a non-negative number, got {value!r}")


@dataclass(frozen=True)
class FinetuneParams:
    """Retain-set fine-tuning phase (G.3, G.7): SGD on D_r with its own schedule.

    Defaults are the CIFAR-100 values: one-cycle with maximum 0.1, weight decay 5e-4 (the
    regulariser of G.1.2), batch 128, momentum 0 (as in the authors' configuration), 50 epochs
    of unlearning in total (G.1.2).  Shakespeare (G.3): constant 0.1, 8 epochs in total, batch
    256, gradient clipping 1.0.  The data order of every epoch is drawn from the run's generator.
    """

    epochs: int = 50
    batch_size: int = 128
    lr: float = 0.1
    schedule: str = "onecycle"
    momentum: float = 0.0
    weight_decay: float = 5e-4
    nesterov: bool = False
    pct_start: float = 0.3
    div_factor: float = 25.0
    final_div_factor: float = 1e4
    anneal: str = "cos"
    min_lr: float = 0.0
    grad_clip: float | None = None

    def __post_init__(self) -> None:
        check_positive_int("epochs", self.epochs, allow_zero=True)
        self.finetune_config()  # validates the schedule fields

    def finetune_config(self) -> TrainConfig:
        """The fine-tuning phase as a :class:`~unlearn_audit.training.TrainConfig`."""
        names = {f.name for f in fields(TrainConfig)}
        return TrainConfig(**{f.name: getattr(self, f.name) for f in fields(FinetuneParams) if f.name in names})


def finetune(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], p: FinetuneParams, generator: torch.Generator, *, desc: str = "retain fine-tuning") -> nn.Module:
    """``p.epochs`` epochs of SGD on the retain set, shuffled by ``generator`` (G.7); fresh momentum."""
    cfg = p.finetune_config()
    x, y = retain
    if cfg.epochs == 0 or len(x) == 0:
        return model
    batches = random_batches(len(x), cfg.batch_size, cfg.epochs, generator)
    return sgd_run(
        model, x, y, batches, cfg.lrs(len(batches)), momentum=cfg.momentum, weight_decay=cfg.weight_decay,
        nesterov=cfg.nesterov, grad_clip=cfg.grad_clip, desc=desc,
    )
