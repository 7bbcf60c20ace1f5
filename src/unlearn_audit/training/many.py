"""Many models from one x0 and order π: one by one (:func:`.base.train_model`) or K at a time as one
grouped network (:mod:`.batched`), the path chosen per call (Section 3, G.1.2;
docs/workflow.md#many-models-per-job-threads-and-precision).

Its own module so that :mod:`.base` and :mod:`.batched` do not import each other.
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np
import torch
from torch import nn

from ..torch_utils import check_xy
from .base import train_model
from .batched import grouped_applicable, train_models_grouped
from .config import optimizer_of
from .sgd import TrainConfig

__all__ = ["train_many"]


def train_many(
    make_model: Callable[[], nn.Module],
    init_state: Mapping[str, torch.Tensor],
    x: Any,
    y: Any,
    example_ids_list: Sequence[np.ndarray],
    orders: np.ndarray,
    cfg: TrainConfig,
    *,
    make_grouped: Callable[[int], nn.Module] | None = None,
    grouped: bool | None = False,
    group_size: int = 8,
    progress: bool | None = None,
) -> list[dict[str, torch.Tensor]]:
    """Train one model per training set from the shared x0 ``init_state`` and order π.

    ``make_model()`` builds one model and ``make_grouped(K)`` K of them as one grouped network
    (both from :func:`unlearn_audit.models.model_factories`; training never looks a model up by
    name).  ``x, y`` hold the universe (row u = universe example u).  ``grouped=False`` (default)
    trains the runs one by one with :func:`train_model`; ``True`` trains them ``group_size`` at a
    time with :func:`train_models_grouped` (a grouped factory and training sets of equal size; an
    error otherwise); ``None`` picks the grouped path when it applies.  Every group is padded to
    ``group_size`` models, so a model's weights do not depend on how the runs were chunked — but
    they do depend, in the last bits (amplified by training), on the path, the group size and
    the number of torch threads: keep all three fixed within an experiment.  Returns the trained
    state dicts in the order of ``example_ids_list``.
    """
    ids_list = [np.asarray(e, dtype=np.int64) for e in example_ids_list]
    can_group = grouped_applicable(make_grouped, ids_list)
    if grouped and not can_group:
        raise ValueError("grouped training needs a grouped-network factory (TinyNet) and training sets of equal size")
    if grouped and optimizer_of(cfg) != "sgd":
        raise ValueError(f"grouped training takes SGD steps; optimizer {optimizer_of(cfg)!r} trains one model at a time (models_per_group: 1)")
    can_group = can_group and optimizer_of(cfg) == "sgd"
    if group_size < 1:
        raise ValueError("group_size must be >= 1")
    if grouped or (grouped is None and can_group):
        out: list[dict[str, torch.Tensor]] = []
        for i in range(0, len(ids_list), group_size):
            out += train_models_grouped(make_grouped, init_state, x, y, ids_list[i : i + group_size], orders, cfg,
                                        group_size=group_size, progress=progress)
        return out
    xt, yt = check_xy(x, y)
    out = []
    for ids in ids_list:
        model = make_model()
        model.load_state_dict(init_state)
        idx = torch.from_numpy(ids).to(xt.device)  # the universe may live on a GPU: index it there
        train_model(model, xt.index_select(0, idx), yt.index_select(0, idx), ids, orders, cfg, progress=progress)
        out.append({k: v.detach().clone() for k, v in model.state_dict().items()})
    return out
