"""Model clipping: noisy projected retain steps, then retain fine-tuning (App. G.1, Eq. 14; docs/calibrations.md §3–5).

Koloskova et al. (2025), as audited (G.1.1–G.1.2, docs/calibrations.md §3):

    x_0     = Π_{C0}(x̂)                                     (σ0 = 0: no initial noise)
    x_{t+1} = Π_{C2}(x_t − γ (g_t + λ x_t)) + ξ_{t+1},      ξ_{t+1} ~ N(0, σ² I),  t = 0..T−1

with Π_C(x) = x·min(1, C/‖x‖) over **all** parameters flattened, g_t the mean cross-entropy
gradient of a retain minibatch (``noisy_batch_size``, reshuffled every epoch from the run's
generator), γ = ``noisy_lr`` (constant) and λ = ``noisy_weight_decay`` (0 in the audit).  The noise
is added *after* the projection, so the iterate before noise lies in the C2 ball.  T comes from the
accountant of Koloskova Thm 4.2 (:func:`~unlearn_audit.stats.accountants.model_clipping_noisy_steps`,
δ_0 = 1) or is fixed (``noisy_steps``, the uncertified variant of G.1.3).  Phase 2 is plain SGD
retain fine-tuning (no noise, no projection) for the rest of the budget of
``epochs · ceil(n_retain / batch_size)`` steps, with the :class:`FinetuneParams` schedule spread
over those remaining steps.  D_f(S) is not used.
"""

from __future__ import annotations

import math
from typing import Sequence

import torch
from torch import nn

from ..stats.accountants import model_clipping_deltas
from ..torch_utils import deterministic_algorithms, global_norm_tensor, sum_of_squares
from ..training.sgd import MomentumSGD, loss_fn, random_batches, resident_schedule
from .registry import Monitor, register
from .common import RetainSteps, run_final
from .params import ModelClippingParams, model_clipping_plan

__all__ = ["ModelClippingParams", "model_clipping", "model_clipping_plan", "project_"]


@torch.no_grad()
def project_(params: Sequence[torch.Tensor], radius: float) -> torch.Tensor:
    """Π_C in place: x ← x·min(1, C/‖x‖), ‖·‖ over all ``params`` flattened (float64); returns
    ‖Π_C(x)‖², a float64 0-d tensor on the parameters' device.  No host read: the scale is a device
    tensor (1 where ‖x‖ ≤ C, so the parameters are unchanged bit for bit), for a GPU never to wait on it."""
    norm = global_norm_tensor(params)
    scale = (radius / norm).clamp(max=1.0)
    torch._foreach_mul_(params, [scale.to(p.dtype) for p in params])
    return sum_of_squares(params)


@torch.no_grad()
def flatten_parameters_(params: Sequence[torch.Tensor]) -> torch.Tensor | None:
    """One buffer holding every parameter, each parameter made a view of its slice (in place), so that
    Π_C and ξ are one operation each on a device; None where the parameters differ in dtype or device."""
    if not params or len({(q.dtype, q.device) for q in params}) != 1:
        return None
    flat = torch.cat([q.detach().reshape(-1) for q in params])
    offset = 0
    for q in params:
        q.data = flat[offset:offset + q.numel()].view_as(q)
        offset += q.numel()
    return flat


@torch.no_grad()
def project_flat_(flat: torch.Tensor, radius: float) -> torch.Tensor:
    """:func:`project_` on :func:`flatten_parameters_`'s buffer: ‖x‖ in float64 over the buffer, one
    scaling; returns ‖Π_C(x)‖² (float64, on the device).  Its sums run in another order than
    :func:`project_`'s per-tensor ones, so the last bits may differ."""
    norm = torch.linalg.vector_norm(flat, dtype=torch.float64)
    flat.mul_((radius / norm).clamp(max=1.0).to(flat.dtype))
    return torch.linalg.vector_norm(flat, dtype=torch.float64).square()


def _noise_source(generator: torch.Generator, device: torch.device) -> torch.Generator:
    """Where the noisy steps draw ξ: the run's own generator on the CPU (the draws of every earlier
    run), or one device generator per run seeded from it, so that no step draws on the host and
    copies (docs/workflow.md, "Model clipping on a GPU": a GPU run's noise is another draw)."""
    if device.type == "cpu":
        return generator
    seed = int(torch.randint(0, 2**63 - 1, (1,), generator=generator))
    if device.type == "meta":  # shapes only (the tests' runs at the paper's shapes): no generator of its own there
        return torch.Generator().manual_seed(seed)
    return torch.Generator(device=device).manual_seed(seed)


@torch.no_grad()
def _add_noise_(tensors: Sequence[torch.Tensor], sigma: float, noise: torch.Generator, on_host: bool) -> None:
    """ξ ~ N(0, σ² I) added to each tensor in turn, drawn from ``noise`` (``on_host``: the run's own
    CPU generator, whose draws take no device argument, as every earlier run drew them)."""
    for t in tensors:
        where = {} if on_host else {"device": t.device}
        t.add_(torch.randn(t.shape, generator=noise, dtype=t.dtype, **where), alpha=sigma)


def _noisy_phase(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batches: Sequence, params: ModelClippingParams,
                 generator: torch.Generator, wanted: set[int], mon: Monitor, flat: bool | None = None) -> float:
    """Phase 1 (Eq. 14): one SGD step (momentum 0, weight decay λ) per batch, Π_{C2}, + ξ; returns the
    largest ‖Π_{C2}(·)‖ over the steps.  One optimiser and one device-resident schedule for the phase,
    norms and noise on the device: no host read or copy per step, only at the checkpoint steps
    (scored) and once at the end.  Off the CPU (``flat``, default: the data's device is not the CPU)
    the parameters are views of one buffer (:func:`flatten_parameters_`): Π_{C2} and ξ are a few
    operations a step, not a few per parameter tensor; ξ is then one draw of the buffer's length.
    On the CPU each tensor's ξ is drawn from the run's generator in turn, as every earlier run drew it."""
    plist = list(model.parameters())
    trainable = [p for p in plist if p.requires_grad]
    buffer = flatten_parameters_(plist) if (x.device.type != "cpu" if flat is None else flat) else None
    opt = MomentumSGD(trainable, weight_decay=params.noisy_weight_decay)
    schedule = resident_schedule(batches, x.device)
    noise = _noise_source(generator, x.device) if params.sigma else None
    max_squared = torch.zeros((), dtype=torch.float64, device=x.device)
    model.train()
    with deterministic_algorithms():
        for t, idx in enumerate(schedule, start=1):
            opt.zero_grad()
            loss_fn(model(x.index_select(0, idx)), y.index_select(0, idx)).backward()
            opt.step(params.noisy_lr)
            if buffer is not None:
                max_squared = torch.maximum(max_squared, project_flat_(buffer, params.C2))
            else:
                max_squared = torch.maximum(max_squared, project_(plist, params.C2))
            if noise is not None:
                _add_noise_([buffer] if buffer is not None else plist, params.sigma, noise, on_host=noise is generator)
            if t in wanted:
                mon.checkpoint(t, model)
                model.train()
    return math.sqrt(float(max_squared))  # the correctly rounded root, as global_norm reports it


def _clip_then_steps(
    model: nn.Module,
    retain: tuple[torch.Tensor, torch.Tensor],
    forget: tuple[torch.Tensor, torch.Tensor],
    params: ModelClippingParams,
    generator: torch.Generator,
    monitor: Monitor | None = None,
) -> RetainSteps | None:
    """Π_{C0} and Phase 1's T noisy projected steps (in place, checkpoints and record to ``monitor``),
    then Phase 2's fine-tuning steps drawn from the same generator (None when T fills the budget)."""
    mon = monitor if monitor is not None else Monitor()
    x, y = retain
    n = len(x)
    if n == 0:
        raise ValueError("model clipping: the retain set is empty")
    T, total = model_clipping_plan(params, n)
    project_(list(model.parameters()), params.C0)  # x_0 = Π_{C0}(x̂); σ0 = 0, no initial noise

    # Phase 1: T noisy projected steps, one SGD step (momentum 0, weight decay λ) each.
    spe = -(-n // params.noisy_batch_size)
    batches = random_batches(n, params.noisy_batch_size, -(-T // spe), generator)[:T] if T else []
    max_norm = _noisy_phase(model, x, y, batches, params, generator, set(params.checkpoint_steps), mon) if batches else 0.0

    # Phase 2: plain retain fine-tuning over the remaining steps (the last `remaining` batches of whole epochs).
    remaining = total - T
    steps = None
    if remaining:
        cfg = params.finetune_config()
        epochs = -(-remaining // cfg.steps_per_epoch(n))
        ft = random_batches(n, cfg.batch_size, epochs, generator)
        steps = RetainSteps(ft[len(ft) - remaining :], cfg.lrs(remaining), cfg.momentum, cfg.weight_decay, cfg.nesterov,
                            cfg.grad_clip, "model clipping fine-tuning")

    values = {"noisy_steps": T, "total_steps": total, "finetune_steps": remaining, "max_pre_noise_norm": max_norm,
              "certified": bool(params.certified)}
    if params.noisy_steps == "all" and params.sigma > 0:  # the target the accountant could not reach in the budget
        values["accountant_steps"] = params.accountant_steps(max(100 * total, 10**6))
    if params.certified:
        values["delta_T"] = float(model_clipping_deltas(params.epsilon, params.C2, params.sigma, T,
                                                        compat_table6_truncation=params.compat_table6_truncation)[-1])
    mon.record(**values)
    return steps


@register("model_clipping", final_steps=_clip_then_steps,
          description="noisy projected retain steps (Koloskova et al.), then retain fine-tuning (G.1)")
def model_clipping(
    model: nn.Module,
    retain: tuple[torch.Tensor, torch.Tensor],
    forget: tuple[torch.Tensor, torch.Tensor],
    params: ModelClippingParams,
    generator: torch.Generator,
    monitor: Monitor | None = None,
) -> nn.Module:
    """Π_{C0}, T noisy projected steps (Eq. 14), then fine-tuning for the rest of the budget (G.1).

    Raises ``ValueError`` naming the numbers when T exceeds the budget or a checkpoint step lies
    beyond T (:func:`model_clipping_plan`).  ``monitor.checkpoint(t, model)`` is called after noisy
    step t for t in ``checkpoint_steps`` (the live model: score it synchronously); at the end of
    Phase 1 ``monitor.record`` receives ``noisy_steps``, ``total_steps``, ``finetune_steps``,
    ``max_pre_noise_norm`` (max over the noisy steps of ‖Π_{C2}(·)‖), ``certified`` and, if
    certified, ``delta_T`` (the accountant's δ after T steps).
    """
    return run_final(model, retain, _clip_then_steps(model, retain, forget, params, generator, monitor))
