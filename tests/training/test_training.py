"""Base training from a fixed x0 and a fixed order π (Section 3, App. G.1.2, G.3)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from unlearn_audit.models import build_model, initial_model, model_factories
from unlearn_audit.training import (
    MomentumSGD,
    TrainConfig,
    epoch_batches,
    epoch_rows,
    loss_fn,
    lr_schedule,
    random_batches,
    sgd_run,
    shuffle_orders,
    train_many,
    train_model,
    train_models_grouped,
)

torch.set_num_threads(1)

PARAMS = {"in_channels": 1, "num_classes": 4, "width": 0.125}  # 8/16 filters: fast


def _data(n: int = 160, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """A learnable 4-class problem on 8x8 images: the class sets the mean of one quadrant."""
    g = torch.Generator().manual_seed(seed)
    y = torch.randint(0, 4, (n,), generator=g)
    x = 0.5 * torch.randn(n, 1, 8, 8, generator=g)
    for c in range(4):
        r, s = divmod(c, 2)
        x[y == c, :, 4 * r : 4 * r + 4, 4 * s : 4 * s + 4] += 1.5
    return x, y


def _model(seed: int = 0):
    m = build_model("tinynet", **PARAMS)
    m.load_state_dict(initial_model("tinynet", PARAMS, seed))
    return m


def _same(a: dict, b: dict) -> bool:
    return all(torch.equal(a[k], b[k]) for k in a)


def _maxdiff(a: dict, b: dict) -> float:
    return max(float((a[k] - b[k]).abs().max()) for k in a)


@pytest.mark.parametrize("anneal", ["cos", "linear"])
def test_onecycle_matches_torch(anneal):
    n = 37
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=0.1)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=n, anneal_strategy=anneal, cycle_momentum=False)
    ref = []
    for _ in range(n):
        ref.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    np.testing.assert_allclose(lr_schedule("onecycle", 0.1, n, anneal=anneal), ref, rtol=1e-12, atol=1e-15)


def test_cosine_and_constant_match_torch():
    n = 23
    p = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([p], lr=0.1)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=n, eta_min=0.001)
    ref = []
    for _ in range(n):
        ref.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    np.testing.assert_allclose(lr_schedule("cosine", 0.1, n, min_lr=0.001), ref, rtol=1e-10)
    assert np.all(lr_schedule("constant", 0.05, 4) == 0.05)


def test_train_config_validation():
    assert TrainConfig.from_dict({"epochs": 3, "lr": 0.1}).epochs == 3
    with pytest.raises(ValueError, match="max_lr"):
        TrainConfig.from_dict({"max_lr": 0.1})
    with pytest.raises(ValueError, match="schedule"):
        TrainConfig(schedule="step")
    with pytest.raises(ValueError, match="batch_size"):
        TrainConfig(batch_size=0)


def test_shuffle_orders_are_seeded_permutations_of_the_universe():
    o = shuffle_orders(50, 3, 11)
    assert o.shape == (3, 50) and o.dtype == np.int64
    assert all(np.array_equal(np.sort(row), np.arange(50)) for row in o)
    assert np.array_equal(o, shuffle_orders(50, 3, 11))
    assert not np.array_equal(o, shuffle_orders(50, 3, 12))
    assert not np.array_equal(o[0], o[1])
    assert np.array_equal(shuffle_orders(20, 2, np.random.SeedSequence(5)), shuffle_orders(20, 2, np.random.SeedSequence(5)))


def test_filtered_order_adding_an_example_changes_only_where_it_appears():
    order = shuffle_orders(30, 1, 3)[0]
    without = np.r_[0:20, 25:28]
    extra = 23
    with_ = np.r_[without, extra]  # extra is the last row of the larger set
    seq_without = without[epoch_rows(order, without)]
    seq_with = with_[epoch_rows(order, with_)]
    assert len(seq_with) == len(seq_without) + 1
    pos = int(np.flatnonzero(seq_with == extra)[0])
    assert pos == int(np.flatnonzero(order[np.isin(order, with_)] == extra)[0])
    assert np.array_equal(np.delete(seq_with, pos), seq_without)
    # the universe order restricted to the set, whatever the row order of the arrays
    shuffled = without[::-1]
    assert np.array_equal(shuffled[epoch_rows(order, shuffled)], seq_without)
    batches = epoch_batches(order, without, 8)
    assert [len(b) for b in batches] == [8, 8, 7]
    with pytest.raises(ValueError, match="duplicates"):
        epoch_rows(order, np.array([1, 1, 2]))


def test_training_is_deterministic_and_depends_only_on_the_set():
    x, y = _data(120)
    ids = np.arange(100, 220)  # universe indices of the rows
    orders = shuffle_orders(300, 2, 1)
    cfg = TrainConfig(epochs=2, batch_size=16, lr=0.05)
    a = train_model(_model(), x, y, ids, orders, cfg, progress=False).state_dict()
    b = train_model(_model(), x, y, ids, orders, cfg, progress=False).state_dict()
    assert _same(a, b)
    perm = torch.randperm(120, generator=torch.Generator().manual_seed(0))
    c = train_model(_model(), x[perm], y[perm], ids[perm.numpy()], orders, cfg, progress=False).state_dict()
    assert _same(a, c)  # rows given in another order: same training set, bitwise-same model
    d = train_model(_model(), x, y, ids, shuffle_orders(300, 2, 2), cfg, progress=False).state_dict()
    assert not _same(a, d)  # another π


def test_training_reduces_the_loss():
    x, y = _data(200)
    ids = np.arange(200)
    m = _model()
    with torch.no_grad():
        before = float(loss_fn(m(x), y))
    train_model(m, x, y, ids, shuffle_orders(200, 8, 0), TrainConfig(epochs=8, batch_size=32, lr=0.05), progress=False)
    with torch.no_grad():
        after = float(loss_fn(m(x), y))
    assert after < 0.5 * before


def test_train_without_orders_uses_the_generator_and_clipping_runs():
    x, y = _data(64)
    cfg = TrainConfig(epochs=1, batch_size=16, schedule="constant", grad_clip=0.5)
    a = train_model(_model(), x, y, np.arange(64), None, cfg, generator=3, progress=False).state_dict()
    b = train_model(_model(), x, y, np.arange(64), None, cfg, generator=3, progress=False).state_dict()
    assert _same(a, b)


def test_sequence_loss_is_per_character():
    logits = torch.randn(3, 5, 7)
    y = torch.randint(0, 7, (3, 5))
    flat = torch.nn.functional.cross_entropy(logits.reshape(-1, 7), y.reshape(-1))
    torch.testing.assert_close(loss_fn(logits, y), flat)
    assert loss_fn(logits, y, reduction="none").shape == (3,)
    m = build_model("charlstm", vocab_size=7, hidden_size=8)
    xs = torch.randint(0, 7, (12, 5))
    cfg = TrainConfig(epochs=1, batch_size=4, schedule="constant", lr=0.1, grad_clip=1.0)
    train_model(m, xs, torch.roll(xs, -1, 1), np.arange(12), shuffle_orders(12, 1, 0), cfg, progress=False)


def test_grouped_training_matches_the_loop_and_ignores_group_mates():
    x, y = _data(100)
    x0 = initial_model("tinynet", PARAMS, 0)
    orders = shuffle_orders(100, 1, 4)
    cfg = TrainConfig(epochs=1, batch_size=16, lr=0.05, grad_clip=1.0)
    A, B, C = np.r_[0:80, 80:90], np.r_[0:80, 90:100], np.r_[0:80, 85:95]
    one, grouped = model_factories("tinynet", PARAMS)
    ab = train_models_grouped(grouped, x0, x, y, [A, B], orders, cfg, progress=False)
    cb = train_models_grouped(grouped, x0, x, y, [C, A], orders, cfg, progress=False)
    assert _same(ab[0], cb[1])  # model A does not depend on the other training set in its group
    padded = train_models_grouped(grouped, x0, x, y, [A], orders, cfg, group_size=2, progress=False)
    assert len(padded) == 1 and _same(padded[0], ab[0])
    loop = train_many(one, x0, x, y, [A, B], orders, cfg, make_grouped=grouped, progress=False)
    for g, lp in zip(ab, loop):
        assert _maxdiff(g, lp) < 1e-4
    via = train_many(one, x0, x, y, [A, B, C], orders, cfg, make_grouped=grouped, grouped=True, group_size=2, progress=False)
    assert _same(via[0], ab[0]) and _same(via[1], ab[1])
    with pytest.raises(ValueError, match="equal size"):
        train_models_grouped(grouped, x0, x, y, [A, np.r_[0:50]], orders, cfg)
    with pytest.raises(ValueError, match="grouped-network factory"):
        train_many(model_factories("charlstm", {})[0], x0, x, y, [A, B], orders, cfg, make_grouped=None, grouped=True)


def _torch_optim_run(model, x, y, batches, lrs, *, momentum, weight_decay, nesterov, ascent):
    """The reference: the same loop with ``torch.optim.SGD``."""
    opt = torch.optim.SGD(model.parameters(), lr=float(lrs[0]), momentum=momentum, weight_decay=weight_decay, nesterov=nesterov)
    model.train()
    for t, rows in enumerate(batches):
        for group in opt.param_groups:
            group["lr"] = float(lrs[t])
        opt.zero_grad(set_to_none=True)
        idx = torch.from_numpy(np.asarray(rows, dtype=np.int64))
        loss = loss_fn(model(x.index_select(0, idx)), y.index_select(0, idx))
        (-loss if ascent else loss).backward()
        opt.step()
    return model


@pytest.mark.parametrize(
    "momentum, weight_decay, nesterov, ascent",
    [(0.0, 0.0, False, False), (0.9, 0.0, False, False), (0.9, 5e-4, False, False), (0.9, 5e-4, True, False), (0.0, 1e-2, False, True)],
)
def test_momentum_sgd_gives_torch_optim_sgd_weights_bit_for_bit(momentum, weight_decay, nesterov, ascent):
    x, y = _data()
    batches = random_batches(len(x), 32, 3, torch.Generator().manual_seed(1))
    lrs = np.linspace(0.05, 0.005, len(batches))
    kw = dict(momentum=momentum, weight_decay=weight_decay, nesterov=nesterov, ascent=ascent)
    ours = sgd_run(_model(), x, y, batches, lrs, show_progress=False, **kw).state_dict()
    ref = _torch_optim_run(_model(), x, y, batches, lrs, **kw).state_dict()
    assert _same(ours, ref), _maxdiff(ours, ref)
    assert _maxdiff(ours, _model().state_dict()) > 1e-3  # it trained


def test_momentum_sgd_skips_parameters_without_gradients_and_checks_its_settings():
    a, b = torch.ones(3, requires_grad=True), torch.ones(2, requires_grad=True)
    opt = MomentumSGD([a, b], momentum=0.9)
    a.grad = torch.full((3,), 2.0)
    opt.step(0.5)
    assert torch.equal(a.detach(), torch.zeros(3)) and torch.equal(b.detach(), torch.ones(2))
    a.grad = torch.full((3,), 2.0)
    opt.step(0.5)  # buf = 0.9 * 2 + 2 = 3.8
    assert torch.allclose(a.detach(), torch.full((3,), -1.9))
    opt.zero_grad()
    assert a.grad is None
    with pytest.raises(ValueError, match="nesterov needs momentum"):
        MomentumSGD([a], nesterov=True)
    with pytest.raises(ValueError, match="non-negative"):
        MomentumSGD([a], momentum=-0.1)


def test_sgd_run_with_clipping_is_torch_optim_with_clip_grad_norm_bit_for_bit():
    """The resident index schedule and the device-side clip coefficient (no host sync a step) change no
    bit: ragged batches, momentum and a clip that binds on some steps and not on others."""
    from unlearn_audit.training.sgd import resident_schedule, sgd_run

    x, y = _data(120)
    rng = np.random.default_rng(5)
    batches = [rng.choice(120, size=24 if t % 4 else 11, replace=False) for t in range(40)]
    lrs = np.full(40, 0.2)
    ours = sgd_run(_model(), x, y, batches, lrs, momentum=0.9, grad_clip=0.3, show_progress=False)
    ref = _model()
    opt = torch.optim.SGD(ref.parameters(), lr=0.2, momentum=0.9)
    bound = 0
    for rows in batches:
        opt.zero_grad()
        idx = torch.from_numpy(rows.astype(np.int64))
        loss_fn(ref(x[idx]), y[idx]).backward()
        bound += float(torch.nn.utils.clip_grad_norm_(ref.parameters(), 0.3)) > 0.3
        opt.step()
    assert 0 < bound < len(batches)  # the clip bound on some steps only
    assert _same(ours.state_dict(), ref.state_dict())
    schedule = resident_schedule(batches, x.device)
    assert [s.tolist() for s in schedule] == [b.tolist() for b in batches]
    assert all(s.untyped_storage().data_ptr() == schedule[0].untyped_storage().data_ptr() for s in schedule)
