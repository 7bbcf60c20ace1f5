"""A training that survives its job (docs/cluster.md, "Failed and preempted jobs").

:class:`TrainingCheckpoint` is the state of an SGD loop after step t: the model's weights and
buffers, the momentum buffers and t.  The schedule (batches and learning rates) is a function of
the configuration alone, so a loop restarted from that state takes the same steps and ends with
the weights of an uninterrupted run, bit for bit.  :func:`~.sgd.sgd_run` saves it at least every
``UNLEARN_AUDIT_CHECKPOINT_MINUTES`` (default 10) minutes of training, so a lost node costs at most
that much, and at the first step after a SIGTERM, after which it raises :class:`Preempted`: a queue
that ends a job (preemption, the time limit) sends SIGTERM first, and the job's retry resumes there.

The SIGTERM handler (:func:`stop_on_sigterm`) defers the signal only while a resumable loop runs;
at any other moment the signal ends the process as it would without the handler.
"""

from __future__ import annotations

import io
import os
import signal
import time
from pathlib import Path
from typing import Sequence

import torch
from torch import nn

from ..atomic import write_bytes_atomic

__all__ = ["CHECKPOINT_MINUTES_ENV", "Preempted", "TrainingCheckpoint", "stop_on_sigterm", "request_stop"]

#: Environment variable: minutes of training between two saves of a resumable loop (default 10).
CHECKPOINT_MINUTES_ENV = "UNLEARN_AUDIT_CHECKPOINT_MINUTES"

_stop_requested = False
_resumable_loops = 0


class Preempted(RuntimeError):
    """The job was asked to stop (SIGTERM) and its training saved its state to resume from."""


def request_stop() -> None:
    """Ask the running resumable loop to save its state and stop at its next step (what SIGTERM does)."""
    global _stop_requested
    _stop_requested = True


def _on_sigterm(signum, frame) -> None:
    if _resumable_loops:
        request_stop()
        return
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # nothing to save: end as without the handler
    os.kill(os.getpid(), signal.SIGTERM)


def stop_on_sigterm() -> None:
    """Install the handler: a SIGTERM during a resumable loop saves its state and stops it."""
    signal.signal(signal.SIGTERM, _on_sigterm)


def _checkpoint_seconds() -> float:
    value = os.environ.get(CHECKPOINT_MINUTES_ENV, "10")
    try:
        minutes = float(value)
    except ValueError:
        raise ValueError(f"{CHECKPOINT_MINUTES_ENV}={value!r}: give the minutes between two saves of a training, e.g. 10") from None
    if minutes <= 0:
        raise ValueError(f"{CHECKPOINT_MINUTES_ENV}={value!r}: the minutes between two saves must be positive")
    return 60.0 * minutes


class TrainingCheckpoint:
    """The saved state of one SGD loop at ``path`` (written atomically; removed by :meth:`remove`)."""

    def __init__(self, path: str | os.PathLike, every_seconds: float | None = None):
        self.path = Path(path)
        self.every_seconds = _checkpoint_seconds() if every_seconds is None else float(every_seconds)
        self._last_save = time.monotonic()

    def restore(self, model: nn.Module, buffers: list, total_steps: int) -> int:
        """Load a saved state into ``model`` and the momentum ``buffers`` (in place); the number of
        steps it had taken, 0 without one."""
        if not self.path.exists():
            return 0
        state = torch.load(self.path, map_location="cpu", weights_only=True)
        if int(state["total_steps"]) != total_steps or len(state["buffers"]) != len(buffers):
            raise ValueError(f"{self.path}: saved for a loop of {int(state['total_steps'])} steps, not this one's {total_steps}; "
                             "delete it to train from the start")
        device = next((p.device for p in model.parameters()), torch.device("cpu"))
        model.load_state_dict(state["model"])
        buffers[:] = [None if b is None else b.to(device) for b in state["buffers"]]
        return int(state["step"])

    def after_step(self, step: int, total_steps: int, model: nn.Module, buffers: Sequence) -> None:
        """Called after each step (``step`` steps taken): save when a stop was asked for (then raise
        :class:`Preempted`) or when ``every_seconds`` have passed since the last save."""
        if _stop_requested:
            self._save(step, total_steps, model, buffers)
            raise Preempted(f"stopped at step {step} of {total_steps} on SIGTERM; the state is saved in {self.path}")
        if step < total_steps and time.monotonic() - self._last_save >= self.every_seconds:
            self._save(step, total_steps, model, buffers)

    def _save(self, step: int, total_steps: int, model: nn.Module, buffers: Sequence) -> None:
        buffer = io.BytesIO()
        torch.save({"step": step, "total_steps": total_steps, "model": {k: v.detach().cpu() for k, v in model.state_dict().items()},
                    "buffers": [None if b is None else b.detach().cpu() for b in buffers]}, buffer)
        write_bytes_atomic(self.path, buffer.getvalue())
        self._last_save = time.monotonic()

    def remove(self) -> None:
        """Delete the saved state (its run is finished)."""
        self.path.unlink(missing_ok=True)

    def __enter__(self) -> "TrainingCheckpoint":
        """The loop runs: a SIGTERM from now on asks it to save and stop."""
        global _resumable_loops, _stop_requested
        _resumable_loops += 1
        _stop_requested = False
        self._last_save = time.monotonic()
        return self

    def __exit__(self, *exc) -> None:
        global _resumable_loops
        _resumable_loops -= 1
