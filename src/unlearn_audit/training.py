"""Base training from a fixed initial model x0 and a fixed shuffle order π (Section 3, App. G.1.2, G.3).

The threat model fixes, per experiment, the initial weights x0 (:func:`unlearn_audit.models.initial_model`)
and the data order π: one permutation per epoch of the *universe* of trainable examples (the retain
set and the whole candidate forget pool, indexed 0..n_universe-1; :func:`shuffle_orders`).  A training
run on D(S) visits, in epoch e, the examples of ``orders[e]`` that belong to D(S), in that order,
and cuts them into consecutive mini-batches (:func:`epoch_rows`).  Given x0 and π, the trained model
A(D(S)) is then a deterministic function of the sign vector S, so one training per distinct
training set is shared across unlearning seeds and unlearning methods (DESIGN §3).

Optimiser: SGD with momentum (PyTorch semantics: ``buf = μ·buf + (g + wd·θ)``, ``θ -= lr·buf``) and a
per-step learning rate from the one-cycle, cosine or constant schedule (:func:`lr_schedule`).

Determinism: everything runs on CPU tensors held in memory; batches are gathered by index from
the in-memory data (no DataLoader, no worker processes); :func:`deterministic_algorithms` switches
on ``torch.use_deterministic_algorithms`` for the duration of a run (restoring the previous
setting).  Two runs with the same x0, π, data, configuration and number of torch threads give
bitwise-identical weights.  Results differ in the last bits across thread counts, CPU types and
torch versions (different reduction orders in the convolution kernels), and training amplifies
such differences (1 vs 2 threads: 4e-4 in the weights after 3 epochs of the digits model), so
the number of torch threads must be fixed per experiment for A(D(S)) to depend only on S.

:func:`train_many` trains one model per training set.  It loops over :func:`train_model` by
default; :func:`train_models_grouped` (opt-in, ``grouped=True``) trains K TinyNets on K training
sets of equal size at once as one grouped-convolution network (DESIGN §8) — the same training up
to floating-point evaluation order.  On the project's 2-core CPU machines the grouped network
was not reliably faster for the default digits model (``benchmarks/training.py``: loop/grouped
0.83–1.36 for K = 1–16, width 0.25, 8x8; the loop is compute-bound in the convolution kernels at
≈ 2.3 ms per step of 64 images), so the loop is the default.
"""

from __future__ import annotations

import contextlib
import math
import sys
from dataclasses import asdict, dataclass, fields
from typing import Any, Callable, Iterator, Mapping, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .seeds import torch_seed

__all__ = [
    "SCHEDULES",
    "TrainConfig",
    "lr_schedule",
    "loss_fn",
    "shuffle_orders",
    "epoch_rows",
    "epoch_batches",
    "deterministic_algorithms",
    "as_tensor",
    "as_torch_generator",
    "check_xy",
    "model_device",
    "random_batches",
    "sgd_run",
    "train_model",
    "train_models_grouped",
    "train_many",
    "grouped_applicable",
    "progress_enabled",
]

SCHEDULES: tuple[str, ...] = ("onecycle", "cosine", "constant")
ANNEALING: tuple[str, ...] = ("cos", "linear")

Seed = int | np.random.SeedSequence | np.random.Generator


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
        values = dict(values or {})
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown training parameter(s) {unknown}; allowed: {sorted(known)}")
        return cls(**values)

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


def loss_fn(logits: torch.Tensor, y: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
    """Cross-entropy; per-character for sequence logits ``(N, T, V)`` with targets ``(N, T)``.

    ``reduction="mean"`` averages over all examples (images) or all characters (text, the
    per-character loss of G.3); ``"none"`` gives one value per example (text: the mean over its
    characters).
    """
    if reduction not in ("mean", "none"):
        raise ValueError(f"reduction must be 'mean' or 'none', got {reduction!r}")
    if logits.dim() == 3:
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="none").view(y.shape)
        return ce.mean() if reduction == "mean" else ce.mean(dim=1)
    return F.cross_entropy(logits, y, reduction=reduction)


def shuffle_orders(n_universe: int, epochs: int, seed: Seed) -> np.ndarray:
    """π: one permutation of the universe 0..n_universe-1 per epoch, int64 ``(epochs, n_universe)``.

    The universe is every example that any training set of the experiment can contain (retain
    set and the whole candidate forget pool); ``seed`` is an int, a SeedSequence (the
    experiment's ``order`` stream) or a numpy Generator.
    """
    if n_universe < 1 or epochs < 0:
        raise ValueError("n_universe must be >= 1 and epochs >= 0")
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    out = np.empty((int(epochs), int(n_universe)), dtype=np.int64)
    for e in range(int(epochs)):
        out[e] = rng.permutation(int(n_universe))
    return out


def _positions(example_ids: np.ndarray, n_universe: int) -> np.ndarray:
    ids = np.asarray(example_ids, dtype=np.int64)
    if ids.ndim != 1:
        raise ValueError("example_ids must be one-dimensional")
    if len(ids) and (ids.min() < 0 or ids.max() >= n_universe):
        raise ValueError(f"example_ids must lie in [0, {n_universe}) (the universe of the shuffle order)")
    pos = np.full(int(n_universe), -1, dtype=np.int64)
    pos[ids] = np.arange(len(ids))
    if len(ids) and (pos >= 0).sum() != len(ids):
        raise ValueError("example_ids contain duplicates")
    return pos


def epoch_rows(order: np.ndarray, example_ids: np.ndarray) -> np.ndarray:
    """Rows of the training set in the order of one epoch: ``order`` filtered to ``example_ids``.

    ``example_ids[i]`` is the universe index of row i.  The examples of the training set appear in
    their relative order in ``order``; adding an example to the training set inserts it at its own
    position and changes nothing else in the sequence.
    """
    order = np.asarray(order, dtype=np.int64)
    pos = _positions(example_ids, len(order))
    seq = pos[order]
    return seq[seq >= 0]


def epoch_batches(order: np.ndarray, example_ids: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """The mini-batches (row indices) of one epoch: consecutive chunks of :func:`epoch_rows`."""
    rows = epoch_rows(order, example_ids)
    return [rows[i : i + batch_size] for i in range(0, len(rows), batch_size)]


@contextlib.contextmanager
def deterministic_algorithms(enabled: bool = True) -> Iterator[None]:
    """Temporarily set ``torch.use_deterministic_algorithms`` (warn-only), restoring the previous state."""
    prev, prev_warn = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    torch.use_deterministic_algorithms(enabled, warn_only=True)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(prev, warn_only=prev_warn)


def as_tensor(a: Any, dtype: torch.dtype | None = None) -> torch.Tensor:
    """A CPU tensor view of a numpy array or tensor (no copy when possible)."""
    t = a if isinstance(a, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(a))
    return t.to(dtype) if dtype is not None and t.dtype != dtype else t


def as_torch_generator(generator: torch.Generator | np.random.Generator | np.random.SeedSequence | int | None) -> torch.Generator:
    """A CPU ``torch.Generator`` from a torch Generator (returned as is), a seed, a SeedSequence or a numpy Generator."""
    if isinstance(generator, torch.Generator):
        return generator
    if generator is None:
        raise ValueError("a generator (or seed) is required for randomised steps")
    if isinstance(generator, np.random.SeedSequence):
        seed = torch_seed(generator)
    elif isinstance(generator, np.random.Generator):
        seed = int(generator.integers(0, 2**63 - 1))
    else:
        seed = int(generator)
    g = torch.Generator()
    g.manual_seed(seed)
    return g


def random_batches(n: int, batch_size: int, epochs: int, generator: torch.Generator) -> list[np.ndarray]:
    """Mini-batches of ``epochs`` shuffled passes over ``n`` rows, the permutations drawn from ``generator``."""
    out: list[np.ndarray] = []
    for _ in range(int(epochs)):
        perm = torch.randperm(int(n), generator=generator).numpy()
        out.extend(perm[i : i + batch_size] for i in range(0, n, batch_size))
    return out


def progress_enabled(progress: bool | None) -> bool:
    """Progress bars: on when asked, or by default when stderr is a TTY."""
    if progress is None:
        return bool(getattr(sys.stderr, "isatty", lambda: False)())
    return bool(progress)


def _progress(total: int, desc: str, progress: bool | None):
    if not progress_enabled(progress):
        return contextlib.nullcontext(None)
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, leave=False)


def _clip_grad_norm(params: Sequence[torch.Tensor], max_norm: float) -> None:
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for g in grads:
            g.mul_(coef)


StepLoss = Callable[[nn.Module, int, np.ndarray], torch.Tensor]


def sgd_run(
    model: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    batches: Sequence[np.ndarray],
    lrs: np.ndarray,
    *,
    momentum: float = 0.0,
    weight_decay: float = 0.0,
    nesterov: bool = False,
    grad_clip: float | None = None,
    ascent: bool = False,
    step_loss: StepLoss | None = None,
    progress: bool | None = None,
    desc: str = "train",
) -> nn.Module:
    """Run one SGD step per batch of rows of ``(x, y)`` with learning rate ``lrs[t]`` (in place).

    ``ascent=True`` ascends the loss (gradient ascent, G.6).  ``step_loss(model, t, rows)``
    replaces the default objective (mean loss of the batch) — used by IDA (G.5).  The optimiser's
    momentum buffer starts at zero.
    """
    if len(lrs) != len(batches):
        raise ValueError(f"{len(batches)} batches but {len(lrs)} learning rates")
    params = [p for p in model.parameters() if p.requires_grad]
    if not batches:
        return model
    opt = torch.optim.SGD(params, lr=float(lrs[0]), momentum=momentum, weight_decay=weight_decay, nesterov=nesterov)
    model.train()
    with deterministic_algorithms(), _progress(len(batches), desc, progress) as bar:
        for t, rows in enumerate(batches):
            for group in opt.param_groups:
                group["lr"] = float(lrs[t])
            opt.zero_grad(set_to_none=True)
            if step_loss is None:
                idx = torch.from_numpy(np.asarray(rows, dtype=np.int64)).to(x.device)
                loss = loss_fn(model(x.index_select(0, idx)), y.index_select(0, idx))
            else:
                loss = step_loss(model, t, rows)
            (-loss if ascent else loss).backward()
            if grad_clip is not None:
                _clip_grad_norm(params, grad_clip)
            opt.step()
            if bar is not None:
                bar.update(1)
    return model


def model_device(model: nn.Module) -> torch.device:
    """The device of the model's parameters (CPU for a model without parameters)."""
    return next((p.device for p in model.parameters()), torch.device("cpu"))


def check_xy(
    x: Any, y: Any, example_ids: np.ndarray | None = None, *, what: str = "", device: torch.device | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(x, y)`` as tensors (float32 images or int64 character ids; int64 labels) on ``device``.

    Mismatched row counts raise ``ValueError`` (prefixed with ``what`` when given).
    """
    xt, yt = as_tensor(x), as_tensor(y, torch.int64)
    xt = xt.to(torch.float32) if torch.is_floating_point(xt) else xt.to(torch.int64)
    if len(xt) != len(yt):
        raise ValueError(f"{what + ': ' if what else ''}x has {len(xt)} rows but y has {len(yt)}")
    if example_ids is not None and len(example_ids) != len(xt):
        raise ValueError(f"example_ids has {len(example_ids)} entries for {len(xt)} rows")
    return (xt, yt) if device is None else (xt.to(device), yt.to(device))


def _check_orders(orders: np.ndarray, epochs: int) -> np.ndarray:
    orders = np.asarray(orders, dtype=np.int64)
    if orders.ndim != 2 or orders.shape[0] < epochs:
        raise ValueError(f"orders must have shape (>= {epochs} epochs, n_universe), got {orders.shape}")
    return orders


def _training_batches(orders: np.ndarray, example_ids: np.ndarray, cfg: TrainConfig) -> list[np.ndarray]:
    batches: list[np.ndarray] = []
    for e in range(cfg.epochs):
        batches.extend(epoch_batches(orders[e], example_ids, cfg.batch_size))
    return batches


def train_model(
    model: nn.Module,
    x: Any,
    y: Any,
    example_ids: np.ndarray,
    orders: np.ndarray | None,
    cfg: TrainConfig,
    generator: torch.Generator | int | None = None,
    *,
    progress: bool | None = None,
) -> nn.Module:
    """Train ``model`` (in place, from its current weights x0) on the rows ``(x, y)`` and return it.

    ``example_ids[i]`` is the universe index of row i; epoch e visits the rows in the order of
    ``orders[e]`` filtered to ``example_ids`` (:func:`epoch_rows`), in mini-batches of
    ``cfg.batch_size``.  ``orders=None`` draws a fresh permutation of the rows per epoch from
    ``generator`` instead (not the audit's threat model).  SGD with ``cfg``'s schedule and
    momentum; deterministic on CPU (module docstring).
    """
    xt, yt = check_xy(x, y, example_ids, device=model_device(model))
    if orders is None:
        batches = random_batches(len(xt), cfg.batch_size, cfg.epochs, as_torch_generator(generator))
    else:
        batches = _training_batches(_check_orders(orders, cfg.epochs), np.asarray(example_ids), cfg)
    return sgd_run(
        model, xt, yt, batches, cfg.lrs(len(batches)), momentum=cfg.momentum, weight_decay=cfg.weight_decay,
        nesterov=cfg.nesterov, grad_clip=cfg.grad_clip, progress=progress, desc="base training",
    )


def grouped_applicable(model_name: str, example_ids_list: Sequence[np.ndarray]) -> bool:
    """Whether :func:`train_models_grouped` can train these runs: TinyNet and equal training-set sizes."""
    from .models import _canonical

    try:
        key = _canonical(model_name)
    except ValueError:
        return False
    return key == "tinynet" and len(example_ids_list) > 0 and len({len(e) for e in example_ids_list}) == 1


def train_models_grouped(
    init_states: Mapping[str, torch.Tensor] | Sequence[Mapping[str, torch.Tensor]],
    x: Any,
    y: Any,
    example_ids_list: Sequence[np.ndarray],
    orders: np.ndarray,
    cfg: TrainConfig,
    model_params: Mapping[str, Any] | None = None,
    *,
    group_size: int | None = None,
    progress: bool | None = None,
) -> list[dict[str, torch.Tensor]]:
    """Train K TinyNets on K training sets at once as one :class:`~unlearn_audit.models.GroupedTinyNet`.

    ``x, y`` hold the universe of examples (row u is universe example u); training set k is
    ``example_ids_list[k]``, and all K sets must have the same size (then every model takes the
    same number of steps with batches of the same sizes).  Model k follows exactly the
    training of :func:`train_model` on its set — same batches, schedule, momentum, weight decay and
    per-model gradient clipping — because the summed loss Σ_k L_k has gradient ∇L_k with respect to
    model k's weights; only the floating-point evaluation order differs from the loop.

    The kernels' evaluation order depends on the number of models in the network, not on the
    other models' data, so model k's weights are bitwise the same whatever the other training sets
    of its group, for a given network size.  ``group_size`` (>= K) pads the network to that many
    models (repeating the last set; the copies are discarded), so that a short last chunk trains
    exactly as a full one.  ``init_states`` is one x0 shared by all models or one state dict per
    model.  Returns the K trained ``TinyNetCIFAR100`` state dicts.
    """
    from .models import GroupedTinyNet

    ids_list = [np.asarray(e, dtype=np.int64) for e in example_ids_list]
    k_real = len(ids_list)
    if k_real == 0:
        return []
    if len({len(e) for e in ids_list}) != 1:
        raise ValueError("train_models_grouped needs training sets of equal size; use train_many (loop fallback)")
    states = [init_states] * k_real if isinstance(init_states, Mapping) else list(init_states)
    if len(states) != k_real:
        raise ValueError(f"{len(states)} initial state dicts for {k_real} training sets")
    if group_size is not None:
        if group_size < k_real:
            raise ValueError(f"group_size={group_size} is smaller than the {k_real} training sets")
        ids_list += [ids_list[-1]] * (group_size - k_real)
        states += [states[-1]] * (group_size - k_real)
    k = len(ids_list)
    xt, yt = check_xy(x, y)
    orders = _check_orders(orders, cfg.epochs)
    if orders.shape[1] != len(xt):
        raise ValueError(f"x must hold the whole universe ({orders.shape[1]} rows), got {len(xt)}")
    net = GroupedTinyNet(k, **dict(model_params or {})).load_state_dicts(states)
    # universe rows of every batch of every model: (K, b) per step
    per_model = [_training_batches(orders, ids, cfg) for ids in ids_list]
    steps = len(per_model[0])
    lrs = cfg.lrs(steps)
    opt = torch.optim.SGD(list(net.parameters()), lr=float(lrs[0]) if steps else 0.0, momentum=cfg.momentum,
                          weight_decay=cfg.weight_decay, nesterov=cfg.nesterov)
    net.train()
    with deterministic_algorithms(), _progress(steps, f"base training x{k_real}", progress) as bar:
        for t in range(steps):
            rows = np.stack([ids_list[j][per_model[j][t]] for j in range(k)])
            for group in opt.param_groups:
                group["lr"] = float(lrs[t])
            opt.zero_grad(set_to_none=True)
            idx = torch.from_numpy(rows.reshape(-1))
            xb = xt.index_select(0, idx).view(k, rows.shape[1], *xt.shape[1:])
            yb = yt.index_select(0, idx)
            logits = net(xb)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), yb, reduction="sum") / rows.shape[1]
            loss.backward()
            if cfg.grad_clip is not None:
                net.clip_grad_norms_(cfg.grad_clip)
            opt.step()
            if bar is not None:
                bar.update(1)
    return net.state_dicts()[:k_real]


def train_many(
    model_name: str,
    model_params: Mapping[str, Any] | None,
    init_state: Mapping[str, torch.Tensor],
    x: Any,
    y: Any,
    example_ids_list: Sequence[np.ndarray],
    orders: np.ndarray,
    cfg: TrainConfig,
    *,
    grouped: bool | None = False,
    group_size: int = 8,
    progress: bool | None = None,
) -> list[dict[str, torch.Tensor]]:
    """Train one model per training set from the shared x0 ``init_state`` and order π.

    ``x, y`` hold the universe (row u = universe example u).  ``grouped=False`` (default) trains
    the runs one by one with :func:`train_model`; ``True`` trains them ``group_size`` at a time
    with :func:`train_models_grouped` (TinyNet, training sets of equal size; an error otherwise);
    ``None`` picks the grouped path when it applies.  Every group is padded to
    ``group_size`` models, so a model's weights do not depend on how the runs were chunked — but
    they do depend, in the last bits (amplified by training), on the path, the group size and
    the number of torch threads: keep all three fixed within an experiment.  Returns the trained
    state dicts in the order of ``example_ids_list``.
    """
    from .models import build_model

    ids_list = [np.asarray(e, dtype=np.int64) for e in example_ids_list]
    can_group = grouped_applicable(model_name, ids_list)
    if grouped and not can_group:
        raise ValueError("grouped training needs a TinyNet model and training sets of equal size")
    if group_size < 1:
        raise ValueError("group_size must be >= 1")
    if grouped or (grouped is None and can_group):
        out: list[dict[str, torch.Tensor]] = []
        for i in range(0, len(ids_list), group_size):
            out += train_models_grouped(init_state, x, y, ids_list[i : i + group_size], orders, cfg, model_params,
                                        group_size=group_size, progress=progress)
        return out
    xt, yt = check_xy(x, y)
    out = []
    for ids in ids_list:
        model = build_model(model_name, **dict(model_params or {}))
        model.load_state_dict(init_state)
        idx = torch.from_numpy(ids)
        train_model(model, xt.index_select(0, idx), yt.index_select(0, idx), ids, orders, cfg, progress=progress)
        out.append({k: v.detach().clone() for k, v in model.state_dict().items()})
    return out
