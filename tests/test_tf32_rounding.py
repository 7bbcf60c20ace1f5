"""The CPU's emulation of a GPU's TF32 (src/unlearn_audit/tf32_rounding.py): the rounding itself, the
products it reaches in a forward and a backward pass, and the fp32 it leaves alone."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch import nn

from unlearn_audit.scores import model_scores
from unlearn_audit.tf32_rounding import round_to_tf32
from unlearn_audit.torch_utils import compute_precision, full_precision


def _bits(t: torch.Tensor) -> np.ndarray:
    return t.view(torch.int32).numpy().astype(np.int64) & 0xFFFFFFFF


def test_rounding_keeps_ten_mantissa_bits_to_nearest_ties_to_even():
    """The 13 lowest mantissa bits are zero, every value moves by at most half a TF32 ulp (2^-11
    relative), exact ties go to the even neighbour, and special values stay what they are."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(10_000, generator=g) * torch.exp(torch.randn(10_000, generator=g) * 5)
    r = round_to_tf32(x)
    assert np.all(_bits(r) & 0x1FFF == 0)
    assert torch.all((r - x).abs() <= x.abs() * 2.0 ** -11)
    assert not torch.equal(r, x)
    # ties: 1 + 2^-11 lies halfway between 1 and 1 + 2^-10 (odd last bit? no: 1's is even) -> 1;
    # 1 + 3 * 2^-11 lies halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even) -> 1 + 2^-9
    ties = torch.tensor([1 + 2.0 ** -11, 1 + 3 * 2.0 ** -11, -(1 + 3 * 2.0 ** -11)])
    assert round_to_tf32(ties).tolist() == [1.0, 1 + 2.0 ** -9, -(1 + 2.0 ** -9)]
    special = torch.tensor([float("inf"), float("-inf"), 0.0, -0.0, 1.0])
    assert torch.equal(round_to_tf32(special), special)
    assert torch.isnan(round_to_tf32(torch.tensor([float("nan")]))).all()
    # the largest finite fp32 rounds up past TF32's largest finite value
    assert round_to_tf32(torch.tensor([torch.finfo(torch.float32).max])).item() == float("inf")


def test_products_in_the_tf32_region_see_rounded_inputs_forward_and_backward():
    """A linear layer's product and a convolution's, and both their weight gradients, equal fp32
    arithmetic on TF32-rounded inputs, and differ from plain fp32."""
    g = torch.Generator().manual_seed(1)
    x = torch.randn(16, 3, 8, 8, generator=g)
    conv = nn.Conv2d(3, 4, 3)
    lin = nn.Linear(4 * 36, 5)

    def run(model_conv, model_lin, inp):
        out = model_lin(model_conv(inp).flatten(1))
        out.square().sum().backward()
        return out.detach(), model_conv.weight.grad.clone(), model_lin.weight.grad.clone()

    def clone():
        c, l = nn.Conv2d(3, 4, 3), nn.Linear(4 * 36, 5)
        c.load_state_dict(conv.state_dict()), l.load_state_dict(lin.state_dict())
        return c, l

    with compute_precision("tf32", "cpu"):
        tf32 = run(*clone(), x)
    fp32 = run(*clone(), x)
    for a, b in zip(tf32, fp32):
        assert not torch.equal(a, b)
        assert (a - b).norm() < 1e-2 * b.norm()  # TF32's 2^-11 relative rounding, summed over a product
    # the forward by hand: fp32 products of rounded factors
    c, l = clone()
    with torch.no_grad():
        h = torch.nn.functional.conv2d(round_to_tf32(x), round_to_tf32(c.weight), c.bias).flatten(1)
        expected = torch.addmm(l.bias, round_to_tf32(h), round_to_tf32(l.weight).t())
    assert torch.equal(tf32[0], expected)


def test_fp32_region_and_scores_are_untouched():
    """fp32 on the CPU is plain arithmetic; scores computed inside a tf32 region are fp32 scores."""
    g = torch.Generator().manual_seed(2)
    a, b = torch.randn(32, 32, generator=g), torch.randn(32, 32, generator=g)
    with compute_precision("fp32", "cpu"):
        assert torch.equal(a @ b, torch.mm(a, b))
    with compute_precision("tf32", "cpu"):
        rounded = a @ b
        with full_precision("cpu"):
            plain = a @ b
    assert torch.equal(plain, torch.mm(a, b)) and not torch.equal(rounded, plain)
    model = nn.Sequential(nn.Flatten(), nn.Linear(64, 10))
    x, y = torch.randn(20, 1, 8, 8, generator=g), torch.randint(0, 10, (20,), generator=g)
    outside = model_scores(model, x, y)
    with compute_precision("tf32", "cpu"):
        inside = model_scores(model, x, y)
    for k in outside:
        np.testing.assert_array_equal(np.asarray(inside[k]), np.asarray(outside[k]))


@pytest.mark.parametrize("dtype", [torch.float64, torch.bfloat16])
def test_other_dtypes_pass_through(dtype):
    """Only fp32 inputs are rounded: a float64 or bf16 product is computed as it is."""
    g = torch.Generator().manual_seed(3)
    a, b = torch.randn(8, 8, generator=g).to(dtype), torch.randn(8, 8, generator=g).to(dtype)
    with compute_precision("tf32", "cpu"):
        inside = a @ b
    assert torch.equal(inside, a @ b)
