"""The CUDA paths (run by benchmarks/gpu.sh on a GPU machine): grouped networks, unlearning and
bf16 autocast on the device.  Skipped, with that reason, where no CUDA GPU is visible."""

import pytest
import torch

from unlearn_audit.models import GroupedTinyNet, build_model, initial_model
from unlearn_audit.scores import model_scores
from unlearn_audit.torch_utils import compute_precision, full_precision
from unlearn_audit.unlearning import unlearn

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

PARAMS = {"in_channels": 3, "num_classes": 100, "width": 1.0}


def test_grouped_network_on_cuda_equals_separate_models():
    states = [initial_model("tinynet", PARAMS, s) for s in range(4)]
    grouped = GroupedTinyNet(4, **PARAMS).load_state_dicts(states).cuda()
    x = torch.randn(4, 16, 3, 32, 32, generator=torch.Generator().manual_seed(0)).cuda()
    out = grouped(x)
    for k, state in enumerate(states):
        model = build_model("tinynet", **PARAMS)
        model.load_state_dict(state)
        torch.testing.assert_close(out[k], model.cuda()(x[k]), rtol=1e-3, atol=1e-4)


def test_unlearning_and_scores_run_on_cuda():
    g = torch.Generator().manual_seed(1)
    model = build_model("tinynet", **PARAMS)
    model.load_state_dict(initial_model("tinynet", PARAMS, 0))
    retain = (torch.randn(64, 3, 32, 32, generator=g), torch.randint(0, 100, (64,), generator=g))
    forget = (torch.randn(8, 3, 32, 32, generator=g), torch.randint(0, 100, (8,), generator=g))
    out = unlearn("hessian", model.cuda(), retain, forget, {"s1": 1, "s2": 5, "scale": 500.0, "batch_size": 16}, generator=3)
    assert next(out.parameters()).device.type == "cuda"
    scores = model_scores(out, forget[0].numpy(), forget[1].numpy())
    assert scores["loss"].shape == (8,) and torch.isfinite(torch.as_tensor(scores["loss"])).all()


def test_bf16_autocast_training_step_is_finite_and_close_to_fp32():
    model = build_model("tinynet", **PARAMS).cuda()
    x = torch.randn(32, 3, 32, 32, device="cuda")
    y = torch.randint(0, 100, (32,), device="cuda")
    with compute_precision("bf16", "cuda"):
        low = model(x).float()
        assert model.conv1(x).dtype == torch.bfloat16
        with full_precision("cuda"):
            assert model.conv1(x).dtype == torch.float32
    high = model(x)
    assert torch.isfinite(low).all()
    assert float((low - high).abs().max()) < 0.1 * float(high.abs().max()) + 1e-3
    torch.nn.functional.cross_entropy(low, y).backward()
    assert all(torch.isfinite(p.grad).all() for p in model.parameters())
