"""Teachers of the distillation-based unlearning methods (``scrub``, ``bad_teacher``): a frozen copy of
the trained model, a randomly initialised copy of its architecture, and the KL of a student's
temperature-softened outputs to a teacher's (Hinton et al. 2015)."""

from __future__ import annotations

import copy

import torch
import torch.nn.functional as F
from torch import nn

from ..torch_utils import model_device

__all__ = ["frozen_copy", "random_copy", "teacher_kl"]


def frozen_copy(model: nn.Module) -> nn.Module:
    """A copy of ``model`` in eval mode without gradients: the teacher that stays as trained."""
    return copy.deepcopy(model).eval().requires_grad_(False)


def _under(name: str, prefix: str) -> bool:
    return prefix == "" or name == prefix or name.startswith(prefix + ".")


def random_copy(model: nn.Module, generator: torch.Generator) -> nn.Module:
    """A frozen copy of ``model``'s architecture with fresh weights: every outermost submodule that
    has ``reset_parameters`` (the model itself, where it has one) re-initialises itself, on the CPU,
    under a forked torch RNG seeded from ``generator`` (the global random state is left as it was, and
    the weights do not depend on the device).  A parameter that no such module covers raises
    ``ValueError``: it would keep its trained value."""
    seed = int(torch.randint(0, 2**62, (1,), generator=generator))
    out = copy.deepcopy(model)
    device = model_device(out)
    out.to("cpu")
    reset: list[str] = []
    with torch.random.fork_rng(devices=[]):
        torch.random.default_generator.manual_seed(seed)
        for name, module in out.named_modules():
            if not any(_under(name, p) for p in reset) and callable(getattr(module, "reset_parameters", None)):
                module.reset_parameters()
                reset.append(name)
    left = [name for name, _ in out.named_parameters() if not any(_under(name.rpartition(".")[0], p) for p in reset)]
    if left:
        raise ValueError(f"a random copy of {type(model).__name__} needs every parameter re-initialised by a module's reset_parameters(); "
                         f"none covers {left[:5]}")
    return out.to(device).eval().requires_grad_(False)


def teacher_kl(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float) -> torch.Tensor:
    """KL(p_teacher ‖ p_student) of the softened softmaxes p = softmax(logits / T), summed over the
    classes and averaged over the rows (and a sequence's positions)."""
    log_s = F.log_softmax(student_logits / temperature, dim=-1)
    log_t = F.log_softmax(teacher_logits / temperature, dim=-1)
    return F.kl_div(log_s, log_t, log_target=True, reduction="none").sum(-1).mean()
