"""Rewind-to-delete, R2D: K full-batch retain GD steps from θ_{T−K}, then Gaussian noise (App. G.2; docs/calibrations.md §6–8).

Mu & Klabjan (2025), Thm 3.1.  The model given is the checkpoint θ_{T−K} of T − K full-batch GD
steps on the whole training set D (the workflow's base training produces it).  Unlearning runs K
full-batch GD steps (η = ``lr``, momentum 0, no weight decay) on the retain-set mean cross-entropy,
the gradient accumulated over micro-batches weighted by their size, giving θ''_K, and releases

    θ_u = θ''_K + ξ,    ξ ~ N(0, σ² I) on every parameter, drawn from the run's generator

(every run draws its own noise; the authors reused one noisy model for many runs).  σ is the exact
Gaussian mechanism (docs/calibrations.md §2) for Δ = 2·m_f·G·h(K)/(L·n)
(docs/calibrations.md §6, (R1)–(R2)), n = |D_r| + |D_f(S)|, m_f = |D_f(S)|.  G and L are the authors' per-run estimates (docs/calibrations.md §7) — **estimates, not
certified bounds**:

* G = max over the K steps of the full-batch gradient norm before each step (train mode);
* L̂ = max_i ‖g(θ''_K + ξ_i) − g(θ''_K)‖ / ‖ξ_i‖ over ``lipschitz_samples`` draws
  ξ_i ~ N(0, ``lipschitz_std``² I), in eval mode.

So σ differs between runs and forget sets, as in the audit.  Δ = 0 (no forget data, or T = K)
gives σ = 0.
"""

from __future__ import annotations

import math
from typing import Sequence

import torch
from torch import nn

from ..stats.accountants import r2d_h, r2d_sensitivity
from ..stats.gaussian_mechanism import gaussian_sigma
from .registry import Monitor, NoiseRelease, register
from ..torch_utils import global_norm, sum_of_squares
from .hessian import retain_gradient
from .params import METHOD_SPECS, RewindToDeleteParams

__all__ = ["RewindToDeleteParams", "rewind_to_delete", "r2d_descent", "r2d_descent_many", "r2d_release", "lipschitz_estimate"]


@torch.no_grad()
def _noise(params, std: float, generator: torch.Generator) -> list[torch.Tensor]:
    return [std * torch.randn(p.shape, generator=generator, dtype=p.dtype).to(p.device) for p in params]


def lipschitz_estimate(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], samples: int, std: float,
                       generator: torch.Generator, chunk: int = 1024) -> float:
    """L̂ = max_i ‖g(θ+ξ_i) − g(θ)‖/‖ξ_i‖, ξ_i ~ N(0, std² I), g the retain mean-CE gradient (docs/calibrations.md §7).

    Computed in eval mode; the model's parameters are restored afterwards.  An estimate, not a bound.
    """
    was_training = model.training
    model.eval()
    params = [p for p in model.parameters() if p.requires_grad]
    base = [p.detach().clone() for p in params]
    g0 = retain_gradient(model, retain, chunk)
    best = 0.0
    try:
        for _ in range(int(samples)):
            xi = _noise(params, std, generator)
            with torch.no_grad():
                for p, b, e in zip(params, base, xi):
                    p.copy_(b + e)
            gi = retain_gradient(model, retain, chunk)
            # ‖ξ_i‖ as realised in float32 parameters
            with torch.no_grad():
                step = [p.detach() - b for p, b in zip(params, base)]
            best = max(best, global_norm([a - c for a, c in zip(gi, g0)]) / global_norm(step))
    finally:
        with torch.no_grad():
            for p, b in zip(params, base):
                p.copy_(b)
        model.train(was_training)
    return best


def r2d_descent(
    model: nn.Module,
    retain: tuple[torch.Tensor, torch.Tensor],
    forget: tuple[torch.Tensor, torch.Tensor],
    params: RewindToDeleteParams,
    generator: torch.Generator,
) -> dict:
    """The noiseless part: K full-batch GD steps on D_r from θ_{T−K} (in place), G and L̂ (docs/calibrations.md §7).

    The Lipschitz probes are drawn from ``generator``; D_f(S) enters only through its size.
    """
    x, _ = retain
    if len(x) == 0:
        raise ValueError("rewind_to_delete: the retain set is empty")
    plist = [p for p in model.parameters() if p.requires_grad]
    model.train()
    largest = None  # the largest ‖g‖² of the steps, on the device: no host read a step
    for _ in range(params.K):
        grads = retain_gradient(model, retain, params.micro_batch)
        squared = sum_of_squares(grads)
        largest = squared if largest is None else torch.maximum(largest, squared)
        with torch.no_grad():
            for p, g in zip(plist, grads):
                p.sub_(params.lr * g)
    G = math.sqrt(float(largest)) if largest is not None else 0.0  # = the largest global_norm: the rounded root is monotone
    L = lipschitz_estimate(model, retain, params.lipschitz_samples, params.lipschitz_std, generator, params.micro_batch)
    return _descent_state(L, G, len(x), forget)


def _descent_state(L: float, G: float, n_retain: int, forget: tuple[torch.Tensor, torch.Tensor]) -> dict:
    """What the release needs of a run's descent: L̂, G, n = |D_r| + |D_f(S)| and m_f = |D_f(S)|."""
    if not L > 0:
        raise ValueError(f"rewind_to_delete: the estimated smoothness L = {L} is not positive; the sensitivity (R2) is undefined")
    return {"L": L, "G": G, "n": n_retain + len(forget[0]), "m_f": len(forget[0])}


def r2d_descent_many(
    models: Sequence[nn.Module],
    retain: tuple[torch.Tensor, torch.Tensor],
    forgets: Sequence[tuple[torch.Tensor, torch.Tensor]],
    params: RewindToDeleteParams,
    generators: Sequence[torch.Generator],
) -> list[dict]:
    """:func:`r2d_descent` of K runs at once (in place), their full-batch steps and Lipschitz probes
    as stacked weights by ``vmap`` (:class:`~unlearn_audit.training.vmapped.StackedModels`): run k
    takes its K steps from its own θ_{T−K} and draws its probes from ``generators[k]`` in the order
    :func:`r2d_descent` draws them, so each state and model is the loop's up to the batched kernels'
    rounding (tests/unlearning/test_rewind_to_delete_many.py)."""
    from ..training.vmapped import StackedModels

    x, y = retain
    if len(x) == 0:
        raise ValueError("rewind_to_delete: the retain set is empty")
    if not (len(models) == len(forgets) == len(generators)):
        raise ValueError(f"{len(models)} models, {len(forgets)} forget sets and {len(generators)} generators: one each per run")
    stack = StackedModels(models)
    k = len(models)
    largest = None  # each run's largest ‖g‖ of the steps, on the device: no host read a step
    for _ in range(params.K):
        grads = stack.mean_loss_gradient(x, y, params.micro_batch, train=True)
        norms = stack.norm_tensor(grads)
        largest = norms if largest is None else torch.maximum(largest, norms)
        with torch.no_grad():
            for w, g in zip(stack.weights, grads):
                w.sub_(params.lr * g)
    G = [float(v) for v in largest] if largest is not None else [0.0] * k
    # L̂ (docs/calibrations.md §7) in eval mode: run j's probes drawn from its own generator, parameter by parameter
    base = [w.clone() for w in stack.weights]
    g0 = stack.mean_loss_gradient(x, y, params.micro_batch, train=False)
    L = [0.0] * k
    for _ in range(int(params.lipschitz_samples)):
        with torch.no_grad():
            for j, gen in enumerate(generators):
                for w, b, e in zip(stack.weights, base, _noise([b[j] for b in base], params.lipschitz_std, gen)):
                    w[j].copy_(b[j] + e)
        gi = stack.mean_loss_gradient(x, y, params.micro_batch, train=False)
        ratios = [a / s for a, s in zip(stack.norms([a - c for a, c in zip(gi, g0)]), stack.norms([w - b for w, b in zip(stack.weights, base)]))]
        L = [max(a, b) for a, b in zip(L, ratios)]
    with torch.no_grad():
        for w, b in zip(stack.weights, base):
            w.copy_(b)
    for m in stack.write_back():
        m.train()
    return [_descent_state(lj, gj, len(x), forget) for lj, gj, forget in zip(L, G, forgets)]


def r2d_release(model: nn.Module, state: dict, params: RewindToDeleteParams, generator: torch.Generator, monitor: Monitor | None = None) -> nn.Module:
    """θ''_K + N(0, σ² I), σ the exact Gaussian mechanism for the target (ε, δ) and Δ (docs/calibrations.md §6, §2)."""
    mon = monitor if monitor is not None else Monitor()
    L, G, n, m_f = state["L"], state["G"], state["n"], state["m_f"]
    h = r2d_h(params.K, params.lr, L, n, m_f, params.T)
    delta_s = r2d_sensitivity(params.K, params.lr, L, G, n, m_f, params.T)
    if not math.isfinite(delta_s):
        raise ValueError(f"rewind_to_delete: the sensitivity overflows (L = {L}, G = {G}, T = {params.T}, K = {params.K})")
    sigma = gaussian_sigma(params.epsilon, params.delta, delta_s) if delta_s > 0 else 0.0
    plist = [p for p in model.parameters() if p.requires_grad]
    if sigma:
        with torch.no_grad():
            for p, e in zip(plist, _noise(plist, sigma, generator)):
                p.add_(e)
    model.eval()
    mon.record(lipschitz=L, grad_bound=G, h=h, sensitivity=delta_s, sigma=sigma, n=int(n), m_f=int(m_f))
    return model


@register("rewind_to_delete",
          description="K full-batch retain GD steps from the rewound checkpoint, then Gaussian noise (G.2)",
          noise_release=NoiseRelease(r2d_descent, r2d_release, METHOD_SPECS["rewind_to_delete"].release_params, prepare_many=r2d_descent_many))
def rewind_to_delete(
    model: nn.Module,
    retain: tuple[torch.Tensor, torch.Tensor],
    forget: tuple[torch.Tensor, torch.Tensor],
    params: RewindToDeleteParams,
    generator: torch.Generator,
    monitor: Monitor | None = None,
) -> nn.Module:
    """θ_{T−K} → K full-batch GD steps on D_r → θ''_K + N(0, σ² I) (G.2; docs/calibrations.md §6–8).

    ``monitor.record`` receives ``lipschitz`` (L̂), ``grad_bound`` (G), ``h``, ``sensitivity`` (Δ),
    ``sigma``, ``n`` and ``m_f``.  D_f(S) enters only through its size m_f.
    """
    return r2d_release(model, r2d_descent(model, retain, forget, params, generator), params, generator, monitor)
