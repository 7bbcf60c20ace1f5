"""Models of App. D: TinyNetCIFAR100 (D.1) and CharLSTM (D.2)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch
from torch import nn

from unlearn_audit.models import CharLSTM, GroupedTinyNet, TinyNetCIFAR100, build_model, count_parameters, initial_model

torch.set_num_threads(1)


def test_tinynet_full_width_layers_match_appendix_d1():
    m = TinyNetCIFAR100()
    shapes = {k: tuple(v.shape) for k, v in m.state_dict().items()}
    assert shapes["conv1.weight"] == (64, 3, 3, 3)
    assert shapes["conv2.weight"] == (64, 64, 3, 3)
    assert shapes["conv3.weight"] == (128, 64, 3, 3)
    assert shapes["conv4.weight"] == (128, 128, 3, 3)
    assert shapes["fc.weight"] == (100, 128)
    # 4 convs with bias + 4 GroupNorms (affine) + linear
    assert count_parameters(m) == 273_828
    gns = [mod for mod in m.modules() if isinstance(mod, nn.GroupNorm)]
    assert len(gns) == 4 and all(gn.num_groups == 8 for gn in gns)
    assert not any(isinstance(mod, (nn.BatchNorm2d, nn.Dropout)) for mod in m.modules())
    assert m(torch.zeros(2, 3, 32, 32)).shape == (2, 100)


def test_tinynet_in_channels_classes_width():
    m = TinyNetCIFAR100(in_channels=1, num_classes=10, width=0.25)
    assert m.filters == (16, 32)
    assert m.conv1.weight.shape == (16, 1, 3, 3) and m.conv4.weight.shape == (32, 32, 3, 3)
    assert m(torch.zeros(5, 1, 8, 8)).shape == (5, 10)
    with pytest.raises(ValueError, match="multiple of 8"):
        TinyNetCIFAR100(width=0.1)


def test_tinynet_kaiming_init():
    torch.manual_seed(0)
    m = TinyNetCIFAR100()
    for conv in (m.conv2, m.conv3, m.conv4):
        fan_out = conv.weight.shape[0] * 9
        std = float(conv.weight.detach().std())
        assert std == pytest.approx(math.sqrt(2.0 / fan_out), rel=0.05)
        assert float(conv.bias.detach().abs().max()) == 0.0
    assert float(m.fc.weight.detach().std()) == pytest.approx(math.sqrt(2.0 / 100), rel=0.05)
    assert torch.equal(m.gn1.weight, torch.ones(64)) and torch.equal(m.gn1.bias, torch.zeros(64))


def test_charlstm_shapes_and_sizes():
    m = CharLSTM()
    assert m.embed.embedding_dim == 8 and m.embed.num_embeddings == 100
    assert m.lstm.hidden_size == 256 and m.lstm.num_layers == 2 and m.lstm.batch_first
    assert count_parameters(m) == 800 + (4 * 256 * (8 + 256) + 8 * 256) + (4 * 256 * 512 + 8 * 256) + (256 * 100 + 100)
    x = torch.randint(0, 100, (3, 7))
    assert m(x).shape == (3, 7, 100)
    small = CharLSTM(hidden_size=16)
    assert small(x).shape == (3, 7, 100) and small.lstm.hidden_size == 16


def test_build_model_names_and_errors():
    assert isinstance(build_model("TinyNetCIFAR100", num_classes=10, in_channels=1, width=0.25), TinyNetCIFAR100)
    assert isinstance(build_model("tinynet"), TinyNetCIFAR100)
    assert isinstance(build_model("charlstm", hidden_size=32), CharLSTM)
    with pytest.raises(ValueError, match="unknown model"):
        build_model("resnet")
    with pytest.raises(ValueError, match="hidden"):
        build_model("tinynet", hidden=3)


def test_initial_model_is_a_function_of_the_seed():
    params = {"in_channels": 1, "num_classes": 10, "width": 0.25}
    before = torch.random.get_rng_state()
    a = initial_model("tinynet", params, 7)
    assert torch.equal(before, torch.random.get_rng_state())  # global RNG untouched
    b = initial_model("tinynet", params, 7)
    c = initial_model("tinynet", params, 8)
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not torch.equal(a["conv1.weight"], c["conv1.weight"])
    ss = np.random.SeedSequence(1, spawn_key=(3, 5))
    d1, d2 = initial_model("tinynet", params, ss), initial_model("tinynet", params, np.random.SeedSequence(1, spawn_key=(3, 5)))
    assert all(torch.equal(d1[k], d2[k]) for k in d1)
    model = build_model("tinynet", **params)
    model.load_state_dict(a)


def test_grouped_tinynet_equals_separate_models():
    params = {"in_channels": 1, "num_classes": 10, "width": 0.25}
    states = [initial_model("tinynet", params, s) for s in range(3)]
    g = GroupedTinyNet(3, **params).load_state_dicts(states)
    x = torch.randn(3, 6, 1, 8, 8)
    out = g(x)
    assert out.shape == (3, 6, 10)
    for k, st in enumerate(states):
        m = build_model("tinynet", **params)
        m.load_state_dict(st)
        torch.testing.assert_close(out[k], m(x[k]), rtol=1e-5, atol=1e-6)
    back = g.state_dicts()
    assert all(torch.equal(back[k][n], states[k][n]) for k in range(3) for n in states[k])



# ----------------------------------------------------------------------------- causal_lm (transformers)
GPT2 = {"model_type": "gpt2", "vocab_size": 100, "n_positions": 32, "n_embd": 16, "n_layer": 1, "n_head": 2,
        "bos_token_id": 2, "eos_token_id": 3, "pad_token_id": 0}


def test_causal_lm_from_a_config_is_drawn_from_the_seed_and_gives_token_logits(tmp_path):
    pytest.importorskip("transformers", reason="the llm extra: pip install -e '.[llm]'")
    from unlearn_audit.models import build_model, initial_model

    a, b = initial_model("causal_lm", {"config": GPT2}, 7), initial_model("causal_lm", {"config": GPT2}, 7)
    assert all(torch.equal(a[k], b[k]) for k in a) and not all(torch.equal(a[k], v) for k, v in initial_model("causal_lm", {"config": GPT2}, 8).items())
    model = build_model("causal_lm", config=GPT2)
    model.load_state_dict(a)
    assert model(torch.randint(0, 100, (2, 10))).shape == (2, 10, 100)
    model.lm.save_pretrained(tmp_path / "lm")
    loaded = build_model("causal_lm", path=str(tmp_path / "lm"))
    x = torch.randint(0, 100, (2, 10))
    assert torch.allclose(loaded.eval()(x), model.eval()(x))
    model.train()  # no dropout: a training step is a function of the data alone, as the runs' repeatability needs
    assert torch.equal(model(x), model(x))
    with pytest.raises(ValueError, match="exactly one of config, path and hub"):
        build_model("causal_lm", config=GPT2, path=str(tmp_path))
    with pytest.raises(ValueError, match="model_type"):
        build_model("causal_lm", config={"vocab_size": 100})


def test_charlstm_trains_under_the_cpus_bf16_autocast_with_its_lstm_in_fp32():
    """A Shakespeare design at precision bf16 on the CPU: oneDNN has no bf16 LSTM primitive (the
    layers raise under autocast), so they run in fp32 and the read-out in bf16; without autocast the
    model is unchanged."""
    torch.manual_seed(0)
    m = CharLSTM(hidden_size=16)
    x = torch.randint(0, 100, (4, 12))
    plain = m(x)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        low = m(x)
        low.float().sum().backward()
    assert low.dtype == torch.bfloat16 and plain.dtype == torch.float32
    assert all(p.grad is not None and torch.isfinite(p.grad).all() for p in m.parameters())
    assert float((low.float() - plain).abs().max()) < 0.05 * float(plain.abs().max()) + 0.05
    h, _ = m.lstm(m.embed(x))
    torch.testing.assert_close(m(x), m.out(h))  # fp32: the model as before
