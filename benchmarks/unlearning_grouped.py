"""Benchmark of unlearning: K runs one at a time (``unlearn``) vs their final retain steps batched
(``unlearn_many``) as one grouped network and by ``torch.func.vmap``, side by side in one process;
and rewind-to-delete's K runs one at a time (``unlearn_variants``) vs their full-batch steps and
Lipschitz probes stacked by vmap (``unlearn_variants_many``).

Run: ``python benchmarks/unlearning_grouped.py [--k 4 8] [--repeats 2] [--threads 1]``.
Case: the default config's digits experiments (config/config.yaml: retain fine-tune, forget
ascent, IDA q = 1, model clipping at ε = 1 and its uncertified twin; their params as configured) on
the digits retain set of 1,150 images, TinyNet width 0.25, K base models with their own weights
and forget sets of 72 images.  Prints, per method and K, seconds per unlearning run (best of the
interleaved repeats) of the loop, the grouped network and vmap, the loop's time over each batched
path's and the largest weight difference of each from the loop (the same runs up to floating-point
evaluation order), with
/proc/loadavg and the process's CPU seconds beside them.  Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import torch
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from training import digits_like  # noqa: E402

from unlearn_audit.models import build_model, initial_model, model_factories  # noqa: E402
from unlearn_audit.unlearning import unlearn, unlearn_many, unlearn_variants, unlearn_variants_many  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXPERIMENTS = ("digits_uniform_retain_finetune", "digits_uniform_forget_ascent", "digits_uniform_ida_q1",
               "digits_mc_eps1_uniform", "digits_mc_uncertified_uniform", "digits_r2d_eps1_uniform")


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def _load() -> str:
    return Path("/proc/loadavg").read_text().split(" ", 3)[:3].__str__()


def run_method(name: str, method: str, params: dict, k: int, repeats: int, data) -> None:
    (xr, yr), forgets, models, make_grouped = data(k)
    gens = list(range(100, 100 + k))

    def loop():
        return [unlearn(method, m, (xr, yr), f, params, g) for m, f, g in zip(models, forgets, gens)]

    def grouped():
        return unlearn_many(method, models, (xr, yr), forgets, params, gens, make_grouped)

    def vmapped():
        return unlearn_many(method, models, (xr, yr), forgets, params, gens, group_mode="vmap")

    paths = (("loop", loop), ("grouped", grouped), ("vmap", vmapped))
    times: dict[str, list[float]] = {label: [] for label, _ in paths}
    outs = {}
    for _ in range(repeats):  # interleaved, best of `repeats`: robust to other load on the machine
        for label, fn in paths:
            t0 = time.perf_counter()
            outs[label] = fn()
            times[label].append((time.perf_counter() - t0) / k)

    def diff(label: str) -> float:
        return max(float((a.state_dict()[n] - b.state_dict()[n]).abs().max()) for a, b in zip(outs["loop"], outs[label]) for n in a.state_dict())

    best = {label: min(t) for label, t in times.items()}
    print(f"{name:<34} K={k:<3} loop {best['loop']:6.3f} s/run  grouped {best['grouped']:6.3f}  vmap {best['vmap']:6.3f}  "
          f"loop/grouped {best['loop'] / best['grouped']:5.2f}  loop/vmap {best['loop'] / best['vmap']:5.2f}  "
          f"max|Δw| grouped {diff('grouped'):.1e} vmap {diff('vmap'):.1e}", flush=True)

def run_r2d(name: str, params: dict, k: int, repeats: int, data) -> None:
    """Rewind-to-delete: the loop of ``unlearn_variants`` vs ``unlearn_variants_many`` (vmap) of K runs."""
    (xr, yr), forgets, models, _ = data(k)

    def variants(j: int):
        return [(params, torch.Generator().manual_seed(100 + j), None)]

    def loop():
        return [unlearn_variants("rewind_to_delete", m, (xr, yr), f, variants(j), torch.Generator().manual_seed(200 + j))[0]
                for j, (m, f) in enumerate(zip(models, forgets))]

    def stacked():
        return [v[0] for v in unlearn_variants_many("rewind_to_delete", models, (xr, yr), forgets, [variants(j) for j in range(k)],
                                                    [torch.Generator().manual_seed(200 + j) for j in range(k)])]

    times: dict[str, list[float]] = {"loop": [], "vmap": []}
    outs = {}
    for _ in range(repeats):
        for label, fn in (("loop", loop), ("vmap", stacked)):
            t0 = time.perf_counter()
            outs[label] = fn()
            times[label].append((time.perf_counter() - t0) / k)
    best = {label: min(t) for label, t in times.items()}
    diff = max(float((a.state_dict()[n] - b.state_dict()[n]).abs().max()) for a, b in zip(outs["loop"], outs["vmap"]) for n in a.state_dict())
    print(f"{name:<34} K={k:<3} loop {best['loop']:6.3f} s/run  vmap {best['vmap']:6.3f}  loop/vmap {best['loop'] / best['vmap']:5.2f}  "
          f"max|Δw| vmap {diff:.1e}", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, nargs="+", default=[4, 8])
    ap.add_argument("--repeats", type=int, default=2, help="best of this many interleaved repeats")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--experiments", nargs="+", default=list(EXPERIMENTS))
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    config = yaml.safe_load((ROOT / "config" / "config.yaml").read_text())
    experiments = config["nn"]["experiments"]
    params_model = {"in_channels": 1, "num_classes": 10, "width": 0.25}
    x, y = digits_like(1150 + 8 * 72, 8, 1, 10, real=True)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    make_grouped = model_factories("tinynet", params_model)[1]

    def data(k: int):
        models, forgets = [], []
        for j in range(k):
            m = build_model("tinynet", **params_model)
            m.load_state_dict(initial_model("tinynet", params_model, 1 + j))
            models.append(m)
            rows = slice(1150 + 72 * (j % 8), 1150 + 72 * (j % 8 + 1))
            forgets.append((xt[rows], yt[rows]))
        return (xt[:1150], yt[:1150]), forgets, models, make_grouped

    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s); loadavg before {_load()}", flush=True)
    cpu0, wall0 = _cpu(), time.perf_counter()
    run_method("warm-up (retain fine-tune, 1 epoch)", "retain_finetune", {"epochs": 1}, 2, 1, data)
    for name in a.experiments:
        exp = experiments[name]
        for k in a.k:
            if exp["method"] == "rewind_to_delete":
                run_r2d(name, dict(exp["params"]), k, a.repeats, data)
            else:
                run_method(name, exp["method"], dict(exp["params"]), k, a.repeats, data)
    print(f"wall {time.perf_counter() - wall0:.0f} s, CPU {_cpu() - cpu0:.0f} s; loadavg after {_load()}")


if __name__ == "__main__":
    main()
