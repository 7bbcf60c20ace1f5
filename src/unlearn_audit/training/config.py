"""The SGD training configuration and its learning-rate schedules (App. G.1.2, G.3); numpy only.

Torch-free, so that a workflow config can be validated without importing torch.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Mapping

import numpy as np

from ..checks import dataclass_from_mapping

__all__ = ["SCHEDULES", "ANNEALING", "OPTIMIZERS", "BaseTrainConfig", "optimizer_of", "TrainConfig", "lr_schedule"]

SCHEDULES: tuple[str, ...] = ("onecycle", "cosine", "constant")
#: ``sgd``: SGD with momentum (App. G.1.2); ``adamw``: AdamW with β = (0.9, 0.999), the optimizer
#: of language-model fine-tuning (:mod:`.adamw`).
OPTIMIZERS: tuple[str, ...] = ("sgd", "adamw")
ANNEALING: tuple[str, ...] = ("cos", "linear")


@dataclass(frozen=True)
class TrainConfig:
    """SGD training configuration (App. G.1.2, G.3).

    Attributes
    ----------
    epochs, batch_size
        Passes over the training set and mini-batch size (the last batch of an epoch may be smaller).
    lr
        Peak learning rate: the maximum of the one-cycle schedule, the initial value of the cosine
        schedule, the value of the constant schedule.
    momentum, nesterov, weight_decay
        SGD momentum (PyTorch convention) and L2 weight decay added to the gradient.
    schedule
        ``"onecycle"`` (PyTorch ``OneCycleLR``: warm-up from ``lr/div_factor`` over ``pct_start`` of
        the steps, then annealing to ``lr/(div_factor·final_div_factor)``; ``anneal`` ``"cos"`` or
        ``"linear"``), ``"cosine"`` (``CosineAnnealingLR`` from ``lr`` to ``min_lr`` over all
        steps) or ``"constant"``.  Schedules advance once per optimisation step.
    grad_clip
        Clip the global gradient norm to this value (Shakespeare: 1.0, G.3); ``None``: no clipping.

    Paper values: CIFAR-100 400 epochs, batch 128, one-cycle max 1e-3, weight decay 5e-4
    (G.1.2; Hessian unlearning: cosine with lr 0.1, G.3); Shakespeare 15 epochs, batch 256,
    constant lr 0.1, clipping 1.0, no weight decay (G.3).  The defaults are the offline digits
    configuration (60 epochs, batch 64, one-cycle max 0.01, momentum 0.9).
    """

    epochs: int = 60
    batch_size: int = 64
    lr: float = 0.01
    momentum: float = 0.9
    weight_decay: float = 0.0
    nesterov: bool = False
    schedule: str = "onecycle"
    pct_start: float = 0.3
    div_factor: float = 25.0
    final_div_factor: float = 1e4
    anneal: str = "cos"
    min_lr: float = 0.0
    grad_clip: float | None = None

    def __post_init__(self) -> None:
        if int(self.epochs) != self.epochs or self.epochs < 0:
            raise ValueError(f"epochs must be a non-negative integer, got {self.epochs!r}")
        if int(self.batch_size) != self.batch_size or self.batch_size < 1:
            raise ValueError(f"batch_size must be a positive integer, got {self.batch_size!r}")
        if not (self.lr >= 0 and math.isfinite(self.lr)):
            raise ValueError(f"lr must be a finite non-negative number, got {self.lr!r}")
        if not 0 <= self.momentum < 1:
            raise ValueError(f"momentum must be in [0, 1), got {self.momentum!r}")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay!r}")
        if self.nesterov and self.momentum == 0:
            raise ValueError("nesterov needs momentum > 0")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        if not 0 < self.pct_start < 1:
            raise ValueError(f"pct_start must be in (0, 1), got {self.pct_start!r}")
        if self.div_factor <= 0 or self.final_div_factor <= 0:
            raise ValueError("div_factor and final_div_factor must be positive")
        if self.anneal not in ANNEALING:
            raise ValueError(f"anneal must be one of {ANNEALING}, got {self.anneal!r}")
        if self.min_lr < 0:
            raise ValueError(f"min_lr must be >= 0, got {self.min_lr!r}")
        if self.grad_clip is not None and not self.grad_clip > 0:
            raise ValueError(f"grad_clip must be positive or None, got {self.grad_clip!r}")

    @classmethod
    def from_dict(cls, values: Mapping[str, Any] | None) -> "TrainConfig":
        """Build from a config mapping; an unknown key raises ``ValueError`` naming it."""
        return dataclass_from_mapping(cls, values, "training parameter")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def steps_per_epoch(self, n: int) -> int:
        """Optimisation steps of one epoch over ``n`` examples."""
        return -(-int(n) // self.batch_size)

    def lrs(self, total_steps: int) -> np.ndarray:
        """The learning rate of every step (see :func:`lr_schedule`)."""
        return lr_schedule(
            self.schedule, self.lr, total_steps, pct_start=self.pct_start, div_factor=self.div_factor,
            final_div_factor=self.final_div_factor, anneal=self.anneal, min_lr=self.min_lr,
        )


@dataclass(frozen=True)
class BaseTrainConfig(TrainConfig):
    """A design's base training (``nn.designs.<name>.train``): :class:`TrainConfig` and its
    ``optimizer``, ``"sgd"`` (the paper's) or ``"adamw"`` (:data:`OPTIMIZERS`; one model at a time,
    its ``weight_decay`` decoupled, ``momentum`` unused; docs/configuration.md#language-models).
    The unlearning methods' fine-tuning phases are SGD's (:class:`TrainConfig`)."""

    optimizer: str = "sgd"

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if self.optimizer != "sgd" and self.nesterov:
            raise ValueError("nesterov is SGD's; optimizer adamw takes none")


def optimizer_of(cfg: TrainConfig) -> str:
    """The optimizer of a training configuration: a :class:`BaseTrainConfig`'s, SGD for another."""
    return getattr(cfg, "optimizer", "sgd")


def lr_schedule(
    schedule: str,
    lr: float,
    total_steps: int,
    *,
    pct_start: float = 0.3,
    div_factor: float = 25.0,
    final_div_factor: float = 1e4,
    anneal: str = "cos",
    min_lr: float = 0.0,
) -> np.ndarray:
    """Learning rate of each of ``total_steps`` steps (float64 array).

    ``onecycle`` reproduces ``torch.optim.lr_scheduler.OneCycleLR`` (two phases, momentum not
    cycled); ``cosine`` reproduces ``CosineAnnealingLR(T_max=total_steps, eta_min=min_lr)``;
    ``constant`` is ``lr`` throughout.
    """
    n = int(total_steps)
    if n < 0:
        raise ValueError("total_steps must be >= 0")
    t = np.arange(n, dtype=np.float64)
    if schedule == "constant":
        return np.full(n, float(lr))
    if schedule == "cosine":
        return min_lr + (lr - min_lr) * (1 + np.cos(np.pi * t / max(n, 1))) / 2
    if schedule != "onecycle":
        raise ValueError(f"schedule must be one of {SCHEDULES}, got {schedule!r}")
    if anneal not in ANNEALING:
        raise ValueError(f"anneal must be one of {ANNEALING}, got {anneal!r}")
    initial = lr / div_factor
    final = initial / final_div_factor
    end1 = float(pct_start * n) - 1
    end2 = float(n - 1)

    def ann(start: float, end: float, pct: np.ndarray) -> np.ndarray:
        if anneal == "cos":
            return end + (start - end) / 2 * (np.cos(np.pi * pct) + 1)
        return (end - start) * pct + start

    out = np.empty(n)
    up = t <= end1
    out[up] = ann(initial, lr, t[up] / end1) if end1 > 0 else lr
    down = ~up
    span = end2 - end1
    out[down] = ann(lr, final, (t[down] - end1) / span) if span > 0 else final
    return out


