"""Hyperparameters and specs of the built-in unlearning algorithms (paper §7, App. G; docs/calibrations.md §0;
docs/development.md#add-an-unlearning-method).

Torch-free: the workflow validates an experiment's ``params`` against these dataclasses before any
job runs, without importing torch.  Defaults are the paper's CIFAR-100 values where it gives them.
:data:`METHOD_SPECS` holds each built-in method's :class:`~.spec.MethodSpec`: its dataclass, what it
is and reads, its work for the cost model and its config checks, the one place they are kept.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, fields

from ..checks import check_delta, check_epsilon, check_nonneg, check_positive, check_positive_int, check_probability
from ..training.config import TrainConfig
from .spec import FORWARD, HVP, MethodSpec, RunPart, Work, forget_rows

__all__ = [
    "NoUnlearningParams",
    "FinetuneParams",
    "RetainFinetuneParams",
    "ForgetAscentParams",
    "IDAParams",
    "HessianParams",
    "ModelClippingParams",
    "RewindToDeleteParams",
    "GradientAscentParams",
    "GradientDifferenceParams",
    "NPOParams",
    "SimNPOParams",
    "NegGradPlusParams",
    "ScrubParams",
    "RandomLabelsParams",
    "SalUnParams",
    "BadTeacherParams",
    "SSDParams",
    "model_clipping_plan",
    "REGULARIZERS",
    "FULL_BATCH",
    "METHOD_SPECS",
    "BUILTIN_PARAMS",
    "BUILTIN_RELEASE_PARAMS",
    "BUILTIN_GROUPED",
]


@dataclass(frozen=True)
class NoUnlearningParams:
    """``no_unlearning`` has no hyperparameters: the control that returns the trained model as is."""


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


@dataclass(frozen=True)
class ModelClippingParams(FinetuneParams):
    """Hyperparameters of ``model_clipping`` (G.1; Eq. 14; docs/calibrations.md §3–5).

    Attributes
    ----------
    epochs, batch_size, lr, schedule, weight_decay, ...
        ``epochs`` is the **total** unlearning budget in epochs of the retain set (50, G.1.2):
        ``epochs · ceil(n_retain / batch_size)`` steps, of which the first T are noisy and the
        rest are the Phase-2 fine-tuning (:class:`FinetuneParams`: one-cycle, maximum 0.1, weight
        decay 5e-4) with its schedule spread over the remaining steps.
    C0
        Radius of the initial projection of the trained model (30).  No initial noise (σ0 = 0,
        as in the audit), so C0 plays no role in the accounting.
    C2, sigma, epsilon
        Projection radius, noise std on every parameter and target ε of the noisy phase
        (defaults: Table 6, row 1: C2 = 0.2, σ = 0.1, ε = 1, T = 40).
    delta
        Target δ of the accountant (1e-5).
    noisy_lr, noisy_batch_size, noisy_weight_decay
        γ (constant, 1e-3), the retain minibatch size (128, reshuffled each epoch) and λ of
        Eq. 14 (0, as in the audit's configuration).
    noisy_steps
        ``None``: T from the accountant (Koloskova Thm 4.2) for (epsilon, delta, C2, sigma), the
        certified algorithm.  An integer: the uncertified fixed-step variant (G.1.3; e.g. C2 = 5,
        σ = 1e-4, 3170 steps); epsilon and delta are then ignored and may be ``None``.  ``"all"``:
        every step of the budget noisy (no fine-tuning), for a target the accountant cannot reach
        within the budget (Table 6 row 2: ε = 10, C2 = 0.1, σ = 0.02 needs 48,004 steps; the paper's
        "N/A"): uncertified, with epsilon and delta kept as the unreached target.
    checkpoint_steps
        Noisy steps t (1 ≤ t ≤ T) after which the model is reported to the monitor.
    compat_table6_truncation
        Use the audit repository's truncated θ (docs/calibrations.md §5 (a); 4041 instead of 4013 steps).
    """

    C0: float = 30.0
    C2: float = 0.2
    sigma: float = 0.1
    epsilon: float | None = 1.0
    delta: float | None = 1e-5
    noisy_lr: float = 1e-3
    noisy_batch_size: int = 128
    noisy_weight_decay: float = 0.0
    noisy_steps: int | str | None = None
    checkpoint_steps: tuple[int, ...] = ()
    compat_table6_truncation: bool = False

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive(self.C0, "C0")
        check_positive(self.C2, "C2")
        check_nonneg(self.noisy_lr, "noisy_lr")
        check_positive_int(self.noisy_batch_size, "noisy_batch_size")
        check_nonneg(self.noisy_weight_decay, "noisy_weight_decay")
        if self.noisy_steps is None:
            check_positive(self.sigma, "sigma (the certified model clipping needs sigma > 0)")
            if self.epsilon is None or self.delta is None:
                raise ValueError("epsilon and delta are required when noisy_steps is None (the certified algorithm)")
            check_epsilon(self.epsilon)
            check_delta(self.delta, positive=True)
        elif self.noisy_steps == "all":
            check_nonneg(self.sigma, "sigma")
            if self.epsilon is not None:
                check_epsilon(self.epsilon)
            if self.delta is not None:
                check_delta(self.delta, positive=True)
        else:
            if isinstance(self.noisy_steps, str):
                raise ValueError(f"noisy_steps must be null, a number of steps or 'all' (the whole budget), got {self.noisy_steps!r}")
            check_positive_int(self.noisy_steps, "noisy_steps", allow_zero=True)
            check_nonneg(self.sigma, "sigma")
        steps = self.checkpoint_steps
        if isinstance(steps, (str, bytes)) or not hasattr(steps, "__iter__"):
            raise ValueError(f"checkpoint_steps must be a sequence of positive integers, got {steps!r}")
        steps = tuple(steps)
        for s in steps:
            check_positive_int(s, "each of checkpoint_steps")
        object.__setattr__(self, "checkpoint_steps", tuple(sorted(set(int(s) for s in steps))))
        if not isinstance(self.compat_table6_truncation, bool):
            raise ValueError(f"compat_table6_truncation must be a bool, got {self.compat_table6_truncation!r}")

    @property
    def certified(self) -> bool:
        """Whether T comes from the accountant (``noisy_steps is None``)."""
        return self.noisy_steps is None

    @property
    def claim(self) -> tuple[float, float] | None:
        """The (ε, δ) the run is certified at, or ``None`` for the fixed-step (uncertified) variant."""
        return (float(self.epsilon), float(self.delta)) if self.certified else None

    def noisy_step_count(self, max_steps: int | None = None) -> int | None:
        """``noisy_steps`` (``"all"``: ``max_steps``, the budget), or the accountant's T (``None`` if δ is
        not reached within ``max_steps``)."""
        if self.noisy_steps == "all":
            if max_steps is None:
                raise ValueError("noisy_steps 'all' is the whole budget: give max_steps")
            return int(max_steps)
        if self.noisy_steps is not None:
            return int(self.noisy_steps)
        return _accountant_steps(float(self.epsilon), float(self.delta), float(self.C2), float(self.sigma),
                                 max_steps, self.compat_table6_truncation)

    def accountant_steps(self, max_steps: int | None = None) -> int | None:
        """The accountant's T for the target (epsilon, delta), whatever ``noisy_steps`` says (``None``
        without a target, or where δ is not reached within ``max_steps``)."""
        if self.epsilon is None or self.delta is None:
            return None
        return _accountant_steps(float(self.epsilon), float(self.delta), float(self.C2), float(self.sigma), max_steps,
                                 self.compat_table6_truncation)

    def total_steps(self, n_retain: int) -> int:
        """The whole unlearning budget: ``epochs · ceil(n_retain / batch_size)`` steps."""
        return int(self.epochs) * self.steps_per_epoch(n_retain)


@functools.lru_cache(maxsize=256)
def _accountant_steps(epsilon: float, delta: float, C2: float, sigma: float, max_steps: int | None, compat: bool) -> int | None:
    from ..stats.accountants import model_clipping_noisy_steps

    return model_clipping_noisy_steps(epsilon, delta, C2, sigma, max_steps=max_steps, compat_table6_truncation=compat)


def model_clipping_plan(params: ModelClippingParams, n_retain: int, *, strict: bool = True) -> tuple[int | None, int]:
    """(T, total_steps) of a model-clipping run on ``n_retain`` retain examples; no torch, no data.

    T is the number of noisy steps (``noisy_steps`` or the accountant's, Koloskova Thm 4.2) and
    ``total_steps = epochs · ceil(n_retain / batch_size)``.  A configuration whose T exceeds the
    budget (e.g. Table 6 row 2: 48,004 > 50 · 317 steps, "N/A"), or whose checkpoint steps lie
    beyond T, raises ``ValueError`` naming the numbers; with ``strict=False`` a certified T beyond
    the budget gives ``(None, total_steps)`` instead.
    """
    if not isinstance(params, ModelClippingParams):
        raise ValueError(f"params must be ModelClippingParams, got {type(params).__name__}")
    n = check_positive_int(n_retain, "n_retain")
    total = params.total_steps(n)
    budget = f"{params.epochs} epochs x {params.steps_per_epoch(n)} steps = {total} steps (n_retain={n}, batch_size={params.batch_size})"
    T = params.noisy_step_count(total)
    if T is None:
        if not strict:
            return None, total
        needed = params.noisy_step_count(max(100 * total, 10**6))
        need = f"T = {needed}" if needed is not None else f"more than {max(100 * total, 10**6)} (delta never reaches the target)"
        raise ValueError(
            f"model clipping: the accountant needs {need} noisy steps for epsilon={params.epsilon}, delta={params.delta}, "
            f"C2={params.C2}, sigma={params.sigma}, but the unlearning budget is {budget}"
        )
    if T > total:
        raise ValueError(f"model clipping: noisy_steps = {T} exceeds the unlearning budget of {budget}")
    beyond = [s for s in params.checkpoint_steps if s > T]
    if beyond:
        raise ValueError(f"model clipping: checkpoint_steps {beyond} lie beyond the noisy phase of T = {T} steps")
    return T, total


@dataclass(frozen=True)
class RewindToDeleteParams:
    """Hyperparameters of ``rewind_to_delete`` (G.2; Mu & Klabjan Thm 3.1; docs/calibrations.md §6–8).

    Attributes
    ----------
    T, K
        Full-batch GD steps of the whole training (40) and the rewound last ones (5): the base
        model is θ_{T−K}, unlearning runs K steps on the retain set.  K ≥ 1 (G needs a step).
    lr
        η of the K retain steps and of the training (0.01); momentum 0, no weight decay.
    epsilon, delta
        Target (ε, δ) of the final Gaussian noise (δ = 1e-3 as in the audit code, docs/calibrations.md §6).
    lipschitz_samples, lipschitz_std
        The per-run estimate of L (docs/calibrations.md §7): max over that many perturbations N(0, std² I).
    micro_batch
        Gradient-accumulation chunk of the full-batch gradients (memory only).
    """

    T: int = 40
    K: int = 5
    lr: float = 0.01
    epsilon: float = 1.0
    delta: float = 1e-3
    lipschitz_samples: int = 100
    lipschitz_std: float = 0.01
    micro_batch: int = 1024

    @property
    def claim(self) -> tuple[float, float]:
        """The (ε, δ) the release is calibrated for."""
        return (float(self.epsilon), float(self.delta))

    def __post_init__(self) -> None:
        check_positive_int(self.K, "K (R2D needs at least one retain step; K = 0 leaves G undefined)")
        check_positive_int(self.T, "T")
        if self.K > self.T:
            raise ValueError(f"K must be <= T, got K={self.K}, T={self.T}")
        check_positive(self.lr, "lr")
        check_epsilon(self.epsilon)
        check_delta(self.delta, positive=True)
        check_positive_int(self.lipschitz_samples, "lipschitz_samples")
        check_positive(self.lipschitz_std, "lipschitz_std")
        check_positive_int(self.micro_batch, "micro_batch")


@dataclass(frozen=True)
class GradientAscentParams:
    """Hyperparameters of ``gradient_ascent``, the language-model baseline that maximises the loss of
    the forget set's answers (Jang et al. 2023; TOFU's GA, Maini et al. 2024): ``epochs`` passes over
    D_f(S) in batches of ``batch_size`` pairs with AdamW at ``lr`` (``weight_decay``), gradients
    clipped to norm ``grad_clip`` (``None``: no clipping)."""

    epochs: int = 5
    batch_size: int = 8
    lr: float = 1e-5
    weight_decay: float = 0.01
    grad_clip: float | None = 1.0

    def __post_init__(self) -> None:
        check_positive_int(self.epochs, "epochs")
        check_positive_int(self.batch_size, "batch_size")
        check_positive(self.lr, "lr")
        check_nonneg(self.weight_decay, "weight_decay")
        if self.grad_clip is not None:
            check_positive(self.grad_clip, "grad_clip")


@dataclass(frozen=True)
class GradientDifferenceParams(GradientAscentParams):
    """Hyperparameters of ``gradient_difference`` (Liu et al. 2022; TOFU's GD): gradient ascent on a
    forget batch plus ``retain_weight`` times the loss of a retain batch drawn at each step."""

    retain_weight: float = 1.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_nonneg(self.retain_weight, "retain_weight")


@dataclass(frozen=True)
class NPOParams(GradientAscentParams):
    """Hyperparameters of ``npo``, negative preference optimisation (Zhang et al. 2024): the forget
    loss (2/β) log(1 + (π_θ(y|x)/π_ref(y|x))^β) against the model before unlearning as the
    reference, β = ``beta`` (0.1 on TOFU in the paper); ``retain_weight`` > 0 adds the retain loss
    (the paper's NPO+RT)."""

    beta: float = 0.1
    retain_weight: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive(self.beta, "beta")
        check_nonneg(self.retain_weight, "retain_weight")


@dataclass(frozen=True)
class SimNPOParams(NPOParams):
    """Hyperparameters of ``simnpo`` (Fan et al. 2024): NPO without a reference model, on the
    length-normalised log-likelihood, −(2/β) log σ(−(β/|y|) log π_θ(y|x) − γ), β = ``beta``, margin
    γ = ``gamma``; ``retain_weight`` > 0 adds the retain loss."""

    beta: float = 2.5
    gamma: float = 0.0

    def __post_init__(self) -> None:
        super().__post_init__()
        check_nonneg(self.gamma, "gamma")


@dataclass(frozen=True)
class NegGradPlusParams(FinetuneParams):
    """Hyperparameters of ``neggrad_plus`` (Kurmanji et al. 2023, the NegGrad+ baseline).

    Attributes
    ----------
    alpha
        Weight of the retain loss; the forget loss is ascended with weight 1 − alpha (the paper's β,
        tuned per setting; 0.9999 in its large-scale CIFAR-10 runs).  1: plain retain fine-tuning.
    forget_batch_size
        Mini-batch size on D_f(S); ``None``: ``batch_size``.
    epochs, batch_size, lr, schedule, momentum, weight_decay, ...
        The SGD of the combined steps (:class:`FinetuneParams`), epochs counted over the retain set:
        the paper's large-scale CIFAR-10 setting, 5 epochs at a constant 0.01 with weight decay
        5e-4; momentum 0.9.
    """

    epochs: int = 5
    lr: float = 0.01
    schedule: str = "constant"
    momentum: float = 0.9
    alpha: float = 0.9999
    forget_batch_size: int | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        check_probability(self.alpha, "alpha (the weight of the retain loss)", allow_zero=True)
        if self.forget_batch_size is not None:
            check_positive_int(self.forget_batch_size, "forget_batch_size")


@dataclass(frozen=True)
class ScrubParams:
    """Hyperparameters of ``scrub`` (Kurmanji et al. 2023, Algorithm 1).

    Attributes
    ----------
    epochs
        Min epochs (passes over D_r), the paper's STEPS (3).
    max_steps
        The first ``max_steps`` epochs each begin with a max epoch over D_f(S) (MAX_STEPS, 2); at most ``epochs``.
    batch_size, forget_batch_size
        Mini-batch sizes on D_r (128) and on D_f(S) (``None``: ``batch_size``).
    lr, momentum, weight_decay
        SGD of both kinds of step, constant learning rate (the authors' CIFAR settings: 5e-4, 0.9, 5e-4).
    alpha, gamma
        Weights of the retain KL and of the retain cross-entropy in a min step (Eq. 3; 0.001 and 0.99).
    temperature
        T of the softened softmaxes whose KL d(x) compares student and teacher (4, the authors' distillation temperature).
    """

    epochs: int = 3
    max_steps: int = 2
    batch_size: int = 128
    forget_batch_size: int | None = None
    lr: float = 5e-4
    momentum: float = 0.9
    weight_decay: float = 5e-4
    alpha: float = 0.001
    gamma: float = 0.99
    temperature: float = 4.0

    def __post_init__(self) -> None:
        check_positive_int(self.epochs, "epochs", allow_zero=True)
        check_positive_int(self.max_steps, "max_steps", allow_zero=True)
        if self.max_steps > self.epochs:
            raise ValueError(f"max_steps must be <= epochs (a max epoch precedes a min epoch), got max_steps={self.max_steps}, epochs={self.epochs}")
        check_positive_int(self.batch_size, "batch_size")
        if self.forget_batch_size is not None:
            check_positive_int(self.forget_batch_size, "forget_batch_size")
        check_nonneg(self.lr, "lr")
        if not 0 <= self.momentum < 1:
            raise ValueError(f"momentum must be in [0, 1), got {self.momentum!r}")
        check_nonneg(self.weight_decay, "weight_decay")
        check_nonneg(self.alpha, "alpha")
        check_nonneg(self.gamma, "gamma")
        check_positive(self.temperature, "temperature")


@dataclass(frozen=True)
class RandomLabelsParams(FinetuneParams):
    """Hyperparameters of ``random_labels`` (Graves et al. 2021): the SGD over D_r ∪ D_f(S), the
    forget rows relabelled (:class:`FinetuneParams`, epochs counted over the union).  Defaults: the
    random-labelling baseline as SalUn (Fan et al. 2024) runs it on CIFAR-10, 10 epochs of SGD with
    momentum 0.9 and weight decay 5e-4, at a constant 0.01 (the paper searches the rate)."""

    epochs: int = 10
    lr: float = 0.01
    schedule: str = "constant"
    momentum: float = 0.9


@dataclass(frozen=True)
class SalUnParams(RandomLabelsParams):
    """Hyperparameters of ``salun`` (Fan et al. 2024).

    Attributes
    ----------
    mask_fraction
        The fraction of all weights the saliency mask keeps, those with the largest |∇ℓ_f| (the
        threshold γ of Eq. 3 as a quantile; 0.5, the paper's default sparsity).
    epochs, batch_size, lr, momentum, weight_decay, ...
        The masked random-label SGD (:class:`RandomLabelsParams`: 10 epochs at 0.01).
    """

    mask_fraction: float = 0.5

    def __post_init__(self) -> None:
        super().__post_init__()
        check_probability(self.mask_fraction, "mask_fraction")


@dataclass(frozen=True)
class BadTeacherParams:
    """Hyperparameters of ``bad_teacher`` (Chundawat et al. 2023; the paper's settings as defaults).

    Attributes
    ----------
    epochs
        Passes over the retain subset ∪ D_f(S) (1).
    batch_size
        Mini-batch size (256).
    lr
        Constant learning rate of Adam (1e-4; no weight decay).
    temperature
        T of the softened softmaxes of the KL (1).
    retain_fraction
        The fraction of D_r drawn (without replacement, from the run's generator) to distil the
        competent teacher on (0.3).
    """

    epochs: int = 1
    batch_size: int = 256
    lr: float = 1e-4
    temperature: float = 1.0
    retain_fraction: float = 0.3

    def __post_init__(self) -> None:
        check_positive_int(self.epochs, "epochs", allow_zero=True)
        check_positive_int(self.batch_size, "batch_size")
        check_nonneg(self.lr, "lr")
        check_positive(self.temperature, "temperature")
        check_probability(self.retain_fraction, "retain_fraction", allow_zero=True)

    def retain_rows(self, n_retain: float) -> int:
        """How many retain rows the competent teacher is distilled on: ``retain_fraction`` of them, rounded."""
        return int(self.retain_fraction * n_retain + 0.5)


@dataclass(frozen=True)
class SSDParams:
    """Hyperparameters of ``ssd`` (Foster et al. 2024; their CIFAR values as defaults).

    Attributes
    ----------
    alpha
        Selection threshold: parameter i is dampened where []_f,i > alpha · []_D,i (10, the paper's value).
    lam
        Dampening constant λ: θ_i ← min(λ []_D,i / []_f,i, 1) · θ_i (1, the paper's value).
    batch_size
        Rows per gradient of the importances, each the mean over mini-batches of the squared
        gradient of the batch's mean loss: 1 (the default) is the empirical diagonal Fisher
        exactly; larger batches are faster and estimate it from batch gradients (as the authors'
        implementation does), which shrinks every importance alike.
    """

    alpha: float = 10.0
    lam: float = 1.0
    batch_size: int = 1

    def __post_init__(self) -> None:
        check_nonneg(self.alpha, "alpha")
        check_nonneg(self.lam, "lam")
        check_positive_int(self.batch_size, "batch_size")


# --------------------------------------------------------------------------------------
# The built-in methods' specs (docs/development.md#add-an-unlearning-method): their work for the
# cost model, in steps and training-image equivalents (:mod:`.spec`), and their config checks.
# --------------------------------------------------------------------------------------
def _no_work(p, n_retain: float, n_forget: float) -> Work:
    """The controls: scoring only."""
    return 0.0, 0.0


def _ida_combined_steps(p: IDAParams, n_retain: float) -> float:
    """IDA's combined steps: every (q+1)-th step of its ``forget_epochs`` epochs over the retain set (G.5)."""
    return math.floor(p.forget_epochs * math.ceil(n_retain / p.batch_size) / (p.q + 1))


def _ida_work(p: IDAParams, n_retain: float, n_forget: float) -> Work:
    """E_f interleaved epochs over D_r, each combined step a second pass over its forget batch, then
    the plain epochs."""
    per_epoch = math.ceil(n_retain / p.batch_size)
    steps = p.epochs * per_epoch
    steps += p.forget_epochs * per_epoch + (_ida_combined_steps(p, n_retain) if n_forget and p.lam > 0 else 0)
    images = (p.forget_epochs + p.epochs) * n_retain + forget_rows(_ida_combined_steps(p, n_retain), p.forget_batch_size or p.batch_size, n_forget)
    return float(steps), images


def _hessian_hvps(p: HessianParams) -> tuple[float, float]:
    """LiSSA's s1·s2 Hessian–vector products over minibatches of ``batch_size`` (G.4)."""
    return float(p.s1 * p.s2), float(p.s1 * p.s2 * p.batch_size)


def _hessian_work(p: HessianParams, n_retain: float, n_forget: float) -> Work:
    """The retain gradient in chunks of ``grad_batch_size``, then the LiSSA products at ``HVP`` each."""
    return math.ceil(n_retain / p.grad_batch_size) + HVP * p.s1 * p.s2, n_retain + HVP * p.s1 * p.s2 * p.batch_size


def _hessian_parts(p: HessianParams, n_retain: float) -> dict[str, RunPart]:
    products, examples = _hessian_hvps(p)
    return {"hvp": RunPart(products, examples, HVP * products, HVP * examples)}


def _noisy_parts(p: ModelClippingParams, n_retain: float) -> dict[str, RunPart]:
    """Model clipping's T noisy steps (App. G.1, Eq. 14) at ``noisy_batch_size`` (``noisy``): T of the
    budget's ``epochs · ceil(n/batch_size)`` steps, each counted as a fine-tuning step of
    n/ceil(n/batch_size) images; none where T is not known (the accountant's T beyond the budget)."""
    n = int(round(n_retain))
    total = p.total_steps(n)
    noisy = p.noisy_step_count(total)
    if noisy is None or not noisy:
        return {}
    noisy = min(noisy, total)
    return {"noisy": RunPart(float(noisy), noisy * n / math.ceil(n / p.noisy_batch_size), float(noisy), noisy * n / p.steps_per_epoch(n))}


def _model_clipping_check(p: ModelClippingParams, design, *, key: str, design_key: str, n_retain: float | None) -> list[tuple[str, str]]:
    """The accountant reaches the target δ, the checkpoints lie in the noisy phase, and the noisy
    steps fit the unlearning budget (epochs x steps an epoch) where the design's retain size is
    known (files smaller than the dataset's give a smaller budget, which the job checks again)."""
    T = p.noisy_step_count(10**6)
    if T is None:
        return [(f"{key}.params", f"the accountant never reaches delta = {p.delta} within 10^6 noisy steps for epsilon = {p.epsilon}, C2 = {p.C2}, sigma = {p.sigma} (Table 6 'N/A'): increase sigma or decrease C2")]
    beyond = [t for t in p.checkpoint_steps if t > T]
    if beyond:
        return [(f"{key}.params.checkpoint_steps", f"{beyond} lie beyond the noisy phase of T = {T} steps")]
    if n_retain is None or int(n_retain) < 1:  # no size, or no retain set at all: the design's pool check says so
        return []
    try:
        model_clipping_plan(p, int(n_retain))
    except ValueError as exc:
        return [(f"{key}.params", f"{exc}: lower noisy_steps, raise epochs or lower batch_size")]
    return []


def _r2d_gradients(p: RewindToDeleteParams) -> int:
    """Rewind-to-delete's full-batch gradients: K steps, ``lipschitz_samples`` perturbations and one more (G.2)."""
    return p.K + p.lipschitz_samples + 1


def _r2d_work(p: RewindToDeleteParams, n_retain: float, n_forget: float) -> Work:
    return _r2d_gradients(p) * math.ceil(n_retain / p.micro_batch), _r2d_gradients(p) * n_retain


def _r2d_parts(p: RewindToDeleteParams, n_retain: float) -> dict[str, RunPart]:
    """The full-batch gradients in micro-batches of ``micro_batch`` (``r2d``)."""
    gradients = _r2d_gradients(p)
    micro = float(gradients * math.ceil(n_retain / p.micro_batch))
    return {"r2d": RunPart(micro, gradients * n_retain, micro, gradients * n_retain)}


#: A full-batch base training (rewind-to-delete, App. G.2) sets train.batch_size at least this large.
FULL_BATCH = 65536


def _r2d_check(p: RewindToDeleteParams, design, *, key: str, design_key: str, n_retain: float | None) -> list[tuple[str, str]]:
    """The design's base training is the full-batch GD of T − K epochs at the unlearning step size."""
    train = design["train"]
    want = {"epochs": p.T - p.K, "lr": p.lr, "momentum": 0.0, "weight_decay": 0.0, "schedule": "constant"}
    wrong = {k: train.get(k) for k, v in want.items() if train.get(k) != v}
    if wrong or train.get("batch_size", 0) < FULL_BATCH:
        return [(f"{design_key}.train", f"rewind-to-delete unlearns from the T - K checkpoint of full-batch GD: the design's train must be {want} with batch_size >= {FULL_BATCH} (full batch); got {train}")]
    return []


def _forget_passes_work(p: GradientAscentParams, n_retain: float, n_forget: float, reference: float = 0.0) -> Work:
    """The language-model methods: ``epochs`` passes over D_f(S), a reference model's forward pass of
    each forget pair counting ``reference``, and, where ``retain_weight`` > 0, a retain batch of
    ``batch_size`` pairs a step."""
    steps = float(p.epochs * math.ceil(n_forget / p.batch_size)) if n_forget else 0.0
    retain_rows = steps * min(p.batch_size, n_retain) if getattr(p, "retain_weight", 0.0) > 0 else 0.0
    return steps, p.epochs * n_forget * (1.0 + reference) + retain_rows


def _npo_work(p: NPOParams, n_retain: float, n_forget: float) -> Work:
    """:func:`_forget_passes_work` with the reference model's forward pass of each forget pair."""
    return _forget_passes_work(p, n_retain, n_forget, FORWARD)


def _neggrad_plus_work(p: NegGradPlusParams, n_retain: float, n_forget: float) -> Work:
    """A retain batch and the next forget batch a step, each its own pass."""
    steps = p.epochs * math.ceil(n_retain / p.batch_size)
    return float(steps * (2 if n_forget else 1)), p.epochs * n_retain + forget_rows(steps, p.forget_batch_size or p.batch_size, n_forget)


def _scrub_work(p: ScrubParams, n_retain: float, n_forget: float) -> Work:
    """Max epochs over D_f(S), min epochs over D_r; the teacher's forward pass of every batch."""
    max_steps = p.max_steps * math.ceil(n_forget / (p.forget_batch_size or p.batch_size)) if n_forget else 0
    return (1.0 + FORWARD) * (p.epochs * math.ceil(n_retain / p.batch_size) + max_steps), (1.0 + FORWARD) * (p.epochs * n_retain + p.max_steps * n_forget)


def _random_labels_work(p: RandomLabelsParams, n_retain: float, n_forget: float) -> Work:
    """Passes over D_r ∪ D_f(S)."""
    rows = n_retain + n_forget
    return float(p.epochs * math.ceil(rows / p.batch_size)), float(p.epochs * rows)


def _salun_work(p: SalUnParams, n_retain: float, n_forget: float) -> Work:
    """The saliency's gradients of D_f(S), then :func:`_random_labels_work`."""
    rows = n_retain + n_forget
    steps, images = p.epochs * math.ceil(rows / p.batch_size), p.epochs * rows
    if n_forget:
        steps, images = steps + math.ceil(n_forget / p.batch_size), images + n_forget
    return float(steps), float(images)


def _bad_teacher_work(p: BadTeacherParams, n_retain: float, n_forget: float) -> Work:
    """Passes over the retain subset ∪ D_f(S), each row through one teacher, each teacher a pass."""
    rows = p.retain_rows(n_retain) + n_forget
    teachers = 2 if p.retain_rows(n_retain) and n_forget else 1
    return (1.0 + teachers * FORWARD) * p.epochs * math.ceil(rows / p.batch_size), (1.0 + FORWARD) * p.epochs * rows


def _ssd_work(p: SSDParams, n_retain: float, n_forget: float) -> Work:
    """The importances on D_r ∪ D_f(S) and on D_f(S), gradients of rows; no training."""
    if not n_forget:
        return 0.0, 0.0
    return float(math.ceil((n_retain + n_forget) / p.batch_size) + math.ceil(n_forget / p.batch_size)), n_retain + 2.0 * n_forget


_RETAIN = ("retain",)

#: The built-in methods' specs, in the order ``method_names`` and the docs list them; each method's
#: implementation is the module of its name (:func:`unlearn_audit.unlearning._load_builtins`).
METHOD_SPECS: dict[str, MethodSpec] = {s.name: s for s in (
    MethodSpec("no_unlearning", NoUnlearningParams, reads=(), control=True, training_loop=False, work=_no_work),
    MethodSpec("retain_finetune", RetainFinetuneParams, reads=_RETAIN, grouped=True),
    MethodSpec("forget_ascent", ForgetAscentParams, grouped=True),
    MethodSpec("ida", IDAParams, grouped=True, work=_ida_work),
    MethodSpec("hessian", HessianParams, reads=_RETAIN, release_params=("sigma",), training_loop=False, work=_hessian_work,
               hvps=_hessian_hvps, parts=_hessian_parts),
    MethodSpec("model_clipping", ModelClippingParams, certified=True, reads=_RETAIN, grouped=True, parts=_noisy_parts,
               check=_model_clipping_check),
    MethodSpec("rewind_to_delete", RewindToDeleteParams, certified=True, release_params=("epsilon", "delta"), training_loop=False,
               work=_r2d_work, parts=_r2d_parts, check=_r2d_check),
    MethodSpec("gradient_ascent", GradientAscentParams, work=_forget_passes_work),
    MethodSpec("gradient_difference", GradientDifferenceParams, work=_forget_passes_work),
    MethodSpec("npo", NPOParams, work=_npo_work),
    MethodSpec("simnpo", SimNPOParams, work=_forget_passes_work),
    MethodSpec("neggrad_plus", NegGradPlusParams, work=_neggrad_plus_work),
    MethodSpec("scrub", ScrubParams, work=_scrub_work),
    MethodSpec("random_labels", RandomLabelsParams, work=_random_labels_work),
    MethodSpec("salun", SalUnParams, work=_salun_work),
    MethodSpec("bad_teacher", BadTeacherParams, work=_bad_teacher_work),
    MethodSpec("ssd", SSDParams, work=_ssd_work),
)}

#: Each built-in method's hyperparameter dataclass (:data:`METHOD_SPECS`' ``params``).
BUILTIN_PARAMS: dict[str, type] = {name: spec.params for name, spec in METHOD_SPECS.items()}

#: The hyperparameters that only the final Gaussian release of a built-in method reads
#: (:class:`~unlearn_audit.unlearning.NoiseRelease`): Table 7's σ, the target (ε, δ) of R2D.
BUILTIN_RELEASE_PARAMS: dict[str, tuple[str, ...]] = {name: spec.release_params for name, spec in METHOD_SPECS.items() if spec.release_params}

#: The built-in methods that end with plain retain steps (``UnlearningMethod.final_steps``), whose
#: runs ``unlearn_many`` can group: known here without importing the implementations (torch), for
#: the cost model.
BUILTIN_GROUPED: tuple[str, ...] = tuple(name for name, spec in METHOD_SPECS.items() if spec.grouped)
