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
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import torch
from torch import nn

from ..seeds import SeedLike, as_generator
from ..torch_utils import as_torch_generator, check_xy, model_device
from .sgd import TrainConfig, random_batches, sgd_run

__all__ = ["shuffle_orders", "epoch_rows", "epoch_batches", "training_batches", "train_model", "train_many"]


def shuffle_orders(n_universe: int, epochs: int, seed: SeedLike) -> np.ndarray:
    """π: one permutation of the universe 0..n_universe-1 per epoch, int64 ``(epochs, n_universe)``.

    The universe is every example that any training set of the experiment can contain (retain
    set and the whole candidate forget pool); ``seed`` is an int, a SeedSequence (the
    experiment's ``order`` stream) or a numpy Generator.
    """
    if n_universe < 1 or epochs < 0:
        raise ValueError("n_universe must be >= 1 and epochs >= 0")
    rng = as_generator(seed)
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


def check_orders(orders: np.ndarray, epochs: int) -> np.ndarray:
    orders = np.asarray(orders, dtype=np.int64)
    if orders.ndim != 2 or orders.shape[0] < epochs:
        raise ValueError(f"orders must have shape (>= {epochs} epochs, n_universe), got {orders.shape}")
    return orders


def training_batches(orders: np.ndarray, example_ids: np.ndarray, cfg: TrainConfig) -> list[np.ndarray]:
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
        batches = training_batches(check_orders(orders, cfg.epochs), np.asarray(example_ids), cfg)
    return sgd_run(
        model, xt, yt, batches, cfg.lrs(len(batches)), momentum=cfg.momentum, weight_decay=cfg.weight_decay,
        nesterov=cfg.nesterov, grad_clip=cfg.grad_clip, show_progress=progress, desc="base training",
    )


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
    from ..models import build_model
    from .batched import grouped_applicable, train_models_grouped

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
