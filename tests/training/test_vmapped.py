"""vmapped_sgd_run: K models' SGD steps by torch.func.vmap, each model its own sgd_run up to the batched
kernels' evaluation order, for the TinyNet and for a model the grouped network cannot hold (CharLSTM)."""

from __future__ import annotations

import copy
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml
from torch import nn

from unlearn_audit.models import build_model, initial_model
from unlearn_audit.training.sgd import sgd_run
from unlearn_audit.training.vmapped import GROUP_MODES, vmapped_sgd_run

torch.set_num_threads(1)

K, STEPS, BATCH = 3, 20, 16
#: Weights of a vmapped run against its loop run after 20 steps (float32 kernels in another order,
#: amplified by 20 momentum steps: measured ≤ 2.4e-7 on an Intel Xeon, 2.6e-5 on an AMD EPYC whose
#: oneDNN runs other convolution kernels): a wrong batch, learning rate or clipping moves them by > 1e-2.
ATOL = 1e-3


def _models(name: str, params: dict) -> list[nn.Module]:
    out = []
    for k in range(K):
        m = build_model(name, **params)
        m.load_state_dict(initial_model(name, params, 1 + k))
        out.append(m)
    return out


def _max_diff(a: nn.Module, b: nn.Module) -> float:
    sa, sb = a.state_dict(), b.state_dict()
    return max(float((sa[n] - sb[n]).abs().max()) for n in sa)


CASES = {
    "tinynet": ({"in_channels": 1, "num_classes": 10, "width": 0.125},
                lambda g: (torch.randn(200, 1, 8, 8, generator=g), torch.randint(0, 10, (200,), generator=g))),
    "charlstm": ({"vocab_size": 30, "embed_dim": 4, "hidden_size": 8, "num_layers": 1},
                 lambda g: (torch.randint(0, 30, (200, 12), generator=g), torch.randint(0, 30, (200, 12), generator=g))),
}


@pytest.mark.filterwarnings("ignore:There is a performance drop")  # the LSTM's per-model fallback inside vmap
@pytest.mark.parametrize("clip", [None, 0.5])
@pytest.mark.parametrize("name", sorted(CASES))
def test_vmapped_runs_equal_the_loop(name, clip):
    params, make_data = CASES[name]
    x, y = make_data(torch.Generator().manual_seed(0))
    models = _models(name, params)
    rng = np.random.default_rng(0)
    rows = [np.stack([rng.choice(len(x), BATCH, replace=False) for _ in range(K)]) for _ in range(STEPS)]
    lrs = np.linspace(0.2, 0.02, STEPS)
    settings = {"momentum": 0.9, "weight_decay": 5e-4, "grad_clip": clip}
    loop = [copy.deepcopy(m) for m in models]
    for k, m in enumerate(loop):
        sgd_run(m, x, y, [r[k] for r in rows], lrs, **settings)
    batched = vmapped_sgd_run([copy.deepcopy(m) for m in models], x, y, rows, lrs, **settings)
    assert min(_max_diff(a, m) for a, m in zip(loop, models)) > 1e-2  # every model moved, so the check below can fail
    assert max(_max_diff(a, b) for a, b in zip(loop, batched)) < ATOL


def test_clipping_is_per_model():
    """One model's large gradient is clipped without scaling the others' (a global clip would)."""
    params, make_data = CASES["tinynet"]
    x, y = make_data(torch.Generator().manual_seed(1))
    models = _models("tinynet", params)
    with torch.no_grad():
        for p in models[0].parameters():
            p.mul_(8.0)  # large logits: a large gradient for model 0 only
    rows = [np.stack([np.arange(BATCH)] * K)]
    loop = [copy.deepcopy(m) for m in models]
    for m in loop:
        sgd_run(m, x, y, [np.arange(BATCH)], np.array([0.1]), grad_clip=0.1)
    batched = vmapped_sgd_run([copy.deepcopy(m) for m in models], x, y, rows, np.array([0.1]), grad_clip=0.1)
    assert max(_max_diff(a, b) for a, b in zip(loop, batched)) < ATOL


def test_bad_inputs_are_refused():
    params, make_data = CASES["tinynet"]
    x, y = make_data(torch.Generator().manual_seed(0))
    models = _models("tinynet", params)
    rows = [np.stack([np.arange(4)] * K)]
    with pytest.raises(ValueError, match="1 steps but 2 learning rates"):
        vmapped_sgd_run(models, x, y, rows, np.array([0.1, 0.1]))
    with pytest.raises(ValueError, match="one row of batch indices per model"):
        vmapped_sgd_run(models[:2], x, y, rows, np.array([0.1]))
    bn = [nn.Sequential(nn.Flatten(), nn.Linear(64, 10), nn.BatchNorm1d(10)) for _ in range(K)]
    with pytest.raises(ValueError, match="without buffers"):
        vmapped_sgd_run(bn, x, y, rows, np.array([0.1]))


def test_the_config_schema_names_the_group_modes():
    schema = yaml.safe_load((Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml").read_text())
    assert tuple(schema["$defs"]["design"]["properties"]["unlearn_group_mode"]["enum"]) == GROUP_MODES
