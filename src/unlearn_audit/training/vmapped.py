"""K models' SGD steps at once by ``torch.func.vmap`` over their stacked weights
(docs/workflow.md#many-models-per-job-threads-and-precision).

The second batched form beside the grouped network (:mod:`.batched`): :func:`vmapped_sgd_run`
stacks the K models' parameters along a new first dimension and computes the K per-model
gradients of one step with ``vmap(grad(loss))`` over ``functional_call`` of one model, so any
model that ``torch.func`` can transform runs batched, not only the TinyNet of the grouped network.
Model k follows :func:`~.sgd.sgd_run` on its own batches — mean loss of its batch, its own gradient
clipping, momentum and weight decay (:class:`~.sgd.MomentumSGD` on the stacked tensors is the same
elementwise arithmetic) — up to the floating-point evaluation order of the batched kernels.

Which form is faster depends on the device: on the project's 2-core CPU the grouped network wins
(``benchmarks/unlearning_grouped.py`` times the loop, the grouped network and this form side by side);
``benchmarks/workflow_loop.py`` times both on a GPU.
"""

from __future__ import annotations

import copy
from typing import Sequence

import numpy as np
import torch
from torch import nn

from ..torch_utils import clip_grad_norms_per_model_, deterministic_algorithms
from ..torch_utils import progress as show
from .sgd import MomentumSGD, loss_fn, resident_schedule

__all__ = ["GROUP_MODES", "vmapped_sgd_run", "StackedModels"]

#: How K runs' steps are batched: one grouped-convolution network (TinyNet only), or ``torch.func.vmap``.
GROUP_MODES = ("grouped", "vmap")


def vmapped_sgd_run(
    models: Sequence[nn.Module],
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
) -> list[nn.Module]:
    """One SGD step of every model per entry of ``rows``; ``rows[t]`` is (K, b), the rows of ``(x, y)``
    model k's step t takes, at learning rate ``lrs[t]``.  The models' weights are replaced in place
    by the result; returns them.  Models with buffers that training updates (batch norm's running
    statistics) are refused: a functional call does not write them back."""
    from torch.func import functional_call, grad, vmap

    models = list(models)
    if len(lrs) != len(rows):
        raise ValueError(f"{len(rows)} steps but {len(lrs)} learning rates")
    if any(len(step) != len(models) for step in rows):
        raise ValueError(f"every step needs one row of batch indices per model ({len(models)})")
    stack = StackedModels(models)
    if not rows:
        return models
    for m in models:
        m.train()
    names, stacked, template = stack.names, stack.weights, stack.template
    template.train()

    def loss(weights: tuple[torch.Tensor, ...], xb: torch.Tensor, yb: torch.Tensor) -> torch.Tensor:
        return loss_fn(functional_call(template, dict(zip(names, weights)), (xb,)), yb)

    per_model_grad = vmap(grad(loss))
    opt = MomentumSGD(stacked, momentum=momentum, weight_decay=weight_decay, nesterov=nesterov)
    schedule = resident_schedule(rows, x.device)
    k = len(models)
    with deterministic_algorithms(), show(len(rows), desc, progress) as bar:
        for t in range(len(rows)):
            idx = schedule[t]
            xb = x.index_select(0, idx).view(k, -1, *x.shape[1:])
            yb = y.index_select(0, idx).view(k, -1, *y.shape[1:])
            grads = list(per_model_grad(tuple(stacked), xb, yb))
            if grad_clip is not None:
                clip_grad_norms_per_model_(grads, k, grad_clip)
            for p, g in zip(stacked, grads):
                p.grad = g
            opt.step(float(lrs[t]))
            opt.zero_grad()
            if bar is not None:
                bar.update(1)
    return stack.write_back()


class StackedModels:
    """K models of one architecture as stacked weights (a new first dimension of size K), for
    :func:`vmapped_sgd_run` and the full-batch steps of rewind-to-delete
    (:func:`~unlearn_audit.unlearning.rewind_to_delete.r2d_descent_many`): the gradient of each
    model's mean loss over one data set, by ``vmap(grad(loss))`` with the data shared, as :func:`~unlearn_audit.unlearning.hessian.retain_gradient` computes it for one model
    (the same micro-batches, each weighted by its size), up to the batched kernels' rounding."""

    def __init__(self, models: Sequence[nn.Module]):
        from torch.func import stack_module_state

        self.models = list(models)
        if any(True for m in self.models for _ in m.buffers()):
            raise ValueError("stacked models must be models without buffers (no batch-norm running statistics); use the loop")
        params, _ = stack_module_state(self.models)
        self.names = [n for n, p in self.models[0].named_parameters() if p.requires_grad]
        self.weights = [params[n].detach().clone() for n in self.names]
        self.template = copy.deepcopy(self.models[0]).to("meta")

    def mean_loss_gradient(self, x: torch.Tensor, y: torch.Tensor, chunk: int, *, train: bool) -> list[torch.Tensor]:
        """∇ of each model's mean loss over (x, y) at the current weights, (K, ...) per parameter."""
        from torch.func import functional_call, grad, vmap

        n = len(x)
        self.template.train(train)

        def chunk_loss(weights: tuple[torch.Tensor, ...], xb: torch.Tensor, yb: torch.Tensor) -> torch.Tensor:
            return loss_fn(functional_call(self.template, dict(zip(self.names, weights)), (xb,)), yb, reduction="none").sum() / n

        per_model = vmap(grad(chunk_loss), in_dims=(0, None, None))
        total = [torch.zeros_like(w) for w in self.weights]
        for i in range(0, n, chunk):
            for acc, g in zip(total, per_model(tuple(self.weights), x[i : i + chunk], y[i : i + chunk])):
                acc.add_(g)
        return total

    def norm_tensor(self, tensors: Sequence[torch.Tensor]) -> torch.Tensor:
        """Each model's ‖·‖₂ over ``tensors`` (stacked), accumulated in float64 as :func:`~unlearn_audit.torch_utils.global_norm`:
        a float64 vector on the weights' device (no host read)."""
        return sum(t.detach().double().reshape(len(self.models), -1).pow(2).sum(dim=1) for t in tensors).sqrt()

    def norms(self, tensors: Sequence[torch.Tensor]) -> list[float]:
        """:meth:`norm_tensor` read to the host."""
        return [float(v) for v in self.norm_tensor(tensors)]

    def write_back(self) -> list[nn.Module]:
        """The models with the stacked weights copied into them (in place); returns them."""
        with torch.no_grad():
            for j, m in enumerate(self.models):
                named = dict(m.named_parameters())
                for n, w in zip(self.names, self.weights):
                    named[n].copy_(w[j])
        return self.models
