"""TensorFloat-32 on a CPU: what a GPU's ``precision: tf32`` computes, emulated so that its effect on
an audit can be measured before a GPU is paid for (docs/workflow.md, "Choosing a precision").

A GPU's TF32 tensor cores take the fp32 inputs of a matrix product or convolution with their mantissa
cut to TF32's 10 explicit bits (8 exponent bits, as fp32) and accumulate in fp32.  Inside
:func:`tf32_region`, every fp32 input of the products PyTorch dispatches for the forward and the
backward pass (``mm``, ``addmm``'s two factors, ``bmm``, ``baddbmm``'s two factors, ``convolution``'s
input and weight, ``convolution_backward``'s gradient, input and weight) is rounded to the nearest
TF32 value (ties to even) before the fp32 kernel runs; biases, reductions, element-wise arithmetic,
weights and optimiser state stay fp32, as on the GPU.  Fused kernels that hold their own products
(the CPU's LSTM) are left in fp32.  :func:`paused` lifts the rounding for a scoring pass (scores are
always fp32).  Torch only; works under fake and meta tensors.
"""

from __future__ import annotations

import contextlib
from typing import Iterator

import torch
from torch.utils._python_dispatch import TorchDispatchMode

__all__ = ["TF32_MANTISSA_BITS", "round_to_tf32", "tf32_region", "paused"]

#: TF32's explicit mantissa bits (fp32 has 23: the 13 lowest are rounded away).
TF32_MANTISSA_BITS = 10
_DROPPED = 23 - TF32_MANTISSA_BITS

_aten = torch.ops.aten
#: The products whose inputs a GPU's TF32 rounds: op -> positions of the rounded arguments.
ROUNDED_INPUTS = {
    _aten.mm.default: (0, 1),
    _aten.addmm.default: (1, 2),
    _aten.bmm.default: (0, 1),
    _aten.baddbmm.default: (1, 2),
    _aten.convolution.default: (0, 1),
    _aten.convolution_backward.default: (0, 1, 2),
}

_PAUSED = [0]


def round_to_tf32(t: torch.Tensor) -> torch.Tensor:
    """``t`` (fp32) rounded to the nearest TF32 value, ties to even; infinities and NaN unchanged,
    values beyond TF32's largest finite one round to infinity (as fp32's exponent range is TF32's)."""
    bits = t.contiguous().view(torch.int32)
    odd = (bits >> _DROPPED) & 1
    rounded = ((bits + ((1 << (_DROPPED - 1)) - 1) + odd) & ~((1 << _DROPPED) - 1)).view(torch.float32)
    return torch.where(torch.isfinite(t), rounded, t)


class _TF32Rounding(TorchDispatchMode):
    """Rounds the fp32 inputs of :data:`ROUNDED_INPUTS` to TF32 (module docstring)."""

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        positions = ROUNDED_INPUTS.get(func)
        if positions is not None and not _PAUSED[0]:
            args = tuple(round_to_tf32(a) if i in positions and isinstance(a, torch.Tensor) and a.dtype == torch.float32 else a
                         for i, a in enumerate(args))
        return func(*args, **(kwargs or {}))


@contextlib.contextmanager
def tf32_region() -> Iterator[None]:
    """The region where fp32 matrix products and convolutions see TF32-rounded inputs (module docstring)."""
    with _TF32Rounding():
        yield


@contextlib.contextmanager
def paused() -> Iterator[None]:
    """Inside a :func:`tf32_region`, products in plain fp32 again (a scoring pass); elsewhere nothing."""
    _PAUSED[0] += 1
    try:
        yield
    finally:
        _PAUSED[0] -= 1
