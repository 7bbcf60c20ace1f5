"""Benchmark of one SGD training run's per-step settings, side by side in one process.

Run: ``python benchmarks/step_cost.py [--steps 400] [--repeats 5] [--threads 1]``.  Digits TinyNet
width 0.25 (8x8x1, 10 classes), batch 64, momentum 0.9, weight decay 5e-4, one-cycle to 0.1 with
gradient clipping at 1.0 (the unlearning fine-tuning of ``config/config.yaml``), interleaved, best
of ``--repeats``.  Variants of :func:`unlearn_audit.training.sgd.sgd_run`:

* ``before``: the loop as it was: ``torch.use_deterministic_algorithms(True)`` with PyTorch's default
  ``fill_uninitialized_memory = True`` (every new tensor filled with NaN) and a per-tensor update
  and clipping loop (:class:`PerTensorSGD`, below);
* ``library``: the library's loop as it is (no NaN fill; ``torch._foreach_*`` update and clipping);
* ``no deterministic switch``: the library's loop without ``use_deterministic_algorithms``;
* ``channels_last``: the library's loop with the model and the images in channels-last layout.

Prints the milliseconds per step, the speed relative to ``before``, and whether the final weights
are bitwise equal to ``before``'s (else the largest difference).  Not part of the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import os
import resource
import time

import numpy as np
import torch

from unlearn_audit.models import build_model, initial_model
from unlearn_audit.torch_utils import deterministic_algorithms
from unlearn_audit.training import TrainConfig
from unlearn_audit.training import sgd as sgd_module
from unlearn_audit.training.sgd import random_batches, sgd_run


class PerTensorSGD(sgd_module.MomentumSGD):
    """The update one parameter at a time (the arithmetic of :class:`MomentumSGD`, op for op)."""

    @torch.no_grad()
    def step(self, lr: float) -> None:
        mu, wd = self.momentum, self.weight_decay
        for i, p in enumerate(self.params):
            g = p.grad
            if g is None:
                continue
            if wd != 0:
                g = g.add(p, alpha=wd)
            if mu != 0:
                buf = self.buffers[i]
                if buf is None:
                    buf = self.buffers[i] = torch.clone(g).detach()
                else:
                    buf.mul_(mu).add_(g)
                g = g.add(buf, alpha=mu) if self.nesterov else buf
            p.add_(g, alpha=-lr)


def per_tensor_clip(params, max_norm: float) -> None:
    grads = [p.grad for p in params if p.grad is not None]
    if not grads:
        return
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for g in grads:
            g.mul_(coef)


@contextlib.contextmanager
def patched(**names):
    saved = {k: getattr(sgd_module, k) for k in names}
    for k, v in names.items():
        setattr(sgd_module, k, v)
    try:
        yield
    finally:
        for k, v in saved.items():
            setattr(sgd_module, k, v)


VARIANTS = {
    "before": lambda: patched(deterministic_algorithms=functools.partial(deterministic_algorithms, fill_uninitialized_memory=True),
                              MomentumSGD=PerTensorSGD, _clip_grad_norm=per_tensor_clip),
    "library": contextlib.nullcontext,
    "no deterministic switch": lambda: patched(deterministic_algorithms=contextlib.nullcontext),
    "channels_last": contextlib.nullcontext,
}


def _digits(n: int = 1222) -> tuple[torch.Tensor, torch.Tensor]:
    from sklearn.datasets import load_digits

    d = load_digits()
    x = d.images[:n].astype(np.float32)[:, None]
    x = (x - x.mean()) / x.std()
    return torch.from_numpy(x), torch.from_numpy(d.target[:n].astype(np.int64))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    x, y = _digits()
    params = {"in_channels": 1, "num_classes": 10, "width": 0.25}
    x0 = initial_model("tinynet", params, 1)
    cfg = TrainConfig(epochs=1, batch_size=64, lr=0.1, momentum=0.9, weight_decay=5e-4, schedule="onecycle", grad_clip=1.0)
    batches = random_batches(len(x), 64, -(-args.steps * 64 // len(x)), torch.Generator().manual_seed(0))[: args.steps]
    lrs = cfg.lrs(len(batches))

    def run(name: str) -> dict[str, torch.Tensor]:
        layout = torch.channels_last if name == "channels_last" else torch.contiguous_format
        model = build_model("tinynet", **params)
        model.load_state_dict(x0)
        model = model.to(memory_format=layout)
        with VARIANTS[name]():
            sgd_run(model, x.contiguous(memory_format=layout), y, batches, lrs, momentum=0.9, weight_decay=5e-4,
                    grad_clip=1.0, show_progress=False)
        return {k: v.detach().contiguous().clone() for k, v in model.state_dict().items()}

    print(f"loadavg before: {open('/proc/loadavg').read().strip()}")
    for name in VARIANTS:  # warm-up: kernels created once
        run(name)
    times: dict[str, list[float]] = {n: [] for n in VARIANTS}
    finals: dict[str, dict[str, torch.Tensor]] = {}
    for _ in range(args.repeats):
        for name in VARIANTS:
            t0 = time.perf_counter()
            finals[name] = run(name)
            times[name].append((time.perf_counter() - t0) / len(batches))
    ref, best0 = finals["before"], min(times["before"])
    print(f"torch {torch.__version__}, {args.threads} thread(s), {len(batches)} steps, best of {args.repeats}")
    print(f"{'variant':24s} {'ms/step':>8s} {'speed':>7s}  weights vs before")
    for name in VARIANTS:
        same = all(torch.equal(finals[name][k], ref[k]) for k in ref)
        diff = max(float((finals[name][k] - ref[k]).abs().max()) for k in ref)
        print(f"{name:24s} {1e3 * min(times[name]):8.3f} {best0 / min(times[name]):6.3f}x  {'bitwise equal' if same else f'max diff {diff:.2e}'}")
    ru = resource.getrusage(resource.RUSAGE_SELF)
    print(f"CPU seconds (user+sys): {ru.ru_utime + ru.ru_stime:.1f}; loadavg after: {open('/proc/loadavg').read().strip()}; pid {os.getpid()}")


if __name__ == "__main__":
    main()
