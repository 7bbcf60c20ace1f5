"""The CUDA paths (run by benchmarks/gpu.sh on a GPU machine): grouped networks, unlearning, bf16
autocast and a language model's training and unlearning on the device.  Skipped, with that reason, where no CUDA GPU is visible."""

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


@pytest.mark.parametrize("mode", ["grouped", "vmap"])
def test_batched_unlearning_on_cuda_equals_the_loop(mode):
    """Retain fine-tuning of 3 runs at once on the GPU (a grouped network or vmap) against each run alone."""
    from unlearn_audit.models import model_factories
    from unlearn_audit.unlearning import unlearn_many

    g = torch.Generator().manual_seed(2)
    retain = (torch.randn(96, 3, 32, 32, generator=g).cuda(), torch.randint(0, 100, (96,), generator=g).cuda())
    forgets = [(torch.randn(8, 3, 32, 32, generator=g).cuda(), torch.randint(0, 100, (8,), generator=g).cuda()) for _ in range(3)]
    models = []
    for s in range(3):
        m = build_model("tinynet", **PARAMS)
        m.load_state_dict(initial_model("tinynet", PARAMS, s))
        models.append(m.cuda())
    params = {"epochs": 1, "batch_size": 32, "lr": 0.01, "momentum": 0.9, "grad_clip": 1.0}
    loop = [unlearn("retain_finetune", m, retain, f, params, 10 + k) for k, (m, f) in enumerate(zip(models, forgets))]
    make_grouped = model_factories("tinynet", PARAMS)[1] if mode == "grouped" else None
    many = unlearn_many("retain_finetune", models, retain, forgets, params, [10, 11, 12], make_grouped, group_mode=mode)
    for a, b, base in zip(loop, many, models):
        sa, sb, s0 = a.state_dict(), b.state_dict(), base.state_dict()
        assert max(float((sa[n] - s0[n]).abs().max()) for n in sa) > 1e-4  # it trained
        assert max(float((sa[n] - sb[n]).abs().max()) for n in sa) < 1e-3


def test_charlstm_hessian_runs_on_cuda():
    """Table 1a's method on its model: the Newton step's eval-mode backward and double backward,
    which cuDNN's LSTM refuses, run with cuDNN off for the method's passes."""
    g = torch.Generator().manual_seed(2)
    model = build_model("charlstm", hidden_size=32)
    text = torch.randint(0, 100, (72, 20), generator=g)
    retain, forget = (text[:64], torch.roll(text[:64], -1, 1)), (text[64:], torch.roll(text[64:], -1, 1))
    out = unlearn("hessian", model.cuda(), retain, forget, {"s1": 1, "s2": 5, "scale": 500.0, "batch_size": 16}, generator=3)
    assert next(out.parameters()).device.type == "cuda"
    assert all(torch.isfinite(p).all() for p in out.parameters())
    assert torch.backends.cudnn.enabled  # switched off for the method's passes only


def test_a_causal_lm_trains_unlearns_and_scores_on_cuda_under_bf16():
    """config/tofu.yaml's path on a small Llama: an AdamW base training under bf16 autocast, NPO (its
    reference model on the device) and gradient difference, and answer scores in fp32, all on the GPU."""
    pytest.importorskip("transformers", reason="the llm extra: pip install -e '.[llm]'")
    import numpy as np

    from unlearn_audit.scores import IGNORE
    from unlearn_audit.training import BaseTrainConfig, train_model

    config = {"model_type": "llama", "vocab_size": 128, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
              "num_attention_heads": 4, "num_key_value_heads": 2}
    torch.manual_seed(0)
    model = build_model("causal_lm", config=config).cuda()
    g = torch.Generator().manual_seed(3)
    x = torch.randint(0, 128, (48, 24), generator=g)
    y = torch.roll(x, -1, dims=1)
    y[:, :8] = IGNORE  # the question's targets are not scored
    before = {k: v.clone() for k, v in model.state_dict().items()}
    cfg = BaseTrainConfig.from_dict({"epochs": 2, "batch_size": 16, "lr": 1e-3, "optimizer": "adamw", "grad_clip": 1.0})
    with compute_precision("bf16", "cuda"):
        train_model(model, x[:40].cuda(), y[:40].cuda(), np.arange(40), None, cfg, generator=0, progress=False)
        for method, params in (("npo", {"epochs": 1, "batch_size": 4, "lr": 1e-4}),
                               ("gradient_difference", {"epochs": 1, "batch_size": 4, "lr": 1e-4})):
            out = unlearn(method, model, (x[:40].cuda(), y[:40].cuda()), (x[40:].cuda(), y[40:].cuda()), params, generator=4)
            assert {p.device.type for p in out.parameters()} == {"cuda"} and all(torch.isfinite(p).all() for p in out.parameters())
    assert any(not torch.equal(before[k], v) for k, v in model.state_dict().items())  # it trained
    scores = model_scores(out, x[40:].numpy(), y[40:].numpy(), kind="text")
    assert scores["loss"].shape == (8,) and np.isfinite(scores["loss"]).all() and np.isfinite(scores["logit"]).all()
