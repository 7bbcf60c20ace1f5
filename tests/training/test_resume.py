"""A training resumed from its saved state ends with the weights of an uninterrupted one, bit for bit
(unlearn_audit.training.resume; docs/cluster.md, "Failed and preempted jobs")."""

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch

from synthetic_images import quadrant_images
from unlearn_audit.models import build_model
from unlearn_audit.training import TrainConfig, shuffle_orders, train_model
from unlearn_audit.training import sgd as sgd_module
from unlearn_audit.training.resume import CHECKPOINT_MINUTES_ENV, Preempted, TrainingCheckpoint, request_stop

SUPPORT = Path(__file__).resolve().parents[1] / "support"
CFG = TrainConfig.from_dict({"epochs": 3, "batch_size": 16, "lr": 0.05, "momentum": 0.9, "weight_decay": 5e-4, "schedule": "onecycle"})


def _fresh():
    torch.manual_seed(0)
    return build_model("tinynet", in_channels=1, num_classes=4, width=0.25)


def _train(model, checkpoint=None):
    x, y = quadrant_images(160, 3, flip_fraction=0.2)
    return train_model(model, x.numpy(), y.numpy(), np.arange(len(x)), shuffle_orders(len(x), CFG.epochs, 1), CFG, checkpoint=checkpoint)


def _same(a, b) -> bool:
    return all(torch.equal(a.state_dict()[k], b.state_dict()[k]) for k in a.state_dict())


@pytest.mark.parametrize("stop_after", [1, 17, 29])
def test_a_stopped_training_resumes_to_the_uninterrupted_weights(tmp_path, monkeypatch, stop_after):
    """Stopped (as SIGTERM stops it) after ``stop_after`` of its 30 steps, in the first epoch, mid-way and at
    the last step but one; a fresh process's model resumed from the state ends bitwise where the
    uninterrupted training ends, momentum buffers included."""
    reference = _train(_fresh())
    real_step, taken = sgd_module.MomentumSGD.step, []

    def counted(self, lr):
        real_step(self, lr)
        taken.append(lr)
        if len(taken) == stop_after:
            request_stop()

    monkeypatch.setattr(sgd_module.MomentumSGD, "step", counted)
    state = tmp_path / "state.pt"
    with pytest.raises(Preempted, match=f"step {stop_after} of 30"):
        _train(_fresh(), TrainingCheckpoint(state))
    assert torch.load(state, weights_only=True)["step"] == stop_after
    monkeypatch.setattr(sgd_module.MomentumSGD, "step", real_step)
    resumed = _train(_fresh(), TrainingCheckpoint(state))
    assert _same(resumed, reference)
    assert not _same(_fresh(), reference)  # the training moved the weights, so equality could fail


def test_a_lost_job_resumes_from_its_last_periodic_save(tmp_path, monkeypatch):
    """With saves every step (every_seconds 0) a job that dies without warning at step 12 resumes from
    step 11 and still ends bitwise at the uninterrupted weights; the finished loop leaves its state
    for the caller to remove."""
    reference = _train(_fresh())
    real_step, taken = sgd_module.MomentumSGD.step, []

    def dying(self, lr):
        taken.append(lr)
        if len(taken) == 12:
            raise KeyboardInterrupt("node lost")
        real_step(self, lr)

    monkeypatch.setattr(sgd_module.MomentumSGD, "step", dying)
    state = TrainingCheckpoint(tmp_path / "state.pt", every_seconds=0)
    with pytest.raises(KeyboardInterrupt):
        _train(_fresh(), state)
    assert torch.load(state.path, weights_only=True)["step"] == 11
    monkeypatch.setattr(sgd_module.MomentumSGD, "step", real_step)
    assert _same(_train(_fresh(), TrainingCheckpoint(state.path, every_seconds=0)), reference)
    state.remove()
    assert not state.path.exists()


def test_a_state_of_another_loop_is_refused(tmp_path):
    state = TrainingCheckpoint(tmp_path / "state.pt", every_seconds=0)
    _train(_fresh(), state)
    longer = TrainConfig.from_dict({**CFG.to_dict(), "epochs": 4})
    x, y = quadrant_images(160, 3)
    with pytest.raises(ValueError, match="saved for a loop of 30 steps, not this one's 40; delete it"):
        train_model(_fresh(), x.numpy(), y.numpy(), np.arange(len(x)), shuffle_orders(len(x), 4, 1), longer, checkpoint=state)


def test_the_save_interval_is_read_from_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(CHECKPOINT_MINUTES_ENV, "0.5")
    assert TrainingCheckpoint(tmp_path / "s.pt").every_seconds == 30
    for bad in ("ten", "0"):
        monkeypatch.setenv(CHECKPOINT_MINUTES_ENV, bad)
        with pytest.raises(ValueError, match=CHECKPOINT_MINUTES_ENV):
            TrainingCheckpoint(tmp_path / "s.pt")


def _start(state: Path, out: Path, epochs: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(SUPPORT), OMP_NUM_THREADS="1")
    return subprocess.Popen([sys.executable, str(SUPPORT / "resumable_training.py"), str(state), str(out), str(epochs)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def test_a_real_sigterm_mid_training_saves_and_the_next_process_ends_bitwise_at_the_uninterrupted_weights(tmp_path):
    """The test sends SIGTERM to a training process 1 s into its loop (as SLURM does before ending a job):
    it saves its state at the next step and exits with an error naming it; a second process resumes
    from there; its weights equal those of a third process that was never interrupted."""
    epochs = 60
    stopped = _start(tmp_path / "state.pt", tmp_path / "resumed.pt", epochs)
    assert stopped.stdout.readline().strip() == "training"
    time.sleep(1.0)
    stopped.send_signal(signal.SIGTERM)
    _, err = stopped.communicate(timeout=300)
    assert stopped.returncode != 0 and "Preempted: stopped at step" in err, err[-2000:]
    step = torch.load(tmp_path / "state.pt", weights_only=True)["step"]
    assert 0 < step < epochs * 32, step  # stopped mid-run (512 images in batches of 16: 32 steps an epoch)
    for state, out in ((tmp_path / "state.pt", tmp_path / "resumed.pt"), (tmp_path / "none.pt", tmp_path / "whole.pt")):
        proc = _start(state, out, epochs)
        _, err = proc.communicate(timeout=600)
        assert proc.returncode == 0, err[-2000:]
    resumed, whole = (torch.load(tmp_path / f"{name}.pt", weights_only=True) for name in ("resumed", "whole"))
    assert all(torch.equal(resumed[k], whole[k]) for k in whole)


def test_a_sigterm_outside_a_training_ends_the_process_as_without_the_handler(tmp_path):
    code = ("import os, signal, time\nfrom unlearn_audit.training.resume import stop_on_sigterm\nstop_on_sigterm()\n"
            "print('ready', flush=True)\ntime.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "ready"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=30) == -signal.SIGTERM
