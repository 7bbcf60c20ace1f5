"""AdamW for base training (``train.optimizer: adamw``, docs/configuration.md#language-models): the
update is torch.optim.AdamW's, bit for bit; a base training takes it on the schedule's learning
rates; a stopped training resumes to the uninterrupted weights, moments and step counts included."""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from synthetic_images import quadrant_images
from unlearn_audit.models import build_model
from unlearn_audit.training import BaseTrainConfig, shuffle_orders, train_model, training_batches
from unlearn_audit.training.adamw import AdamW
from unlearn_audit.training.resume import Preempted, TrainingCheckpoint, request_stop

CFG = BaseTrainConfig.from_dict({"epochs": 3, "batch_size": 16, "lr": 0.01, "weight_decay": 0.01, "optimizer": "adamw",
                             "schedule": "onecycle", "anneal": "linear", "pct_start": 0.2})


def _fresh():
    torch.manual_seed(0)
    return build_model("tinynet", in_channels=1, num_classes=4, width=0.25)


def _data():
    x, y = quadrant_images(160, 3, flip_fraction=0.2)
    return x, y, shuffle_orders(len(x), CFG.epochs, 1)


def _same(a, b) -> bool:
    return all(torch.equal(a.state_dict()[k], b.state_dict()[k]) for k in a.state_dict())


def test_the_update_is_torch_adamw_bit_for_bit_and_skips_a_parameter_without_a_gradient():
    torch.manual_seed(1)
    ours, ref = torch.nn.Linear(6, 3), torch.nn.Linear(6, 3)
    ref.load_state_dict(ours.state_dict())
    opt = AdamW(list(ours.parameters()), weight_decay=0.05)
    ref_opt = torch.optim.AdamW(ref.parameters(), lr=1.0, weight_decay=0.05, foreach=False)
    for step in range(12):
        x = torch.randn(8, 6)
        for model in (ours, ref):
            model.zero_grad(set_to_none=True)
            (model(x) ** 2).mean().backward()
            if step % 4 == 3:  # the bias sits this step out: no gradient, no update, no count
                model.bias.grad = None
        lr = 1e-2 * (1 + step % 3)
        ref_opt.param_groups[0]["lr"] = lr
        opt.step(lr)
        ref_opt.step()
        assert torch.equal(ours.weight, ref.weight) and torch.equal(ours.bias, ref.bias), step
    assert int(opt.buffers[5]) == 9 and int(opt.buffers[2]) == 12  # the bias's count, the weight's


def test_a_base_training_with_adamw_takes_torch_adamw_steps_on_the_schedule():
    x, y, orders = _data()
    trained = train_model(_fresh(), x.numpy(), y.numpy(), np.arange(len(x)), orders, CFG)
    ref = _fresh()
    batches = training_batches(orders, np.arange(len(x)), CFG)
    opt = torch.optim.AdamW(ref.parameters(), lr=CFG.lr, weight_decay=CFG.weight_decay, foreach=False)
    ref.train()
    for rows, lr in zip(batches, CFG.lrs(len(batches))):
        opt.param_groups[0]["lr"] = float(lr)
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(ref(x[torch.as_tensor(rows)]), y[torch.as_tensor(rows)]).backward()
        opt.step()
    assert _same(trained, ref)
    sgd = train_model(_fresh(), x.numpy(), y.numpy(), np.arange(len(x)), orders, BaseTrainConfig.from_dict({**CFG.to_dict(), "optimizer": "sgd"}))
    assert not _same(trained, sgd) and not _same(trained, _fresh())


def test_a_stopped_adamw_training_resumes_to_the_uninterrupted_weights(tmp_path, monkeypatch):
    x, y, orders = _data()
    run = lambda checkpoint=None: train_model(_fresh(), x.numpy(), y.numpy(), np.arange(len(x)), orders, CFG, checkpoint=checkpoint)  # noqa: E731
    reference = run()
    real_step, taken = AdamW.step, []

    def counted(self, lr):
        real_step(self, lr)
        taken.append(lr)
        if len(taken) == 17:
            request_stop()

    monkeypatch.setattr(AdamW, "step", counted)
    state = tmp_path / "state.pt"
    with pytest.raises(Preempted, match="step 17 of 30"):
        run(TrainingCheckpoint(state))
    monkeypatch.setattr(AdamW, "step", real_step)
    assert _same(run(TrainingCheckpoint(state)), reference)


@pytest.mark.parametrize("values, message", [
    ({"optimizer": "adam"}, r"optimizer must be one of \('sgd', 'adamw'\)"),
    ({"optimizer": "adamw", "nesterov": True}, "nesterov is SGD's"),
])
def test_an_optimizer_the_training_lacks_is_refused(values, message):
    with pytest.raises(ValueError, match=message):
        BaseTrainConfig.from_dict({"epochs": 1, **values})
