"""Hessian-based unlearning: one Newton step by LiSSA, then Gaussian noise (App. G.4; docs/calibrations.md §11).

Update (code form of Zhang et al. 2025, the version the audit ran):

    θ̃ = θ* − H̃⁻¹ g + ξ,    ξ ~ N(0, σ² I) on every parameter,

with g = ∇L(θ*; D_r), the mean cross-entropy gradient over the whole retain set, and
H̃ = ∇²[L_B(θ*) + (λ + γ) R(θ*)] the Hessian of the regularised loss, which enters only through
Hessian–vector products on minibatches B sampled with replacement from D_r.  The weight decay λ
(and the convexity shift γ of the authors' code) appear in H̃ only, not in g (G.4: "applied only
in the Hessian computation and not in the gradient g"); ``grad_regularizer=True`` adds λ∇R to g
as the authors' code does.  R is ½‖θ‖² (``"squared"``: H̃ = H + (λ+γ) I, G.4's description and the
Shakespeare code) or Σ_layers ‖θ_layer‖₂ (``"norm"``: the CIFAR code).

LiSSA (Agarwal et al. 2017), exactly as coded (docs/calibrations.md §11):

    for i = 1..s1:   h ← g;   for j = 1..s2:  h ← g + h − (H̃_{B_j} h) / scale;   est_i = h / scale
    H̃⁻¹ g ≈ mean_i est_i

which converges to H̃⁻¹ g when scale exceeds the largest eigenvalue of H̃.  The forget set is not
used: in the code form the retain gradient stands in for the forget gradient (they are equal up to
sign and scale at a stationary point of the full loss).
"""

from __future__ import annotations

import contextlib

from typing import Callable, Sequence

import torch
from torch import nn

from ..training.sgd import loss_fn
from .registry import Monitor, NoiseRelease, register
from .params import METHOD_SPECS, REGULARIZERS, HessianParams

__all__ = ["HessianParams", "hessian", "hessian_step", "hessian_release", "lissa_inverse_hvp", "retain_gradient", "regularizer", "REGULARIZERS"]

def regularizer(params: Sequence[torch.Tensor], kind: str) -> torch.Tensor:
    """R(θ): ½‖θ‖² (``"squared"``) or Σ_layers ‖θ_layer‖₂ (``"norm"``).

    ``"norm"`` is not differentiable at an all-zero tensor (e.g. a bias never trained); such
    tensors are left out (subgradient 0, no curvature).
    """
    if kind == "squared":
        return 0.5 * sum((p * p).sum() for p in params)
    if kind == "norm":
        return sum(torch.linalg.vector_norm(p) for p in params if bool(p.detach().any()))
    raise ValueError(f"regularizer must be one of {REGULARIZERS}, got {kind!r}")


def retain_gradient(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], chunk: int = 1024) -> list[torch.Tensor]:
    """g = ∇L(θ; D_r): gradient of the mean loss over the whole retain set, accumulated in chunks."""
    params = [p for p in model.parameters() if p.requires_grad]
    x, y = retain
    n = len(x)
    if n == 0:
        raise ValueError("the retain set is empty")
    total = [torch.zeros_like(p) for p in params]
    for i in range(0, n, chunk):
        loss = loss_fn(model(x[i : i + chunk]), y[i : i + chunk], reduction="none").sum() / n
        for acc, gr in zip(total, torch.autograd.grad(loss, params)):
            acc.add_(gr)
    return total


def lissa_inverse_hvp(
    v: Sequence[torch.Tensor],
    hvp: Callable[[Sequence[torch.Tensor]], Sequence[torch.Tensor]],
    *,
    s1: int,
    s2: int,
    scale: float,
) -> list[torch.Tensor]:
    """LiSSA estimate of H⁻¹ v (docs/calibrations.md §11).

    ``hvp(h)`` returns the product of a (stochastic) Hessian estimate with ``h``; it is called
    s1·s2 times and should draw a fresh minibatch each call.  Raises ``FloatingPointError`` when
    the recursion diverges (scale below the largest eigenvalue).
    """
    v = [t.detach() for t in v]
    acc = [torch.zeros_like(t) for t in v]
    for _ in range(int(s1)):
        h = [t.clone() for t in v]
        for _ in range(int(s2)):
            hv = hvp(h)
            h = [vi + hi - hvi / scale for vi, hi, hvi in zip(v, h, hv)]
        if not all(torch.isfinite(t).all() for t in h):
            raise FloatingPointError(f"LiSSA diverged: scale={scale} must exceed the largest eigenvalue of the regularised Hessian")
        for a, hi in zip(acc, h):
            a.add_(hi / scale)
    return [a / s1 for a in acc]


def _minibatch_hvp(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], p: HessianParams, generator: torch.Generator) -> Callable[[Sequence[torch.Tensor]], list[torch.Tensor]]:
    """The s1·s2 minibatch Hessian-vector products of LiSSA: every minibatch drawn up front in one
    call (the same draws, in the same order, as one call per product) and sent to the device once,
    so no product copies its indices from the host."""
    params = [q for q in model.parameters() if q.requires_grad]
    x, y = retain
    coef = p.weight_decay + p.gamma
    schedule = iter(torch.randint(0, len(x), (p.s1 * p.s2, p.batch_size), generator=generator).to(x.device))

    def hvp(h: Sequence[torch.Tensor]) -> list[torch.Tensor]:
        idx = next(schedule)
        loss = loss_fn(model(x.index_select(0, idx)), y.index_select(0, idx))
        if coef:
            loss = loss + coef * regularizer(params, p.regularizer)
        grads = torch.autograd.grad(loss, params, create_graph=True)
        dot = sum((gr * hi).sum() for gr, hi in zip(grads, h))
        return [t.detach() for t in torch.autograd.grad(dot, params)]

    return hvp


@contextlib.contextmanager
def _cudnn_off():
    """``torch.backends.cudnn.enabled`` False inside, restored after.  Set directly, not through
    ``torch.backends.cudnn.flags()``: that also reads the legacy TF32 flag, which PyTorch refuses to
    mix with the new ``fp32_precision`` API that every workflow job's precision region sets on a GPU
    (:func:`~unlearn_audit.torch_utils.compute_precision`)."""
    before = torch.backends.cudnn.enabled
    torch.backends.cudnn.enabled = False
    try:
        yield
    finally:
        torch.backends.cudnn.enabled = before


def _without_cudnn_rnn(model: nn.Module, device: torch.device):
    """cuDNN off for a recurrent model's passes on a GPU: cuDNN's LSTM refuses a backward in eval mode
    and a double backward (``create_graph=True``), both of which the Newton step takes; PyTorch's own
    LSTM kernels do both.  Elsewhere (the CPU, a model without recurrence) nothing changes."""
    if torch.device(device).type == "cuda" and any(isinstance(m, nn.RNNBase) for m in model.modules()):
        return _cudnn_off()
    return contextlib.nullcontext()


def hessian_step(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], forget: tuple[torch.Tensor, torch.Tensor], params: HessianParams, generator: torch.Generator) -> dict:
    """The noiseless part, θ ← θ − H̃⁻¹ g by LiSSA (G.4), in place; the minibatches from ``generator``."""
    model.eval()  # no dropout or batch statistics in the audited models; eval mode as in the authors' code
    plist = [q for q in model.parameters() if q.requires_grad]
    with _without_cudnn_rnn(model, retain[0].device):
        g = retain_gradient(model, retain, params.grad_batch_size)
        if params.grad_regularizer and params.weight_decay:
            reg = torch.autograd.grad(params.weight_decay * regularizer(plist, params.regularizer), plist)
            g = [a + b for a, b in zip(g, reg)]
        step = lissa_inverse_hvp(g, _minibatch_hvp(model, retain, params, generator), s1=params.s1, s2=params.s2, scale=params.scale)
    with torch.no_grad():
        for q, d in zip(plist, step):
            q.sub_(d)
    return {}


def hessian_release(model: nn.Module, state: dict, params: HessianParams, generator: torch.Generator, monitor: Monitor | None = None) -> nn.Module:
    """θ ← θ + N(0, σ² I) on every parameter (G.4, Eq. 15), the noise from ``generator``."""
    if params.sigma:
        with torch.no_grad():
            for q in (q for q in model.parameters() if q.requires_grad):
                q.add_(params.sigma * torch.randn(q.shape, generator=generator, dtype=q.dtype).to(q.device))
    return model


@register("hessian", description="Newton step by LiSSA, then Gaussian noise (G.4)",
          noise_release=NoiseRelease(hessian_step, hessian_release, METHOD_SPECS["hessian"].release_params))
def hessian(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], forget: tuple[torch.Tensor, torch.Tensor], params: HessianParams, generator: torch.Generator) -> nn.Module:
    """θ ← θ − H̃⁻¹ g by LiSSA, then θ ← θ + N(0, σ² I) on every parameter (G.4, Eq. 15)."""
    return hessian_release(model, hessian_step(model, retain, forget, params, generator), params, generator)
