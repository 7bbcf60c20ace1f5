"""SGD with momentum and a per-step learning-rate schedule (App. G.1.2, G.3).

PyTorch semantics: ``buf = μ·buf + (g + wd·θ)``, ``θ -= lr·buf``; the learning rate of every step
comes from the one-cycle, cosine or constant schedule (:func:`lr_schedule`).  :func:`sgd_run` is
the one optimisation loop of the library: base training, retain fine-tuning, forget ascent and
IDA all call it.  The update is :class:`MomentumSGD`, ``torch.optim.SGD``'s arithmetic op for op
(bitwise-equal weights) without its cost: ``torch.optim``'s first step imports ``torch._dynamo``
(about 2 s of every job process) and its per-step wrappers cost more than the update itself.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Callable, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..torch_utils import deterministic_algorithms, progress

from .config import ANNEALING, SCHEDULES, TrainConfig, lr_schedule

if TYPE_CHECKING:
    from .resume import TrainingCheckpoint

__all__ = ["SCHEDULES", "ANNEALING", "TrainConfig", "lr_schedule", "IGNORE", "loss_fn", "random_batches", "MomentumSGD", "sgd_run", "StepLoss", "resident_schedule"]


#: A sequence target that is not scored (PyTorch's ``ignore_index`` default).
IGNORE = -100


def loss_fn(logits: torch.Tensor, y: torch.Tensor, reduction: str = "mean") -> torch.Tensor:
    """Cross-entropy; per-character for sequence logits ``(N, T, V)`` with targets ``(N, T)``.

    ``reduction="mean"`` averages over all examples (images) or all characters (text, the
    per-character loss of G.3); ``"none"`` gives one value per example (text: the mean over its
    characters).  Targets equal to ``IGNORE`` (a question–answer sequence's question and padding,
    :mod:`unlearn_audit.data.qa`) are not scored: the means run over the other targets only.
    """
    if reduction not in ("mean", "none"):
        raise ValueError(f"reduction must be 'mean' or 'none', got {reduction!r}")
    if logits.dim() == 3:
        ce = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="none").view(y.shape)
        # question-answer sequences score the answer's tokens only (IGNORE elsewhere, where the
        # cross-entropy is 0); torch.where keeps a sequence without IGNORE on the plain mean, bit for
        # bit, and needs no Python branch on the data (vmap traces this function)
        scored = y != IGNORE
        if reduction == "mean":
            return torch.where(scored.all(), ce.mean(), ce.sum() / scored.sum().clamp(min=1))
        return torch.where(scored.all(dim=1), ce.mean(dim=1), ce.sum(dim=1) / scored.sum(dim=1).clamp(min=1))
    return F.cross_entropy(logits, y, reduction=reduction)


def random_batches(n: int, batch_size: int, epochs: int, generator: torch.Generator) -> list[np.ndarray]:
    """Mini-batches of ``epochs`` shuffled passes over ``n`` rows, the permutations drawn from ``generator``."""
    out: list[np.ndarray] = []
    for _ in range(int(epochs)):
        perm = torch.randperm(int(n), generator=generator).numpy()
        out.extend(perm[i : i + batch_size] for i in range(0, n, batch_size))
    return out



def _clip_grad_norm(params: Sequence[torch.Tensor], max_norm: float) -> None:
    """Scale the gradients so that their global norm is at most ``max_norm`` (``torch.nn.utils.clip_grad_norm_``'s
    arithmetic: coefficient ``max_norm / (norm + 1e-6)``, applied when below 1); one call per list (``_foreach``)."""
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return
    total = torch.linalg.vector_norm(torch.stack(torch._foreach_norm(grads)))
    # clamped on the device rather than compared on the host: no sync a step (a product with 1.0 is exact)
    torch._foreach_mul_(grads, (max_norm / (total + 1e-6)).clamp(max=1.0))


def resident_schedule(batches: Sequence[np.ndarray], device: torch.device) -> list[torch.Tensor]:
    """Every step's rows (flattened) as views of one index tensor on ``device``: the whole schedule
    crosses to the device once, not once a step (no per-step copy or synchronisation)."""
    flat = [np.asarray(rows, dtype=np.int64).reshape(-1) for rows in batches]
    if not flat:
        return []
    return list(torch.from_numpy(np.concatenate(flat)).to(device).split([len(f) for f in flat]))


class MomentumSGD:
    """SGD with momentum, weight decay and optional Nesterov momentum, as ``torch.optim.SGD``
    (dampening 0) computes it, op for op: ``g ← g + wd·θ``; ``buf ← g`` on the first step, else
    ``buf ← μ·buf + g``; ``g ← g + μ·buf`` (Nesterov) or ``g ← buf``; ``θ ← θ − lr·g``.

    The learning rate is given to each :meth:`step`.  A parameter without a gradient is skipped,
    as ``torch.optim`` skips it.
    """

    def __init__(self, params: Sequence[torch.Tensor], *, momentum: float = 0.0, weight_decay: float = 0.0, nesterov: bool = False) -> None:
        if momentum < 0 or weight_decay < 0:
            raise ValueError(f"momentum and weight_decay must be non-negative, got {momentum} and {weight_decay}")
        if nesterov and momentum == 0:
            raise ValueError("nesterov needs momentum > 0")
        self.params = list(params)
        self.momentum, self.weight_decay, self.nesterov = float(momentum), float(weight_decay), bool(nesterov)
        self.buffers: list[torch.Tensor | None] = [None] * len(self.params)

    def zero_grad(self) -> None:
        """Drop every gradient (``set_to_none``)."""
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self, lr: float) -> None:
        """One update of every parameter that has a gradient, at learning rate ``lr``.

        The arithmetic of the docstring above, each operation applied to the whole list of
        parameters at once (``torch._foreach_*``: on CPU the same per-tensor kernels, so the
        weights are bitwise those of a per-tensor loop, with one Python call per operation)."""
        mu, wd = self.momentum, self.weight_decay
        live = [i for i, p in enumerate(self.params) if p.grad is not None]
        if not live:
            return
        params = [self.params[i] for i in live]
        grads = [p.grad for p in params]
        if wd != 0:
            grads = torch._foreach_add(grads, params, alpha=wd)
        if mu != 0:
            old = [k for k, i in enumerate(live) if self.buffers[i] is not None]
            for k, i in enumerate(live):
                if self.buffers[i] is None:
                    self.buffers[i] = torch.clone(grads[k]).detach()
            if old:
                bufs = [self.buffers[live[k]] for k in old]
                torch._foreach_mul_(bufs, mu)
                torch._foreach_add_(bufs, [grads[k] for k in old])
            bufs = [self.buffers[i] for i in live]
            grads = torch._foreach_add(grads, bufs, alpha=mu) if self.nesterov else bufs
        torch._foreach_add_(params, grads, alpha=-lr)


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
    show_progress: bool | None = None,
    desc: str = "train",
    checkpoint: "TrainingCheckpoint | None" = None,
    optimizer: str = "sgd",
) -> nn.Module:
    """Run one SGD step per batch of rows of ``(x, y)`` with learning rate ``lrs[t]`` (in place);
    ``optimizer`` ``adamw``: an AdamW step (:class:`~.adamw.AdamW`, ``weight_decay`` decoupled,
    ``momentum`` unused) instead.

    ``ascent=True`` ascends the loss (gradient ascent, G.6).  ``step_loss(model, t, rows)``
    replaces the default objective (mean loss of the batch) — used by IDA (G.5).  The optimiser's
    momentum buffer starts at zero.  With a ``checkpoint`` (:mod:`.resume`) the loop starts from
    its saved state, if any, saves it from time to time and stops, saved, on SIGTERM.
    """
    if len(lrs) != len(batches):
        raise ValueError(f"{len(batches)} batches but {len(lrs)} learning rates")
    params = [p for p in model.parameters() if p.requires_grad]
    if not batches:
        return model
    if optimizer == "adamw":
        from .adamw import AdamW

        opt = AdamW(params, weight_decay=weight_decay)
    elif optimizer == "sgd":
        opt = MomentumSGD(params, momentum=momentum, weight_decay=weight_decay, nesterov=nesterov)
    else:
        raise ValueError(f"optimizer must be sgd or adamw, got {optimizer!r}")
    start = 0 if checkpoint is None else checkpoint.restore(model, opt.buffers, len(batches))
    model.train()
    schedule = resident_schedule(batches, x.device) if step_loss is None else None
    with deterministic_algorithms(), progress(len(batches), desc, show_progress) as bar, checkpoint or contextlib.nullcontext():
        if bar is not None and start:
            bar.update(start)
        for t in range(start, len(batches)):
            rows = batches[t]
            opt.zero_grad()
            if schedule is not None:
                idx = schedule[t]
                loss = loss_fn(model(x.index_select(0, idx)), y.index_select(0, idx))
            else:
                loss = step_loss(model, t, rows)
            (-loss if ascent else loss).backward()
            if grad_clip is not None:
                _clip_grad_norm(params, grad_clip)
            opt.step(float(lrs[t]))
            if bar is not None:
                bar.update(1)
            if checkpoint is not None:
                checkpoint.after_step(t + 1, len(batches), model, opt.buffers)
    return model


