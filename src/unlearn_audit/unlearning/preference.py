"""The unlearning objectives of the language-model literature on question-answer pairs
(docs/configuration.md#language-models): gradient ascent, gradient difference, NPO and SimNPO, one
loop with the forget loss each method names.

A pair's log-likelihood log π(y|x) is the sum of its answer tokens' log-probabilities given the
question (targets ``IGNORE`` elsewhere, :mod:`unlearn_audit.data.qa`).  Each step draws a batch of
D_f(S) (``epochs`` shuffled passes) and, where ``retain_weight`` > 0, a batch of D_r, both from the
run's generator, and takes an AdamW step on forget loss + ``retain_weight`` × the retain set's mean
token loss.  The optimiser state is per run; the reference model of NPO is the model before
unlearning, frozen.
"""

from __future__ import annotations

import copy
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

from ..scores import IGNORE
from ..training.sgd import loss_fn, random_batches

__all__ = ["answer_log_likelihood", "ascent_loss", "npo_loss", "simnpo_loss", "preference_unlearn"]

#: ``forget_loss(model, reference, x, y) -> scalar``: what a method minimises on a forget batch.
ForgetLoss = Callable[[nn.Module, "nn.Module | None", torch.Tensor, torch.Tensor], torch.Tensor]


def answer_log_likelihood(logits: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(Σ_t log p(y_t | x, y_<t) over each sequence's scored targets, the number of them)."""
    scored = y != IGNORE
    logp = -F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1), reduction="none", ignore_index=IGNORE).view(y.shape)
    return (logp * scored).sum(dim=1), scored.sum(dim=1).clamp(min=1)


def ascent_loss(model: nn.Module, reference, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    """Gradient ascent: minus the forget batch's mean token loss."""
    return -loss_fn(model(x), y)


def npo_loss(beta: float) -> ForgetLoss:
    """NPO (Zhang et al. 2024, Eq. 3): (2/β) E log(1 + (π_θ/π_ref)^β) = −(2/β) E log σ(−β log(π_θ/π_ref))."""

    def loss(model: nn.Module, reference: nn.Module | None, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        logp, _ = answer_log_likelihood(model(x), y)
        with torch.no_grad():
            ref_logp, _ = answer_log_likelihood(reference(x), y)
        return -(2.0 / beta) * F.logsigmoid(-beta * (logp - ref_logp)).mean()

    return loss


def simnpo_loss(beta: float, gamma: float) -> ForgetLoss:
    """SimNPO (Fan et al. 2024): −(2/β) E log σ(−(β/|y|) log π_θ(y|x) − γ), no reference model."""

    def loss(model: nn.Module, reference, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        logp, n = answer_log_likelihood(model(x), y)
        return -(2.0 / beta) * F.logsigmoid(-(beta / n) * logp - gamma).mean()

    return loss


def preference_unlearn(model: nn.Module, retain: tuple[torch.Tensor, torch.Tensor], forget: tuple[torch.Tensor, torch.Tensor], p,
                       generator: torch.Generator, forget_loss: ForgetLoss, *, reference: bool = False) -> nn.Module:
    """``p.epochs`` passes over D_f(S) minimising ``forget_loss`` (+ ``p.retain_weight`` × the retain
    loss, where the method has one), AdamW at ``p.lr``; ``reference``: keep a frozen copy of the
    model before unlearning."""
    fx, fy = forget
    if len(fx) == 0:
        return model
    ref = copy.deepcopy(model).eval().requires_grad_(False) if reference else None
    rx, ry = retain
    retain_weight = float(getattr(p, "retain_weight", 0.0))
    forget_batches = random_batches(len(fx), p.batch_size, p.epochs, generator)
    retain_rows = [torch.randint(len(rx), (min(p.batch_size, len(rx)),), generator=generator) for _ in forget_batches] if retain_weight > 0 and len(rx) else None
    opt = torch.optim.AdamW(model.parameters(), lr=p.lr, weight_decay=p.weight_decay)
    model.train()
    for k, rows in enumerate(forget_batches):
        idx = torch.as_tensor(rows)
        loss = forget_loss(model, ref, fx[idx], fy[idx])
        if retain_rows is not None:
            loss = loss + retain_weight * loss_fn(model(rx[retain_rows[k]]), ry[retain_rows[k]])
        opt.zero_grad()
        loss.backward()
        if p.grad_clip is not None:
            nn.utils.clip_grad_norm_(model.parameters(), p.grad_clip)
        opt.step()
    return model
