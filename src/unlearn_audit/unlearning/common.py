"""Shared pieces of the gradient-based unlearning algorithms: the retain fine-tuning phase (G.7), and
the mini-batches of the methods that step on both sets (:func:`take_rows`, :func:`cycling_batches`,
:func:`union_batch`).

Retain fine-tuning (G.7), forget ascent (G.6), IDA (G.5) and model clipping (G.1) all end with
plain SGD steps on the retain set.  :func:`finetune_steps` draws those steps (the batches from the
run's generator, the schedule's learning rates) as :class:`RetainSteps`, which either runs them on
one model or, for K runs whose steps have the same shape and settings, :func:`run_grouped` runs them
on K models at once, as one grouped network or by ``torch.func.vmap``
(:func:`unlearn_audit.unlearning.unlearn_many`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn

from ..training.batched import grouped_sgd_run
from ..training.sgd import random_batches, sgd_run
from ..checks import check_choice
from ..training.vmapped import GROUP_MODES, vmapped_sgd_run
from .params import FinetuneParams

__all__ = ["FinetuneParams", "RetainSteps", "finetune", "finetune_steps", "groupable", "run_final", "run_grouped", "take_rows",
           "cycling_batches", "union_batch"]

Data = tuple[torch.Tensor, torch.Tensor]


def _index(rows: np.ndarray, device: torch.device) -> torch.Tensor:
    return torch.from_numpy(np.asarray(rows, dtype=np.int64)).to(device)


def take_rows(data: Data, rows: np.ndarray) -> Data:
    """The ``rows`` of an ``(x, y)`` pair."""
    x, y = data
    idx = _index(rows, x.device)
    return x.index_select(0, idx), y.index_select(0, idx)


def cycling_batches(n: int, batch_size: int, generator: torch.Generator) -> Callable[[], np.ndarray]:
    """Mini-batches of ``n`` rows, one a call, cycling through passes that are each shuffled from
    ``generator`` when the previous one is used up (so the draws interleave with the caller's)."""
    queue: list[np.ndarray] = []

    def next_rows() -> np.ndarray:
        if not queue:
            queue.extend(random_batches(n, batch_size, 1, generator))
        return queue.pop(0)

    return next_rows


def union_batch(first: Data, second: Data, rows: np.ndarray) -> tuple[torch.Tensor, torch.Tensor, int]:
    """A batch of ``first ∪ second`` as one index space (row i < len(first) is first's row i, row i ≥
    len(first) second's row i − len(first)): its x and y, first's rows before second's, and how many
    of them are first's."""
    rows = np.asarray(rows, dtype=np.int64)
    n = len(first[0])
    x1, y1 = take_rows(first, rows[rows < n])
    x2, y2 = take_rows(second, rows[rows >= n] - n)
    return torch.cat([x1, x2]), torch.cat([y1, y2]), len(x1)


@dataclass(frozen=True, eq=False)
class RetainSteps:
    """Plain SGD steps on the retain set: ``batches[t]`` (rows of D_r) at ``lrs[t]``, fresh momentum."""

    batches: list[np.ndarray]
    lrs: np.ndarray
    momentum: float = 0.0
    weight_decay: float = 0.0
    nesterov: bool = False
    grad_clip: float | None = None
    desc: str = "retain fine-tuning"

    def run(self, model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor]) -> nn.Module:
        """The steps on one model (in place), as :func:`~unlearn_audit.training.sgd.sgd_run` takes them."""
        x, y = retain
        return sgd_run(model, x, y, self.batches, self.lrs, momentum=self.momentum, weight_decay=self.weight_decay,
                       nesterov=self.nesterov, grad_clip=self.grad_clip, desc=self.desc)

    def shape(self) -> tuple:
        """What K runs' steps must share to run as one grouped network: the batch sizes, learning
        rates and optimiser settings (the batches' rows may differ)."""
        return (tuple(len(b) for b in self.batches), tuple(np.asarray(self.lrs, dtype=float).tolist()), self.momentum,
                self.weight_decay, self.nesterov, self.grad_clip)


def finetune_steps(n: int, p: FinetuneParams, generator: torch.Generator, *, desc: str = "retain fine-tuning") -> RetainSteps | None:
    """``p.epochs`` shuffled epochs over the n retain rows (permutations from ``generator``) with
    ``p``'s schedule, or None when there is nothing to run (G.7)."""
    cfg = p.finetune_config()
    if cfg.epochs == 0 or n == 0:
        return None
    batches = random_batches(n, cfg.batch_size, cfg.epochs, generator)
    return RetainSteps(batches, cfg.lrs(len(batches)), cfg.momentum, cfg.weight_decay, cfg.nesterov, cfg.grad_clip, desc)


def finetune(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], p: FinetuneParams, generator: torch.Generator, *, desc: str = "retain fine-tuning") -> nn.Module:
    """``p.epochs`` epochs of SGD on the retain set, shuffled by ``generator`` (G.7); fresh momentum."""
    return run_final(model, retain, finetune_steps(len(retain[0]), p, generator, desc=desc))


def run_final(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], steps: RetainSteps | None) -> nn.Module:
    """A method's final retain steps on its one model (nothing when there are none)."""
    return model if steps is None else steps.run(model, retain)


def groupable(steps: Sequence[RetainSteps | None], network: int | None = None) -> bool:
    """Whether these runs' final steps can run as one grouped network of ``network`` models (default:
    one per run; more when padded): a network of at least two, every run's steps present, all of one
    shape (:meth:`RetainSteps.shape`)."""
    size = len(steps) if network is None else max(int(network), len(steps))
    return size > 1 and len(steps) > 0 and all(s is not None for s in steps) and len({s.shape() for s in steps}) == 1


def run_grouped(models: Sequence[nn.Module], retain: tuple[torch.Tensor, torch.Tensor], steps: Sequence[RetainSteps],
                make_grouped: Callable[[int], nn.Module] | None, *, group_size: int | None = None, progress: bool | None = None,
                mode: str = "grouped") -> list[nn.Module]:
    """Each model's :class:`RetainSteps`, K models at once: as the grouped network ``make_grouped(K)``
    (``mode="grouped"``, :func:`~unlearn_audit.training.batched.grouped_sgd_run`) or by
    ``torch.func.vmap`` over the stacked weights (``mode="vmap"``, no ``make_grouped`` needed,
    :func:`~unlearn_audit.training.vmapped.vmapped_sgd_run`).  Model k takes exactly its own batches,
    so the result is its :meth:`RetainSteps.run` up to floating-point evaluation order.  The models'
    weights are replaced in place; returns them.

    ``group_size`` (≥ K) pads the network to that many models (copies of the last run, discarded),
    so that a short last group computes as a full one: the kernels' evaluation order depends on the
    network's size, not on the other models' data, so a run's result does not depend on which runs
    share its group (as :func:`~unlearn_audit.training.batched.train_models_grouped` pads)."""
    check_choice(mode, GROUP_MODES, "mode")
    if mode == "grouped" and make_grouped is None:
        raise ValueError("the grouped mode needs the model's grouped network (make_grouped); use mode='vmap' or the loop")
    steps, models = list(steps), list(models)
    if len(steps) != len(models) or not groupable(steps, group_size):
        raise ValueError("run_grouped needs one RetainSteps per model, all of one shape (RetainSteps.shape), and a network of two or more")
    k = len(models)
    if group_size is not None:
        if group_size < k:
            raise ValueError(f"group_size={group_size} is smaller than the {k} runs")
        steps += [steps[-1]] * (group_size - k)
    x, y = retain
    first = steps[0]
    rows = [np.stack([s.batches[t] for s in steps]) for t in range(len(first.batches))]
    settings = dict(momentum=first.momentum, weight_decay=first.weight_decay, nesterov=first.nesterov, grad_clip=first.grad_clip,
                    desc=f"{first.desc} x{k}", progress=progress)
    if mode == "vmap":
        vmapped_sgd_run(models + [copy.deepcopy(models[-1]) for _ in range(len(steps) - k)], x, y, rows, first.lrs, **settings)
        return models
    states = [m.state_dict() for m in models]
    net = make_grouped(len(steps)).load_state_dicts(states + [states[-1]] * (len(steps) - k)).to(x.device)
    grouped_sgd_run(net, x, y, rows, first.lrs, **settings)
    for model, state in zip(models, net.state_dicts()[:k]):
        model.load_state_dict(state)
    return models
