"""Torch helpers shared by models, scores, training and unlearning (one copy each).

* :func:`as_tensor`, :func:`check_xy` — (x, y) data as tensors, checked once;
* :func:`model_device` — where a model's parameters live;
* :func:`as_torch_generator` — a ``torch.Generator`` from any seed the library accepts
  (:mod:`unlearn_audit.seeds` is the only seed source);
* :func:`deterministic_algorithms` — deterministic kernels for the duration of a run;
* :func:`compute_precision`, :func:`full_precision`, :func:`compile_model` — the design's
  ``precision`` (fp32, tf32, or bf16 autocast) and ``compile`` switches
  (docs/workflow.md#many-models-per-job-threads-and-precision);
* :func:`progress_enabled`, :func:`progress` — progress bars on a TTY, and progress lines in job
  logs (:class:`ProgressLog`).
"""

from __future__ import annotations

import contextlib
import io
import math
import os
import sys
import time
from typing import Any, Callable, Iterator, Mapping, TextIO

import numpy as np
import torch
from torch import nn

from .io import write_bytes_atomic
from .seeds import torch_seed_of
from .tf32_rounding import paused as tf32_paused
from .tf32_rounding import tf32_region

__all__ = [
    "global_norm",
    "global_norm_tensor",
    "sum_of_squares",
    "clip_grad_norms_per_model_",
    "as_tensor",
    "check_xy",
    "model_device",
    "as_torch_generator",
    "deterministic_algorithms",
    "deterministic_default",
    "PRECISIONS",
    "compute_precision",
    "full_precision",
    "compile_model",
    "progress_enabled",
    "progress",
    "ProgressLog",
    "save_state_dict",
]


#: Whether :func:`deterministic_algorithms` without an argument switches deterministic kernels on
#: (the job's design decides, through :func:`deterministic_default`).
_DETERMINISTIC_DEFAULT = [True]


@contextlib.contextmanager
def deterministic_default(enabled: bool) -> Iterator[None]:
    """Within the block, the training and unlearning loops run with deterministic kernels or not (a
    design's ``deterministic`` switch; on CPU the kernels give the same bits either way, on CUDA
    cuDNN may pick faster, nondeterministic ones)."""
    prev = _DETERMINISTIC_DEFAULT[0]
    _DETERMINISTIC_DEFAULT[0] = bool(enabled)
    try:
        yield
    finally:
        _DETERMINISTIC_DEFAULT[0] = prev


@contextlib.contextmanager
def deterministic_algorithms(enabled: bool | None = None, *, fill_uninitialized_memory: bool = False) -> Iterator[None]:
    """Temporarily set ``torch.use_deterministic_algorithms`` (warn-only), restoring the previous state;
    ``enabled`` None: as :func:`deterministic_default` says (on, unless a design switched it off).

    PyTorch's companion switch ``torch.utils.deterministic.fill_uninitialized_memory`` (on by
    default in PyTorch) is off here unless asked for: it fills every newly allocated tensor with
    NaN so that a kernel reading memory it never wrote shows up, a check that costs ~90 fills per
    training step of the digits model and changes no result (the weights are bitwise equal with
    and without it, ``benchmarks/step_cost.py``)."""
    enabled = _DETERMINISTIC_DEFAULT[0] if enabled is None else bool(enabled)
    prev, prev_warn = torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()
    prev_fill = torch.utils.deterministic.fill_uninitialized_memory
    torch.use_deterministic_algorithms(enabled, warn_only=True)
    torch.utils.deterministic.fill_uninitialized_memory = bool(fill_uninitialized_memory)
    try:
        yield
    finally:
        torch.use_deterministic_algorithms(prev, warn_only=prev_warn)
        torch.utils.deterministic.fill_uninitialized_memory = prev_fill


#: The design's ``precision`` values: fp32 (IEEE fp32 also on a GPU), tf32 (a GPU's TensorFloat-32
#: matrix products and convolutions; emulated elsewhere), or bf16 autocast of the training and unlearning steps.
PRECISIONS = ("fp32", "tf32", "bf16")


@contextlib.contextmanager
def _gpu_fp32_precision(value: str) -> Iterator[None]:
    """Set the GPU's fp32 matrix products and cuDNN convolutions to ``value`` ("ieee" or "tf32") for the
    region, and restore them after.  PyTorch's defaults let cuDNN convolutions run in TF32, so without
    this a GPU's "fp32" would not be fp32."""
    matmul, cudnn = torch.backends.cuda.matmul, torch.backends.cudnn
    before = (matmul.fp32_precision, cudnn.fp32_precision)
    matmul.fp32_precision, cudnn.fp32_precision = value, value
    try:
        yield
    finally:
        matmul.fp32_precision, cudnn.fp32_precision = before


def compute_precision(precision: str, device: torch.device | str) -> contextlib.AbstractContextManager:
    """The arithmetic region of a design's ``precision`` on ``device``: ``fp32`` is IEEE fp32 (on a
    GPU, TF32 turned off for matrix products and cuDNN convolutions); ``tf32`` lets a GPU use
    TensorFloat-32 for them, and on any other device emulates it (:mod:`.tf32_rounding`: the
    products' inputs rounded to TF32's 10-bit mantissa); ``bf16`` is bf16 autocast (matrix products
    and convolutions in bf16, weights, optimiser state and reductions in fp32).  Scores are computed
    in :func:`full_precision`."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {list(PRECISIONS)}, got {precision!r}")
    if precision in ("fp32", "tf32"):
        if torch.device(device).type != "cuda":
            return tf32_region() if precision == "tf32" else contextlib.nullcontext()
        return _gpu_fp32_precision("ieee" if precision == "fp32" else "tf32")
    # No cast cache: the region holds whole trainings, and autocast's cache keeps the bf16 copy of
    # each weight until the region ends, so every forward after an update would use stale weights.
    return torch.autocast(torch.device(device).type, dtype=torch.bfloat16, cache_enabled=False)


@contextlib.contextmanager
def full_precision(device: torch.device | str) -> Iterator[None]:
    """A region of IEEE fp32: membership scores are always computed in fp32, whatever the design's
    ``precision`` (a bf16 logit would round scores ~1e-2 apart): autocast off, a GPU's TF32 off and
    the CPU's TF32 emulation paused."""
    device = torch.device(device)
    gpu = _gpu_fp32_precision("ieee") if device.type == "cuda" else contextlib.nullcontext()
    with torch.autocast(device.type, enabled=False), gpu, tf32_paused():
        yield


def compile_model(model: nn.Module, enabled: bool) -> nn.Module:
    """``model`` with its forward compiled in place by ``torch.compile`` when ``enabled`` (the
    parameters and state-dict keys stay those of ``model``).  On the project's CPU machines it
    does not pay (``benchmarks/RESULTS.md``: about a minute of compilation per process and a
    slower step for the digits TinyNet), so every default config leaves it off."""
    if enabled:
        model.compile()
    return model


def as_tensor(a: Any, dtype: torch.dtype | None = None) -> torch.Tensor:
    """A CPU tensor view of a numpy array or tensor (no copy when possible)."""
    t = a if isinstance(a, torch.Tensor) else torch.from_numpy(np.ascontiguousarray(a))
    return t.to(dtype) if dtype is not None and t.dtype != dtype else t



def as_torch_generator(generator: torch.Generator | np.random.Generator | np.random.SeedSequence | int | None) -> torch.Generator:
    """A CPU ``torch.Generator`` from a torch Generator (returned as is), a seed, a SeedSequence or a numpy Generator."""
    if isinstance(generator, torch.Generator):
        return generator
    if generator is None:
        raise ValueError("a generator (or seed) is required for randomised steps")
    g = torch.Generator()
    g.manual_seed(torch_seed_of(generator))
    return g



def sum_of_squares(tensors) -> torch.Tensor:
    """Σ x² over all ``tensors`` flattened, as a float64 0-d tensor on their device: each tensor's sum of
    squares in float64, added in order; no host read."""
    total = None
    for t in tensors:
        part = t.detach().double().pow(2).sum()
        total = part if total is None else total + part
    return torch.zeros((), dtype=torch.float64) if total is None else total


def global_norm_tensor(tensors) -> torch.Tensor:
    """‖·‖₂ of all ``tensors`` flattened into one vector, as a float64 0-d tensor on their device (the
    square root of :func:`sum_of_squares`); no host read, so a device never waits for it (model
    clipping's noisy steps).  PyTorch's CPU square root may differ from the correctly rounded one in
    the last bit; a number reported to the host goes through :func:`global_norm`."""
    return sum_of_squares(tensors).sqrt()


def global_norm(tensors) -> float:
    """‖·‖₂ of all ``tensors`` flattened, on the host: the correctly rounded square root of
    :func:`sum_of_squares` (rewind-to-delete's gradient bound and Lipschitz ratio)."""
    return math.sqrt(float(sum_of_squares(list(tensors))))


def clip_grad_norms_per_model_(grads, k: int, max_norm: float) -> None:
    """Clip K models' gradients to global norm ``max_norm`` each, in place, where model k's entries are
    the k-th contiguous chunk of every tensor in ``grads`` (a grouped network's parameters, or weights
    stacked along a first dimension of size K); ``clip_grad_norm_``'s coefficient ``max_norm / (norm + 1e-6)``
    where below 1."""
    sq = sum(g.reshape(k, -1).pow(2).sum(dim=1) for g in grads)
    coef = (max_norm / (sq.sqrt() + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.view(k, -1).mul_(coef.unsqueeze(1))


def model_device(model: nn.Module) -> torch.device:
    """The device of the model's parameters (CPU for a model without parameters)."""
    return next((p.device for p in model.parameters()), torch.device("cpu"))



def check_xy(
    x: Any, y: Any, example_ids: np.ndarray | None = None, *, what: str = "", device: torch.device | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(x, y)`` as tensors (float32 images or int64 character ids; int64 labels) on ``device``.

    Mismatched row counts raise ``ValueError`` (prefixed with ``what`` when given).
    """
    xt, yt = as_tensor(x), as_tensor(y, torch.int64)
    xt = xt.to(torch.float32) if torch.is_floating_point(xt) else xt.to(torch.int64)
    if len(xt) != len(yt):
        raise ValueError(f"{what + ': ' if what else ''}x has {len(xt)} rows but y has {len(yt)}")
    if example_ids is not None and len(example_ids) != len(xt):
        raise ValueError(f"example_ids has {len(example_ids)} entries for {len(xt)} rows")
    return (xt, yt) if device is None else (xt.to(device), yt.to(device))



def progress_enabled(progress: bool | None) -> bool:
    """Progress bars: on when asked, or by default when stderr is a TTY."""
    if progress is None:
        return bool(getattr(sys.stderr, "isatty", lambda: False)())
    return bool(progress)


def progress(total: int, desc: str, progress: bool | None):
    if not progress_enabled(progress):
        return contextlib.nullcontext(None)
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, leave=False)


class ProgressLog:
    """One line per finished run for job logs, where progress bars are off (stderr is not a TTY).

    ``log = ProgressLog(len(runs), "nn_train digits_uniform calib")`` then ``log.step(run)`` after
    each run writes (and flushes) e.g.::

        nn_train digits_uniform calib: run 3 (2/25) done in 4.1 s, elapsed 8.3 s, about 95 s left

    The remaining time is the mean time per finished run times the runs left.  ``stream`` defaults
    to the *current* ``sys.stderr`` at each step (workflow scripts redirect it after import);
    ``clock`` (seconds, ``time.monotonic`` by default) can be injected for tests.
    """

    def __init__(self, total: int, label: str, stream: TextIO | None = None, clock: Callable[[], float] = time.monotonic) -> None:
        if total < 0:
            raise ValueError(f"total must be >= 0, got {total}")
        self.total, self.label, self.stream, self.clock = int(total), label, stream, clock
        self.done = 0
        self.start = self._last = clock()

    def step(self, run: int | str) -> str:
        """Record that ``run`` finished; write and return its line (without the newline)."""
        now = self.clock()
        self.done += 1
        elapsed, took = now - self.start, now - self._last
        self._last = now
        left = elapsed / self.done * max(self.total - self.done, 0)
        line = (
            f"{self.label}: run {run} ({self.done}/{self.total}) done in {took:.1f} s, "
            f"elapsed {elapsed:.1f} s, about {left:.0f} s left"
        )
        stream = sys.stderr if self.stream is None else self.stream
        print(line, file=stream, flush=True)
        return line




def save_state_dict(state: Mapping[str, torch.Tensor], path: str | os.PathLike) -> None:
    """Save a state dict with CPU tensors, atomically and byte-reproducibly.

    ``torch.save`` to a file names the archive's records after the file, and the atomic write's
    temporary file has a random name; saving to memory first gives every rerun the same bytes.
    """
    buffer = io.BytesIO()
    torch.save({k: v.detach().cpu() for k, v in state.items()}, buffer)
    write_bytes_atomic(path, buffer.getvalue())
