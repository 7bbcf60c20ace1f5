"""Training: the SGD loop, base training from a fixed x0 and order π, many models at once.

* :mod:`.config` — :class:`TrainConfig` and the learning-rate schedules (numpy only, no torch);
* :mod:`.sgd` — the one SGD loop :func:`sgd_run` and its update :class:`MomentumSGD` (torch);
* :mod:`.base` — π (:func:`shuffle_orders`), :func:`train_model` (Section 3, G.1.2);
* :mod:`.batched` — K TinyNets as one grouped-convolution network (docs/workflow.md#many-models-per-job-threads-and-precision);
* :mod:`.vmapped` — K models' SGD steps by ``torch.func.vmap`` over their stacked weights
  (docs/workflow.md#many-models-per-job-threads-and-precision);
* :mod:`.many` — :func:`train_many`: many models from one x0 and π, one by one or grouped;
* :mod:`.resume` — a training's saved state, to resume it after SIGTERM or a lost job.

Names are imported from their modules on first access, so ``import unlearn_audit.training.config``
does not import torch.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "ANNEALING": "config", "SCHEDULES": "config", "TrainConfig": "config", "BaseTrainConfig": "config", "lr_schedule": "config",
    "MomentumSGD": "sgd", "loss_fn": "sgd", "random_batches": "sgd", "sgd_run": "sgd",
    "epoch_batches": "base", "epoch_rows": "base", "shuffle_orders": "base", "train_many": "many",
    "train_model": "base", "training_batches": "base",
    "grouped_applicable": "batched", "train_models_grouped": "batched",
    "GROUP_MODES": "vmapped", "vmapped_sgd_run": "vmapped",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str):
    if name in _EXPORTS:
        return getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
