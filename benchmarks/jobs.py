"""Benchmark of the per-job costs of the default workflow, each change side by side with what it replaced.

Run: ``python benchmarks/jobs.py [--repeats 3]`` (one thread; a quiet machine).  Prints, best of the
interleaved repeats:

* **variants**: three Hessian σ variants (Table 7) and three rewind-to-delete target-ε variants
  (Figure 1c) of one run, each unlearned on its own vs sharing the noiseless part
  (:func:`unlearn_audit.unlearning.unlearn_variants`);
* **start-up**: the CPU seconds a job spends importing its rule's module, the statistics rules'
  (``pipeline.nn``, torch-free) vs the training rules' (``pipeline.nn_runs``).

Not part of the test suite.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time

import numpy as np
import torch

from unlearn_audit.models import build_model, initial_model
from unlearn_audit.unlearning import unlearn, unlearn_variants

DIGITS = {"in_channels": 1, "num_classes": 10, "width": 0.25}


def _best(fn, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def _data(n: int, seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(n, 1, 8, 8, generator=g), torch.randint(0, 10, (n,), generator=g)


def bench_variants(name: str, params: dict, release: list[dict], repeats: int) -> tuple[float, float]:
    """Seconds for len(release) variants of one run: one by one vs sharing the noiseless part."""
    model = build_model("tinynet", **DIGITS)
    model.load_state_dict(initial_model("tinynet", DIGITS, 0))
    retain, forget = _data(1150, 1), _data(72, 2)
    variants = [{**params, **r} for r in release]

    def separate() -> None:
        for i, p in enumerate(variants):
            unlearn(name, model, retain, forget, p, generator=i)

    def shared() -> None:
        unlearn_variants(name, model, retain, forget, [(p, torch.Generator().manual_seed(i), None) for i, p in enumerate(variants)],
                         torch.Generator().manual_seed(99))

    a, b = [], []
    for _ in range(repeats):
        a.append(_best(separate, 1))
        b.append(_best(shared, 1))
    return min(a), min(b)


def bench_startup(module: str, repeats: int) -> float:
    """CPU seconds (user + system) of ``python -c 'import module'``."""
    best = np.inf
    for _ in range(repeats):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run([sys.executable, "-c", f"import {module}"], check=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        best = min(best, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))
    return float(best)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}, 1 thread, best of {args.repeats}")
    hess = {"s1": 1, "s2": 200, "scale": 500.0, "batch_size": 64, "weight_decay": 5.0e-4}
    a, b = bench_variants("hessian", hess, [{"sigma": s} for s in (1e-3, 5e-3, 1e-2)], args.repeats)
    print(f"variants  hessian x3   separate   {a:7.3f} s    shared        {b:7.3f} s    ratio {a / b:5.2f}")
    r2d = {"T": 40, "K": 5, "lr": 0.01, "delta": 1e-3, "lipschitz_samples": 5}
    a, b = bench_variants("rewind_to_delete", r2d, [{"epsilon": e} for e in (1.0, 1e2, 1e4)], args.repeats)
    print(f"variants  R2D x3       separate   {a:7.3f} s    shared        {b:7.3f} s    ratio {a / b:5.2f}")
    a = bench_startup("unlearn_audit.pipeline.nn_runs", args.repeats)
    b = bench_startup("unlearn_audit.pipeline.nn", args.repeats)
    print(f"start-up  import CPU   nn_runs    {a:7.3f} s    nn            {b:7.3f} s    ratio {a / b:5.2f}")


if __name__ == "__main__":
    main()
