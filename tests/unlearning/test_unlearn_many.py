"""unlearn_many: K runs' final retain steps as one grouped network or by torch.func.vmap, each model its own
unlearn() result up to the batched kernels' evaluation order (unlearning/common.py, training/batched.py,
training/vmapped.py)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from unlearn_audit.models import build_model, initial_model, model_factories
from unlearn_audit.unlearning import Monitor, get_method, unlearn, unlearn_many
from unlearn_audit.unlearning.common import RetainSteps, groupable, run_grouped

from synthetic_images import quadrant_images

torch.set_num_threads(1)

PARAMS = {"in_channels": 1, "num_classes": 4, "width": 0.125}
K = 3
#: Weights of a grouped run against its loop run after the tests' ≤ 40 steps (float32 kernels in
#: another order; measured ≤ 1.2e-7): a wrong batch or learning rate moves them by > 1e-2.
ATOL = 1e-4

CASES = {
    "retain_finetune": {"epochs": 3, "batch_size": 16, "lr": 0.05, "momentum": 0.9, "grad_clip": 1.0, "weight_decay": 5e-4},
    "forget_ascent": {"epochs": 2, "batch_size": 16, "lr": 0.05, "ascent_epochs": 2, "ascent_lr": 0.02, "ascent_batch_size": 2},
    "ida": {"epochs": 2, "batch_size": 16, "lr": 0.05, "forget_epochs": 1, "q": 1, "lam": 1.0, "interleaved_lr": 0.02, "forget_batch_size": 4},
    "model_clipping": {"epochs": 3, "batch_size": 16, "lr": 0.02, "noisy_batch_size": 16, "noisy_lr": 0.05, "C2": 0.5, "sigma": 0.01,
                       "noisy_steps": 7, "checkpoint_steps": (1, 7)},
}


class Recorder(Monitor):
    def __init__(self) -> None:
        self.steps: list[int] = []
        self.values: dict = {}

    def checkpoint(self, step, model):
        self.steps.append(step)

    def record(self, **values):
        self.values.update(values)


@pytest.fixture(scope="module")
def runs():
    """K base models (different weights), one retain set, K forget sets of one size."""
    models = []
    for k in range(K):
        m = build_model("tinynet", **PARAMS)
        m.load_state_dict(initial_model("tinynet", PARAMS, 10 + k))
        models.append(m)
    forgets = [quadrant_images(8, 20 + k) for k in range(K)]
    return models, quadrant_images(64, 0), forgets


def _max_diff(a, b) -> float:
    sa, sb = a.state_dict(), b.state_dict()
    return max(float((sa[k] - sb[k]).abs().max()) for k in sa)


@pytest.mark.parametrize("mode", ["grouped", "vmap"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_batched_runs_equal_the_loop(runs, name, mode):
    models, retain, forgets = runs
    make_grouped = model_factories("tinynet", PARAMS)[1] if mode == "grouped" else None
    loop_mon, many_mon = [Recorder() for _ in range(K)], [Recorder() for _ in range(K)]
    loop = [unlearn(name, m, retain, f, CASES[name], 100 + k, monitor=mon) for k, (m, f, mon) in enumerate(zip(models, forgets, loop_mon))]
    many = unlearn_many(name, models, retain, forgets, CASES[name], [100 + k for k in range(K)], make_grouped, many_mon, group_mode=mode)
    moved = max(_max_diff(a, m) for a, m in zip(loop, models))
    assert moved > 1e-2  # the unlearning did something, so the comparison below can fail
    assert max(_max_diff(a, b) for a, b in zip(loop, many)) < ATOL
    assert [m.steps for m in many_mon] == [m.steps for m in loop_mon] and [m.values for m in many_mon] == [m.values for m in loop_mon]
    for m in models:  # the inputs are left as they were
        assert not any(p.grad is not None for p in m.parameters())


def test_without_a_grouped_network_it_is_the_loop_bitwise(runs):
    models, retain, forgets = runs
    loop = [unlearn("retain_finetune", m, retain, f, CASES["retain_finetune"], 7 + k) for k, (m, f) in enumerate(zip(models, forgets))]
    many = unlearn_many("retain_finetune", models, retain, forgets, CASES["retain_finetune"], [7 + k for k in range(K)])
    assert all(_max_diff(a, b) == 0.0 for a, b in zip(loop, many))


def test_methods_without_final_steps_and_unequal_shapes_fall_back(runs):
    models, retain, forgets = runs
    assert get_method("hessian").final_steps is None and get_method("retain_finetune").final_steps is not None
    steps = [RetainSteps([np.arange(4)] * 2, np.array([0.1, 0.1])), RetainSteps([np.arange(4), np.arange(3)], np.array([0.1, 0.1]))]
    assert not groupable(steps) and not groupable(steps[:1]) and not groupable([steps[0], None])
    assert groupable([steps[0], RetainSteps([np.arange(4, 8)] * 2, np.array([0.1, 0.1]))])
    with pytest.raises(ValueError, match="all of one shape"):
        run_grouped(models[:2], retain, steps, model_factories("tinynet", PARAMS)[1])
    with pytest.raises(ValueError, match="one forget set, generator"):
        unlearn_many("retain_finetune", models, retain, forgets[:2], {}, [1, 2, 3])


@pytest.mark.parametrize("mode", ["grouped", "vmap"])
def test_a_run_does_not_depend_on_its_group_mates(runs, mode):
    """Padded to the group size, a run alone computes bitwise as it does beside other runs: the
    batched kernels' order depends on the number of models, not on the other models' data."""
    models, retain, forgets = runs
    make_grouped = model_factories("tinynet", PARAMS)[1]
    p = CASES["retain_finetune"]
    kw = {"group_size": K, "group_mode": mode}
    full = unlearn_many("retain_finetune", models, retain, forgets, p, [100, 101, 102], make_grouped, **kw)
    alone = unlearn_many("retain_finetune", models[:1], retain, forgets[:1], p, [100], make_grouped, **kw)
    other_mates = unlearn_many("retain_finetune", [models[0], models[2]], retain, forgets[:1] * 2, p, [100, 7], make_grouped, **kw)
    assert _max_diff(full[0], alone[0]) == 0.0 and _max_diff(full[0], other_mates[0]) == 0.0
    with pytest.raises(ValueError, match="smaller than the 3 runs"):
        unlearn_many("retain_finetune", models, retain, forgets, p, [1, 2, 3], make_grouped, group_size=2)


def test_bad_group_modes_are_refused(runs):
    models, retain, forgets = runs
    with pytest.raises(ValueError, match="group_mode must be one of"):
        unlearn_many("retain_finetune", models, retain, forgets, {}, [1, 2, 3], group_mode="pmap")
    steps = [RetainSteps([np.arange(4)] * 2, np.array([0.1, 0.1]))] * 2
    with pytest.raises(ValueError, match="needs the model's grouped network"):
        run_grouped(models[:2], retain, steps, None)
    with pytest.raises(ValueError, match="mode must be one of"):
        run_grouped(models[:2], retain, steps, None, mode="pmap")


@pytest.mark.filterwarnings("ignore:There is a performance drop")  # the LSTM's per-model fallback inside vmap
def test_vmap_batches_a_model_the_grouped_network_cannot_hold():
    """The CharLSTM (no grouped network): retain fine-tuning of K runs by vmap equals each run alone."""
    params = {"vocab_size": 20, "embed_dim": 4, "hidden_size": 8, "num_layers": 1}
    assert model_factories("charlstm", params)[1] is None
    g = torch.Generator().manual_seed(5)
    retain = (torch.randint(0, 20, (48, 10), generator=g), torch.randint(0, 20, (48, 10), generator=g))
    forgets = [(torch.randint(0, 20, (4, 10), generator=g), torch.randint(0, 20, (4, 10), generator=g)) for _ in range(K)]
    models = []
    for k in range(K):
        m = build_model("charlstm", **params)
        m.load_state_dict(initial_model("charlstm", params, 30 + k))
        models.append(m)
    p = {"epochs": 2, "batch_size": 16, "lr": 0.5, "momentum": 0.9, "grad_clip": 1.0}
    loop = [unlearn("retain_finetune", m, retain, f, p, 40 + k) for k, (m, f) in enumerate(zip(models, forgets))]
    many = unlearn_many("retain_finetune", models, retain, forgets, p, [40 + k for k in range(K)], group_mode="vmap")
    assert min(_max_diff(a, m) for a, m in zip(loop, models)) > 1e-2
    assert max(_max_diff(a, b) for a, b in zip(loop, many)) < ATOL
