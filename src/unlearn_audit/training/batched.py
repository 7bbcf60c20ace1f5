"""Many TinyNets at once: K models on K training sets as one grouped-convolution network
(docs/workflow.md#many-models-per-job-threads-and-precision).

:func:`train_models_grouped` trains K TinyNets on K training sets of equal size at once — the
same training as :func:`~.base.train_model` up to floating-point evaluation order.  The workflow
uses it for a design with ``models_per_group`` K > 1 (:func:`unlearn_audit.pipeline.nn_runs.train`).
On the project's 2-core CPU machine, for the default digits model (``benchmarks/training.py``, width
0.25, 8x8, 60 epochs, loop and grouped interleaved in one run): loop/grouped 1.11 at K = 4 and 1.24
at K = 8 (1.39 for both over 10 epochs); earlier runs on the same machine, with ``torch.optim``'s
update, measured 0.83–1.36 for K = 1–16.  The default stays the loop (K = 1): its models are bitwise
those of every earlier run of the default config.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..torch_utils import check_xy, deterministic_algorithms
from ..torch_utils import progress as show
from .base import check_orders, training_batches
from .sgd import MomentumSGD, TrainConfig, resident_schedule

__all__ = ["grouped_applicable", "grouped_sgd_run", "train_models_grouped"]


def grouped_sgd_run(
    net: nn.Module,
    x: torch.Tensor,
    y: torch.Tensor,
    rows: Sequence[np.ndarray],
    lrs: np.ndarray,
    *,
    momentum: float = 0.0,
    weight_decay: float = 0.0,
    nesterov: bool = False,
    grad_clip: float | None = None,
    desc: str = "train",
    progress: bool | None = None,
) -> nn.Module:
    """One SGD step of every model of the grouped network ``net`` per entry of ``rows`` (in place):
    ``rows[t]`` is (K, b), the rows of ``(x, y)`` model k's step t takes, at learning rate ``lrs[t]``.

    Model k follows :func:`~.sgd.sgd_run` on its own batches — mean loss of its batch, momentum,
    weight decay and its own gradient clipping — since the summed loss Σ_k L_k has gradient ∇L_k
    with respect to model k's weights; only the floating-point evaluation order differs."""
    if len(lrs) != len(rows):
        raise ValueError(f"{len(rows)} steps but {len(lrs)} learning rates")
    opt = MomentumSGD(list(net.parameters()), momentum=momentum, weight_decay=weight_decay, nesterov=nesterov)
    net.train()
    schedule = resident_schedule(rows, x.device)
    with deterministic_algorithms(), show(len(rows), desc, progress) as bar:
        for t, step_rows in enumerate(rows):
            k, b = step_rows.shape
            opt.zero_grad()
            idx = schedule[t]
            xb = x.index_select(0, idx).view(k, b, *x.shape[1:])
            yb = y.index_select(0, idx)
            logits = net(xb)
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), yb, reduction="sum") / b
            loss.backward()
            if grad_clip is not None:
                net.clip_grad_norms_(grad_clip)
            opt.step(float(lrs[t]))
            if bar is not None:
                bar.update(1)
    return net


def grouped_applicable(make_grouped: Callable[[int], nn.Module] | None, example_ids_list: Sequence[np.ndarray]) -> bool:
    """Whether :func:`train_models_grouped` can train these runs: a grouped-network factory and equal
    training-set sizes."""
    return make_grouped is not None and len(example_ids_list) > 0 and len({len(e) for e in example_ids_list}) == 1


def train_models_grouped(
    make_grouped: Callable[[int], nn.Module],
    init_states: Mapping[str, torch.Tensor] | Sequence[Mapping[str, torch.Tensor]],
    x: Any,
    y: Any,
    example_ids_list: Sequence[np.ndarray],
    orders: np.ndarray,
    cfg: TrainConfig,
    *,
    group_size: int | None = None,
    progress: bool | None = None,
) -> list[dict[str, torch.Tensor]]:
    """Train K TinyNets on K training sets at once as one grouped network ``make_grouped(K)`` (a
    :class:`~unlearn_audit.models.GroupedTinyNet`, from :func:`~unlearn_audit.models.model_factories`:
    its ``load_state_dicts``, ``state_dicts`` and per-model ``clip_grad_norms_`` are what is used).

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
    orders = check_orders(orders, cfg.epochs)
    if orders.shape[1] != len(xt):
        raise ValueError(f"x must hold the whole universe ({orders.shape[1]} rows), got {len(xt)}")
    net = make_grouped(k).load_state_dicts(states).to(xt.device)  # the data's device
    # universe rows of every batch of every model: (K, b) per step
    per_model = [training_batches(orders, ids, cfg) for ids in ids_list]
    rows = [np.stack([ids_list[j][per_model[j][t]] for j in range(k)]) for t in range(len(per_model[0]))]
    grouped_sgd_run(net, xt, yt, rows, cfg.lrs(len(rows)), momentum=cfg.momentum, weight_decay=cfg.weight_decay,
                    nesterov=cfg.nesterov, grad_clip=cfg.grad_clip, desc=f"base training x{k_real}", progress=progress)
    return net.state_dicts()[:k_real]


