"""Model clipping: noisy projected retain steps, then retain fine-tuning (App. G.1, Eq. 14; FORMULAS §1).

Koloskova et al. (2025), as audited (G.1.1–G.1.2, FORMULAS §1.1):

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

from typing import Sequence

import torch
from torch import nn

from ..stats.accountants import model_clipping_deltas
from ..torch_utils import global_norm
from ..training.sgd import random_batches, sgd_run
from . import Monitor, register
from .common import RetainSteps, run_final
from .params import ModelClippingParams, model_clipping_plan

__all__ = ["ModelClippingParams", "model_clipping", "model_clipping_plan", "project_"]


@torch.no_grad()
def project_(params: Sequence[torch.Tensor], radius: float) -> float:
    """Π_C in place: x ← x·min(1, C/‖x‖), ‖·‖ over all ``params`` flattened; returns ‖Π_C(x)‖."""
    norm = global_norm(params)
    if norm > radius:
        scale = radius / norm
        for p in params:
            p.mul_(scale)
        norm = global_norm(params)
    return norm


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
    plist = list(model.parameters())
    project_(plist, params.C0)  # x_0 = Π_{C0}(x̂); σ0 = 0, no initial noise

    # Phase 1: T noisy projected steps, one SGD step (momentum 0, weight decay λ) each.
    spe = -(-n // params.noisy_batch_size)
    batches = random_batches(n, params.noisy_batch_size, -(-T // spe), generator)[:T] if T else []
    wanted = set(params.checkpoint_steps)
    max_norm = 0.0
    for t, rows in enumerate(batches, start=1):
        sgd_run(model, x, y, [rows], [params.noisy_lr], weight_decay=params.noisy_weight_decay, show_progress=False, desc="noisy step")
        max_norm = max(max_norm, project_(plist, params.C2))
        if params.sigma:
            with torch.no_grad():
                for p in plist:
                    p.add_(torch.randn(p.shape, generator=generator, dtype=p.dtype).to(p.device), alpha=params.sigma)
        if t in wanted:
            mon.checkpoint(t, model)

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


@register("model_clipping", ModelClippingParams, certified=True, uses_forget=False, final_steps=_clip_then_steps,
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
