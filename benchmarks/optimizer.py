"""Benchmark of the SGD update: ``torch.optim.SGD`` vs the library's :class:`MomentumSGD`, side by side.

Run: ``python benchmarks/optimizer.py [--steps 300] [--repeats 5] [--starts 3]``.
Two measurements, each interleaved and the best of its repeats (robust to other load):

* per step: the digits base-training step (TinyNet w=0.25, 8x8x1, batch 64, momentum 0.9, one
  thread) with either update, and the largest weight difference between the two (0: the same
  arithmetic);
* per process: a fresh interpreter that imports torch, builds the model and takes one step with
  either update, so the difference is what ``torch.optim``'s first step adds to every job
  (its import of ``torch._dynamo``).

Not part of the test suite.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

from unlearn_audit.models import build_model, initial_model
from unlearn_audit.training import MomentumSGD

PARAMS = {"in_channels": 1, "num_classes": 10, "width": 0.25}

START = """
import time; t0 = time.perf_counter()
import torch, torch.nn.functional as F
torch.set_num_threads(1)
from unlearn_audit.models import build_model
from unlearn_audit.training import MomentumSGD
m = build_model("tinynet", **{params!r})
x, y = torch.randn(64, 1, 8, 8), torch.randint(0, 10, (64,))
opt = {make}
F.cross_entropy(m(x), y).backward()
{step}
print(time.perf_counter() - t0)
"""
MAKE = {
    "torch.optim.SGD": ("torch.optim.SGD(m.parameters(), lr=0.01, momentum=0.9)", "opt.step()"),
    "MomentumSGD": ("MomentumSGD(list(m.parameters()), momentum=0.9)", "opt.step(0.01)"),
}


def training_loop(kind: str, x: torch.Tensor, y: torch.Tensor, batches: list[torch.Tensor], lrs: np.ndarray):
    """One training run of ``len(batches)`` steps from the fixed x0 with the update ``kind``."""
    model = build_model("tinynet", **PARAMS)
    model.load_state_dict(initial_model("tinynet", PARAMS, 0))
    params = list(model.parameters())
    if kind == "torch.optim.SGD":
        opt = torch.optim.SGD(params, lr=float(lrs[0]), momentum=0.9)
    else:
        opt = MomentumSGD(params, momentum=0.9)
    for t, idx in enumerate(batches):
        if kind == "torch.optim.SGD":
            for group in opt.param_groups:
                group["lr"] = float(lrs[t])
            opt.zero_grad(set_to_none=True)
        else:
            opt.zero_grad()
        F.cross_entropy(model(x.index_select(0, idx)), y.index_select(0, idx)).backward()
        opt.step() if kind == "torch.optim.SGD" else opt.step(float(lrs[t]))
    return model.state_dict()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--starts", type=int, default=3, help="fresh interpreters per update for the start-up cost")
    a = ap.parse_args()
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(0)
    x, y = torch.randn(1294, 1, 8, 8, generator=g), torch.randint(0, 10, (1294,), generator=g)
    batches = [torch.randint(0, len(x), (64,), generator=g) for _ in range(a.steps)]
    lrs = np.linspace(0.001, 0.01, a.steps)
    kinds = list(MAKE)
    per_step = {k: float("inf") for k in kinds}
    states = {}
    for k in kinds:  # warm-up (the first torch.optim step imports torch._dynamo)
        training_loop(k, x, y, batches[:5], lrs[:5])
    for _ in range(a.repeats):
        for k in kinds:
            t0 = time.perf_counter()
            states[k] = training_loop(k, x, y, batches, lrs)
            per_step[k] = min(per_step[k], (time.perf_counter() - t0) / a.steps)
    diff = max(float((states[kinds[0]][n] - states[kinds[1]][n]).abs().max()) for n in states[kinds[0]])
    start = {k: float("inf") for k in kinds}
    for _ in range(a.starts):
        for k in kinds:
            make, step = MAKE[k]
            out = subprocess.run([sys.executable, "-c", START.format(params=PARAMS, make=make, step=step)], capture_output=True, text=True, check=True)
            start[k] = min(start[k], float(out.stdout.strip().splitlines()[-1]))
    print(f"torch {torch.__version__}, 1 thread, digits TinyNet w=0.25 batch 64, {a.steps} steps, best of {a.repeats}")
    for k in kinds:
        print(f"  {k:<16} {per_step[k] * 1e3:6.3f} ms/step   process start to first step {start[k]:5.2f} s")
    t, o = (per_step[k] for k in kinds)
    print(f"  torch.optim/MomentumSGD per step {t / o:.3f}x; start-up {start[kinds[0]] - start[kinds[1]]:+.2f} s per process; max|Δw| {diff:.1e}")


if __name__ == "__main__":
    main()
