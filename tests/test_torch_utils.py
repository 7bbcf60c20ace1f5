"""The design's ``precision`` and ``compile`` switches
(docs/workflow.md#many-models-per-job-threads-and-precision): bf16 autocast of the training
and unlearning steps, scores always in fp32, and both recorded in each run's metrics."""

import numpy as np
import pytest
import torch

from unlearn_audit.models import build_model
from unlearn_audit.scores import model_scores
from unlearn_audit.torch_utils import PRECISIONS, compile_model, compute_precision, full_precision
from unlearn_audit.training import TrainConfig, shuffle_orders, train_model

MODEL = {"in_channels": 1, "num_classes": 10, "width": 0.25}


def _data(n=96, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=(n, 1, 8, 8)).astype(np.float32), rng.integers(0, 10, size=n).astype(np.int64)


def _trained(precision):
    x, y = _data()
    torch.manual_seed(0)
    model = build_model("tinynet", **MODEL)
    cfg = TrainConfig.from_dict({"epochs": 2, "batch_size": 32, "lr": 0.05, "momentum": 0.9, "schedule": "constant"})
    with compute_precision(precision, "cpu"):
        train_model(model, x, y, np.arange(len(x)), shuffle_orders(len(x), cfg.epochs, 1), cfg)
    return model


def test_bf16_region_runs_convolutions_in_bf16_and_fp32_outside():
    model = build_model("tinynet", **MODEL)
    x = torch.randn(4, 1, 8, 8)
    with compute_precision("bf16", "cpu"):
        assert model.conv1(x).dtype == torch.bfloat16
        with full_precision("cpu"):
            assert model.conv1(x).dtype == torch.float32
    with compute_precision("fp32", "cpu"):
        assert model.conv1(x).dtype == torch.float32


def test_bf16_training_changes_the_weights_but_keeps_them_fp32():
    fp32, bf16 = _trained("fp32"), _trained("bf16")
    for (name, a), b in zip(fp32.state_dict().items(), bf16.state_dict().values()):
        assert b.dtype == a.dtype == torch.float32, name
    diff = max((a - b).abs().max().item() for a, b in zip(fp32.state_dict().values(), bf16.state_dict().values()))
    assert diff > 1e-4  # the autocast region really changed the arithmetic


def test_a_bf16_region_sees_every_weight_update():
    """A forward after an in-place update, inside the same region, uses the updated weights (autocast's
    cast cache would keep the first bf16 copy of each weight until the region ends)."""
    model = build_model("tinynet", **MODEL)
    x = torch.randn(8, 1, 8, 8)
    with compute_precision("bf16", "cpu"):
        model(x)
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(-1.5)
        inside = model(x).float()
    with compute_precision("bf16", "cpu"):
        fresh = model(x).float()
    assert torch.equal(inside, fresh)


def test_bf16_training_learns_as_fp32_does():
    """A whole training in one bf16 region (as the workflow's steps run) fits a learnable task as fp32 does."""
    from synthetic_images import quadrant_images

    x, y = quadrant_images(256, 3)
    accuracy = {}
    for precision in PRECISIONS:
        torch.manual_seed(0)
        model = build_model("tinynet", in_channels=1, num_classes=4, width=0.25)
        cfg = TrainConfig.from_dict({"epochs": 8, "batch_size": 32, "lr": 0.02, "momentum": 0.9, "schedule": "constant"})
        with compute_precision(precision, "cpu"):
            train_model(model, x.numpy(), y.numpy(), np.arange(len(x)), shuffle_orders(len(x), cfg.epochs, 1), cfg)
        model.eval()
        with torch.no_grad():
            accuracy[precision] = float((model(x).argmax(1) == y).float().mean())
    assert accuracy["fp32"] > 0.9, accuracy  # the task is learnt, so the bf16 check can fail
    assert accuracy["bf16"] > accuracy["fp32"] - 0.05, accuracy


def test_scores_inside_a_bf16_region_equal_the_fp32_scores():
    model = _trained("fp32")
    x, y = _data(40, seed=5)
    outside = model_scores(model, x, y)
    with compute_precision("bf16", "cpu"):
        inside = model_scores(model, x, y)
    for key in ("logit", "loss", "correct"):
        np.testing.assert_array_equal(inside[key], outside[key])


def test_unknown_precision_is_refused_with_the_choices():
    with pytest.raises(ValueError, match="fp32.*bf16.*fp16"):
        compute_precision("fp16", "cpu")
    assert PRECISIONS == ("fp32", "tf32", "bf16")


@pytest.mark.parametrize("precision, flag", [("fp32", "ieee"), ("tf32", "tf32")])
def test_gpu_fp32_regions_set_and_restore_the_tf32_switches(precision, flag):
    """On a GPU, fp32 turns TF32 off for matrix products and cuDNN convolutions (PyTorch's default
    lets convolutions use it) and tf32 turns it on; both restore the switches after the region.  The
    switches are process settings, so this runs without a GPU."""
    matmul, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
    before = (matmul.fp32_precision, cudnn.fp32_precision)
    with compute_precision(precision, "cuda"):
        assert (matmul.fp32_precision, cudnn.fp32_precision) == (flag, flag)
    assert (matmul.fp32_precision, cudnn.fp32_precision) == before
    with pytest.raises(RuntimeError, match="inside"):
        with compute_precision(precision, "cuda"):
            raise RuntimeError("inside")
    assert (matmul.fp32_precision, cudnn.fp32_precision) == before
    with compute_precision(precision, "cpu"):  # the CPU has no TF32: the switches stay
        assert (matmul.fp32_precision, cudnn.fp32_precision) == before


def test_compile_off_returns_the_module_untouched():
    model = build_model("tinynet", **MODEL)
    keys = list(model.state_dict())
    assert compile_model(model, False) is model
    assert list(model.state_dict()) == keys


def test_deterministic_algorithms_drops_the_nan_fill_and_restores_both_switches():
    from unlearn_audit.torch_utils import deterministic_algorithms

    before = (torch.are_deterministic_algorithms_enabled(), torch.utils.deterministic.fill_uninitialized_memory)
    with deterministic_algorithms():
        assert torch.are_deterministic_algorithms_enabled()
        assert not torch.utils.deterministic.fill_uninitialized_memory
    assert (torch.are_deterministic_algorithms_enabled(), torch.utils.deterministic.fill_uninitialized_memory) == before


def test_training_without_the_nan_fill_gives_bitwise_the_weights_with_it():
    """The fill only detects kernels that read memory they never wrote: none of a training step does."""
    import functools

    from unlearn_audit.torch_utils import deterministic_algorithms
    from unlearn_audit.training import sgd as sgd_module

    plain = _trained("fp32").state_dict()
    saved = sgd_module.deterministic_algorithms
    sgd_module.deterministic_algorithms = functools.partial(deterministic_algorithms, fill_uninitialized_memory=True)
    try:
        filled = _trained("fp32").state_dict()
    finally:
        sgd_module.deterministic_algorithms = saved
    assert all(torch.equal(plain[k], filled[k]) for k in plain)


def test_a_designs_deterministic_switch_reaches_the_loops_and_is_restored():
    import torch

    from unlearn_audit.torch_utils import deterministic_algorithms, deterministic_default

    before = torch.are_deterministic_algorithms_enabled()
    with deterministic_algorithms():
        assert torch.are_deterministic_algorithms_enabled()  # the default: on
    with deterministic_default(False):
        with deterministic_algorithms():
            assert not torch.are_deterministic_algorithms_enabled()
        with deterministic_algorithms(True):  # an explicit argument wins
            assert torch.are_deterministic_algorithms_enabled()
    with deterministic_algorithms():
        assert torch.are_deterministic_algorithms_enabled()  # restored after the block
    assert torch.are_deterministic_algorithms_enabled() == before


def test_a_global_norm_read_on_the_host_is_the_correctly_rounded_root():
    """global_norm reports the correctly rounded square root of the float64 sum of squares (the
    numbers model clipping and rewind-to-delete record), although PyTorch's CPU square root
    differs from it in the last bit for about 1 % of values; global_norm_tensor, the device path,
    may."""
    import math

    from unlearn_audit.torch_utils import global_norm, global_norm_tensor, sum_of_squares

    g = torch.Generator().manual_seed(0)
    device_differs = 0
    for _ in range(500):
        tensors = [torch.randn(int(torch.randint(1, 200, (1,), generator=g)), generator=g) for _ in range(4)]
        host = math.sqrt(sum(float(t.double().pow(2).sum()) for t in tensors))
        assert float(sum_of_squares(tensors)) == sum(float(t.double().pow(2).sum()) for t in tensors)
        assert global_norm(tensors) == host
        device_differs += float(global_norm_tensor(tensors)) != host
    assert device_differs < 50  # the device root is within an ulp, and rarely off
