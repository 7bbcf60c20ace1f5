"""The rates ``unlearn-audit plan`` needs, measured on the workflow's own loops rather than bare steps.

Run::

    python benchmarks/workflow_loop.py --device cuda --k 1 8 32 64 --group grouped vmap --dtype fp32 bf16 \\
        --deterministic on off --processes 1 2 4 --append benchmarks/RESULTS.md
    python benchmarks/workflow_loop.py --device cpu --width 0.25 --size 8 --channels 1 --classes 10 --batch 64 --k 1 4

* **training loop**: :func:`~unlearn_audit.training.sgd.sgd_run` (K = 1) and
  :func:`~unlearn_audit.training.batched.grouped_sgd_run` (K > 1, one grouped network) or
  :func:`~unlearn_audit.training.vmapped.vmapped_sgd_run` (K > 1, ``--group vmap``), each with a
  whole schedule of shuffled mini-batches over data resident on the device (as the workflow's
  base training and final retain steps run: one index schedule per run, momentum, weight decay,
  gradient clipping), in images/s summed over the K models;
* **model clipping**: one model-clipping unlearning run (App. G.1: noisy projected steps, then
  retain fine-tuning) per model, K runs as :func:`~unlearn_audit.unlearning.unlearn_many` groups
  them (a grouped network or vmap), in seconds per run;
* each at fp32 and bf16 autocast, with deterministic kernels on and off, and with 1, 2 or 4 copies
  of the process sharing the device (their rates summed: several jobs per GPU,
  ``UNLEARN_AUDIT_JOBS_PER_GPU``).

With ``--append`` the training-loop rates go to ``benchmarks/RESULTS.md`` as throughput rows: the
case the workflow runs by default (fp32, deterministic, one process) with dtype ``fp32``, which
``plan`` reads (the last row of a kind wins, so these replace bare-step rows of the same model,
input and K), every other case with its label (``bf16``, ``fp32 nondet``, ``fp32 vmap``,
``fp32 x2 proc``, …), which ``plan`` shows nowhere but which are there to compare (on the project's
CPU vmap loses to the grouped network: ``benchmarks/unlearning_grouped.py``).  Not part of the
test suite.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import torch

from unlearn_audit.models import GroupedTinyNet, build_model
from unlearn_audit.torch_utils import compute_precision, deterministic_default
from unlearn_audit.training.batched import grouped_sgd_run
from unlearn_audit.training.sgd import random_batches, sgd_run
from unlearn_audit.training.vmapped import vmapped_sgd_run
from unlearn_audit.unlearning import unlearn_many

sys.path.insert(0, str(Path(__file__).resolve().parent))
from throughput import _sync, device_name, with_rows  # noqa: E402  (the throughput table's format)

#: Model clipping at App. G.1's ratios, shortened: a few noisy steps and one fine-tuning epoch (both
#: at the loop's ``--batch``).
CLIPPING = {"C2": 0.2, "sigma": 0.1, "epsilon": None, "delta": None, "noisy_steps": 4, "epochs": 1, "batch_size": 128,
            "lr": 0.1, "schedule": "constant", "momentum": 0.0, "weight_decay": 5.0e-4, "C0": 30.0,
            "noisy_lr": 1.0e-3, "noisy_batch_size": 128}


def _data(n: int, a, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return (torch.randn(n, a.channels, a.size, a.size, generator=g).to(device),
            torch.randint(0, a.classes, (n,), generator=g).to(device))


def training_rate(k: int, a, device: torch.device, group: str = "grouped") -> float:
    """Images/s summed over K models of the workflow's loop over one schedule of ``a.steps`` batches."""
    params = {"in_channels": a.channels, "num_classes": a.classes, "width": a.width}
    n = a.batch * a.steps
    x, y = _data(n, a, device)
    g = torch.Generator().manual_seed(1)
    lrs = np.full(a.steps, 0.01)
    if k == 1:
        model = build_model("tinynet", **params).to(device)
        batches = random_batches(n, a.batch, 1, g)
        run = lambda: sgd_run(model, x, y, batches, lrs, momentum=0.9, weight_decay=5e-4, grad_clip=1.0, show_progress=False)
    else:
        rows = [np.stack(step) for step in zip(*(random_batches(n, a.batch, 1, g) for _ in range(k)))]
        if group == "vmap":
            models = [build_model("tinynet", **params).to(device) for _ in range(k)]
            run = lambda: vmapped_sgd_run(models, x, y, rows, lrs, momentum=0.9, weight_decay=5e-4, grad_clip=1.0, progress=False)
        else:
            net = GroupedTinyNet(k, **params).to(device)
            run = lambda: grouped_sgd_run(net, x, y, rows, lrs, momentum=0.9, weight_decay=5e-4, grad_clip=1.0, progress=False)
    run()  # warm-up: allocator, kernels, cuDNN's choice
    _sync(device)
    t0 = time.perf_counter()
    run()
    _sync(device)
    return k * n / (time.perf_counter() - t0)


def clipping_seconds(k: int, a, device: torch.device, group: str = "grouped") -> float:
    """Seconds per model-clipping unlearning run, K runs at once as :func:`unlearn_many` groups them."""
    params = {"in_channels": a.channels, "num_classes": a.classes, "width": a.width}
    retain = _data(a.batch * a.steps, a, device)
    forget = _data(a.batch, a, device)
    models = [build_model("tinynet", **params).to(device) for _ in range(k)]
    make_grouped = (lambda kk: GroupedTinyNet(kk, **params)) if k > 1 and group == "grouped" else None
    params = {**CLIPPING, "batch_size": a.batch, "noisy_batch_size": a.batch}
    run = lambda: unlearn_many("model_clipping", models, retain, [forget] * k, params,
                               [torch.Generator().manual_seed(i) for i in range(k)], make_grouped, group_size=k, group_mode=group)
    run()
    _sync(device)
    t0 = time.perf_counter()
    run()
    _sync(device)
    return (time.perf_counter() - t0) / k


def measure(a) -> list[dict]:
    """Every (K, batched form, dtype, deterministic) case of this process (K = 1: the loop, one form).
    On a GPU the process may use 90 % of its memory shared among the ``--share`` processes, so that
    one case out of memory fails alone instead of the others with it."""
    torch.set_num_threads(a.threads)
    device = torch.device(a.device)
    if device.type == "cuda":
        torch.cuda.set_per_process_memory_fraction(0.9 / a.share, device)
    out = []
    for k in a.k:
        for group in (a.group if k > 1 else ["grouped"]):
            for dtype in a.dtype:
                for det in a.deterministic:
                    with compute_precision(dtype, device), deterministic_default(det == "on"):
                        rate = training_rate(k, a, device, group)
                        clip = clipping_seconds(k, a, device, group) if a.clipping else float("nan")
                    out.append({"k": k, "group": group, "dtype": dtype, "deterministic": det, "images_per_s": rate, "clipping_s_per_run": clip})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--k", type=int, nargs="+", default=[1])
    ap.add_argument("--group", nargs="+", default=["grouped"], choices=["grouped", "vmap"], help="batched forms at K > 1")
    ap.add_argument("--dtype", nargs="+", default=["fp32"], choices=["fp32", "bf16"])
    ap.add_argument("--deterministic", nargs="+", default=["on"], choices=["on", "off"])
    ap.add_argument("--processes", type=int, nargs="+", default=[1], help="copies of this process sharing the device")
    ap.add_argument("--width", type=float, default=1.0)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--channels", type=int, default=3)
    ap.add_argument("--classes", type=int, default=100)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=40, help="mini-batches of one timed schedule")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-clipping", dest="clipping", action="store_false", help="skip the model-clipping runs")
    ap.add_argument("--append", type=Path, help="add the training-loop rates as throughput rows to this file")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--share", type=int, default=1, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.child:
        print(json.dumps(measure(a)))
        return
    device = torch.device(a.device)
    torch.set_num_threads(a.threads)  # as each measuring process runs (the device name counts them)
    name, today = device_name(device), dt.date.today().isoformat()
    model, inp = f"tinynet w={a.width:g}", f"{a.size}x{a.size}x{a.channels}"
    print(f"{name}, torch {torch.__version__}: the workflow's loops, {model}, {inp}, {a.classes} classes, batch {a.batch}; "
          f"load average {Path('/proc/loadavg').read_text().split()[:3]}")
    child = [sys.executable, __file__, "--child", *[arg for arg in sys.argv[1:] if arg != "--child"]]
    for procs in a.processes:
        rows = []
        t0 = time.perf_counter()
        started = [subprocess.Popen([*child, "--share", str(procs)], stdout=subprocess.PIPE, text=True) for _ in range(procs)]
        outputs = [p.communicate()[0] for p in started]
        if any(p.returncode for p in started):
            raise SystemExit("a measuring process failed (its error is above)")
        results = [json.loads(out.strip().splitlines()[-1]) for out in outputs]
        for case in zip(*results):  # the same case in every copy: rates add up
            c = case[0]
            rate = sum(r["images_per_s"] for r in case)
            clip = float(np.mean([r["clipping_s_per_run"] for r in case]))
            label = (c["dtype"] + (" vmap" if c["group"] == "vmap" else "") + (" nondet" if c["deterministic"] == "off" else "")
                     + (f" x{procs} proc" if procs > 1 else ""))
            print(f"K={c['k']:<3} {label:<18} training loop {rate:10,.0f} img/s ({rate / c['k']:9,.0f}/model)   "
                  f"model clipping {clip:7.3f} s/run")
            rows.append(f"| {today} | {name} | {model} | {inp} | {c['k']} | {label} | {a.batch} | {rate:.0f} | {rate / c['k']:.0f} |")
        print(f"  ({procs} process(es): {time.perf_counter() - t0:.1f} s wall)", flush=True)
        if a.append:  # as each process count finishes: a run cut off by a time limit keeps what it measured
            a.append.write_text(with_rows(a.append.read_text() if a.append.exists() else "", rows))


if __name__ == "__main__":
    main()
