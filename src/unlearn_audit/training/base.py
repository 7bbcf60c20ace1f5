"""Base training from a fixed initial model x0 and a fixed shuffle order π (Section 3, App. G.1.2, G.3).

The threat model fixes, per experiment, the initial weights x0 (:func:`unlearn_audit.models.initial_model`)
and the data order π: one permutation per epoch of the *universe* of trainable examples (the retain
set and the whole candidate forget pool, indexed 0..n_universe-1; :func:`shuffle_orders`).  A training
run on D(S) visits, in epoch e, the examples of ``orders[e]`` that belong to D(S), in that order,
and cuts them into consecutive mini-batches (:func:`epoch_rows`).  Given x0 and π, the trained model
A(D(S)) is then a deterministic function of the sign vector S, so one training per distinct
training set is shared across unlearning seeds and unlearning methods (docs/workflow.md#the-dag-step-by-step, step 3).

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

from typing import Any

import numpy as np
import torch
from torch import nn

from ..seeds import SeedLike, as_generator
from ..torch_utils import as_torch_generator, check_xy, model_device
from .config import optimizer_of
from .sgd import TrainConfig, random_batches, sgd_run

__all__ = ["shuffle_orders", "epoch_rows", "epoch_batches", "training_batches", "train_model"]


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
    checkpoint=None,
) -> nn.Module:
    """Train ``model`` (in place, from its current weights x0) on the rows ``(x, y)`` and return it.

    ``example_ids[i]`` is the universe index of row i; epoch e visits the rows in the order of
    ``orders[e]`` filtered to ``example_ids`` (:func:`epoch_rows`), in mini-batches of
    ``cfg.batch_size``.  ``orders=None`` draws a fresh permutation of the rows per epoch from
    ``generator`` instead (not the audit's threat model).  SGD with ``cfg``'s schedule and
    momentum; deterministic on CPU (module docstring).  ``checkpoint`` (a
    :class:`~.resume.TrainingCheckpoint`) makes the training resumable after SIGTERM or a lost job.
    """
    xt, yt = check_xy(x, y, example_ids, device=model_device(model))
    if orders is None:
        batches = random_batches(len(xt), cfg.batch_size, cfg.epochs, as_torch_generator(generator))
    else:
        batches = training_batches(check_orders(orders, cfg.epochs), np.asarray(example_ids), cfg)
    return sgd_run(
        model, xt, yt, batches, cfg.lrs(len(batches)), momentum=cfg.momentum, weight_decay=cfg.weight_decay,
        nesterov=cfg.nesterov, grad_clip=cfg.grad_clip, show_progress=progress, desc="base training", checkpoint=checkpoint,
        optimizer=optimizer_of(cfg),
    )
