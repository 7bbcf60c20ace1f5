"""Hyperparameters of the built-in unlearning algorithms (paper §7, App. G; DESIGN §6).

Torch-free: the workflow validates an experiment's ``params`` against these dataclasses before any
job runs, without importing torch.  Defaults are the paper's CIFAR-100 values where it gives them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

from ..checks import check_nonneg, check_positive_int
from ..training.config import TrainConfig

__all__ = ["FinetuneParams", "RetainFinetuneParams", "ForgetAscentParams", "IDAParams", "HessianParams", "REGULARIZERS", "BUILTIN_PARAMS"]


@dataclass(frozen=True)
class FinetuneParams(TrainConfig):
    """Retain-set fine-tuning phase (G.3, G.7): SGD on D_r with its own schedule.

    The fields are those of :class:`~unlearn_audit.training.config.TrainConfig` (one definition,
    one validation), with the CIFAR-100 defaults: one-cycle with maximum 0.1, weight decay 5e-4
    (the regulariser of G.1.2), batch 128, momentum 0 (as in the authors' configuration), 50
    epochs of unlearning in total (G.1.2).  Shakespeare (G.3): constant 0.1, 8 epochs in total,
    batch 256, gradient clipping 1.0.  The data order of every epoch is drawn from the run's
    generator.
    """

    epochs: int = 50
    batch_size: int = 128
    lr: float = 0.1
    momentum: float = 0.0
    weight_decay: float = 5e-4

    def finetune_config(self) -> TrainConfig:
        """The fine-tuning phase as a plain :class:`~unlearn_audit.training.config.TrainConfig`."""
        return TrainConfig(**{f.name: getattr(self, f.name) for f in fields(TrainConfig)})


@dataclass(frozen=True)
class RetainFinetuneParams(FinetuneParams):
    """Hyperparameters of ``retain_finetune``: those of :class:`FinetuneParams` (50 epochs)."""


@dataclass(frozen=True)
class ForgetAscentParams(FinetuneParams):
    """Hyperparameters of ``forget_ascent`` (G.6).

    Attributes
    ----------
    ascent_epochs
        Epochs of gradient ascent over D_f(S) (2 in the paper).
    ascent_lr
        Constant ascent learning rate (1e-3 for CIFAR-100, 0.05 for Shakespeare).
    ascent_batch_size
        Mini-batch size of the ascent; ``None``: ``batch_size``.
    ascent_momentum
        SGD momentum of the ascent phase.
    epochs, batch_size, lr, schedule, ...
        The retain fine-tuning phase that follows (:class:`FinetuneParams`); 48 epochs so
        that unlearning takes 50 epochs in total (G.1.2).
    """

    epochs: int = 48
    ascent_epochs: int = 2
    ascent_lr: float = 1e-3
    ascent_batch_size: int | None = None
    ascent_momentum: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive_int(self.ascent_epochs, "ascent_epochs", allow_zero=True)
        check_nonneg(self.ascent_lr, "ascent_lr")
        if self.ascent_batch_size is not None:
            check_positive_int(self.ascent_batch_size, "ascent_batch_size")
        if not 0 <= self.ascent_momentum < 1:
            raise ValueError(f"ascent_momentum must be in [0, 1), got {self.ascent_momentum!r}")


@dataclass(frozen=True)
class IDAParams(FinetuneParams):
    """Hyperparameters of ``ida`` (G.5).

    Attributes
    ----------
    q
        Plain retain steps between two combined steps (the paper varies q ∈ {1, 2, 4}).
    lam
        λ, the weight of the forget-gradient term (0.75 for CIFAR-100; {0.5, 1.0, 1.5} for Shakespeare).
    forget_epochs
        E_f, epochs (over the retain set) of the interleaved phase (10 for CIFAR-100; {5, 7} for Shakespeare).
    interleaved_lr
        Constant learning rate of the interleaved phase (1e-3 for CIFAR-100, 0.05 for Shakespeare).
    forget_batch_size
        Mini-batch size on D_f(S); ``None``: ``batch_size``.
    epochs, batch_size, lr, schedule, ...
        The plain retain-descent phase that follows (:class:`FinetuneParams`); 40 epochs
        so that unlearning takes 50 epochs in total (G.1.2).
    """

    epochs: int = 40
    q: int = 1
    lam: float = 0.75
    forget_epochs: int = 10
    interleaved_lr: float = 1e-3
    forget_batch_size: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive_int(self.q, "q", allow_zero=True)
        check_nonneg(self.lam, "lam")
        check_positive_int(self.forget_epochs, "forget_epochs", allow_zero=True)
        check_nonneg(self.interleaved_lr, "interleaved_lr")
        if self.forget_batch_size is not None:
            check_positive_int(self.forget_batch_size, "forget_batch_size")


REGULARIZERS: tuple[str, ...] = ("squared", "norm")


@dataclass(frozen=True)
class HessianParams:
    """Hyperparameters of ``hessian`` (G.4; defaults: CIFAR-100).

    Attributes
    ----------
    s1, s2
        LiSSA repeats (averaged) and recursion depth (CIFAR-100: 10 and 1000; Shakespeare: 5 and 700).
    scale
        Must exceed the largest eigenvalue of H̃ (CIFAR-100: 1000; Shakespeare: 5000).
    batch_size
        Size of the retain minibatches, sampled with replacement, of each Hessian–vector product
        (CIFAR-100: 10; Shakespeare: 256).
    weight_decay
        λ of the regulariser in H̃ (5e-4 for both datasets).
    gamma
        Extra convexity shift γ of H̃ (authors' code: 0.01 for CIFAR-100, 0.05 for Shakespeare).
    regularizer
        ``"squared"`` (½‖θ‖²) or ``"norm"`` (Σ_layers ‖θ_layer‖₂).
    grad_regularizer
        Add λ∇R to g (the authors' code) instead of the unregularised retain gradient (G.4 text).
    sigma
        Standard deviation of the final Gaussian noise on every parameter (1e-3; Table 7: 5e-3, 1e-2).
    grad_batch_size
        Chunk size for computing g over the retain set (memory only; no effect on the result
        beyond floating-point summation order).
    """

    s1: int = 10
    s2: int = 1000
    scale: float = 1000.0
    batch_size: int = 10
    weight_decay: float = 5e-4
    gamma: float = 0.01
    regularizer: str = "squared"
    grad_regularizer: bool = False
    sigma: float = 1e-3
    grad_batch_size: int = 1024

    def __post_init__(self) -> None:
        check_positive_int(self.s1, "s1")
        check_positive_int(self.s2, "s2")
        check_positive_int(self.batch_size, "batch_size")
        check_positive_int(self.grad_batch_size, "grad_batch_size")
        if not (isinstance(self.scale, (int, float)) and self.scale > 0 and math.isfinite(self.scale)):
            raise ValueError(f"scale must be a positive number, got {self.scale!r}")
        check_nonneg(self.weight_decay, "weight_decay")
        check_nonneg(self.gamma, "gamma")
        check_nonneg(self.sigma, "sigma")
        if self.regularizer not in REGULARIZERS:
            raise ValueError(f"regularizer must be one of {REGULARIZERS}, got {self.regularizer!r}")


BUILTIN_PARAMS: dict[str, type] = {
    "retain_finetune": RetainFinetuneParams,
    "forget_ascent": ForgetAscentParams,
    "ida": IDAParams,
    "hessian": HessianParams,
}
