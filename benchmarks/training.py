"""Benchmark of base training: K models one at a time vs K models as one grouped network, side by side.

Run: ``python benchmarks/training.py [--k 4 8 16] [--epochs 60] [--width 0.25] [--threads 1] [--repeats 3]``.
Default case: the offline digits configuration (8x8, 1 channel, 10 classes, B = 1 with m = 144,
TinyNet width 0.25, batch 64, one-cycle max 0.01, momentum 0.9).  Prints, for each case, the
seconds per base training (best of the interleaved repeats) of the loop (``train_model``) and of the grouped path
(``train_models_grouped``), their ratio, and the largest weight difference between the two
(the same training up to floating-point evaluation order).  Not part of the test suite.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from unlearn_audit.models import build_model, initial_model, model_factories
from unlearn_audit.training import TrainConfig, shuffle_orders, train_model, train_models_grouped


def digits_like(n_universe: int, size: int, channels: int, classes: int, real: bool, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The sklearn digits (standardised) when ``real`` and the shape allows it; otherwise Gaussian images."""
    rng = np.random.default_rng(seed)
    if real and size == 8 and channels == 1 and classes == 10:
        from sklearn.datasets import load_digits

        d = load_digits()
        pick = rng.permutation(len(d.target))[:n_universe]
        x = d.images[pick].astype(np.float32)[:, None]
        x = (x - x.mean()) / x.std()
        return x, d.target[pick].astype(np.int64)
    x = rng.standard_normal((n_universe, channels, size, size)).astype(np.float32)
    return x, rng.integers(0, classes, n_universe).astype(np.int64)


def run_case(k: int, epochs: int, width: float, size: int, channels: int, classes: int, n_retain: int, m: int, batch: int, repeats: int) -> None:
    n_universe = n_retain + m
    x, y = digits_like(n_universe, size, channels, classes, real=True)
    params = {"in_channels": channels, "num_classes": classes, "width": width}
    x0 = initial_model("tinynet", params, 1)
    orders = shuffle_orders(n_universe, epochs, 2)
    cfg = TrainConfig(epochs=epochs, batch_size=batch, lr=0.01, momentum=0.9, schedule="onecycle")
    rng = np.random.default_rng(3)
    sets = []
    for _ in range(k):
        signs = rng.permutation(np.r_[np.ones(m // 2), -np.ones(m - m // 2)])
        sets.append(np.r_[np.arange(n_retain), n_retain + np.flatnonzero(signs > 0)])
    xt, yt = torch.from_numpy(x), torch.from_numpy(y)
    warm = TrainConfig(epochs=1, batch_size=batch)  # first calls create the oneDNN kernels
    model = build_model("tinynet", **params)
    train_model(model, xt[torch.from_numpy(sets[0])], yt[torch.from_numpy(sets[0])], sets[0], orders, warm, progress=False)
    make_grouped = model_factories("tinynet", params)[1]
    train_models_grouped(make_grouped, x0, xt, yt, sets, orders, warm, progress=False)

    def loop() -> list[dict[str, torch.Tensor]]:
        states = []
        for ids in sets:
            model = build_model("tinynet", **params)
            model.load_state_dict(x0)
            idx = torch.from_numpy(ids)
            train_model(model, xt[idx], yt[idx], ids, orders, cfg, progress=False)
            states.append(model.state_dict())
        return states

    def grouped() -> list[dict[str, torch.Tensor]]:
        return train_models_grouped(make_grouped, x0, xt, yt, sets, orders, cfg, progress=False)

    times: dict[str, list[float]] = {"loop": [], "grouped": []}
    for _ in range(repeats):  # interleaved, best of `repeats`: robust to other load on the machine
        for name, fn in (("loop", loop), ("grouped", grouped)):
            t0 = time.perf_counter()
            out = fn()
            times[name].append((time.perf_counter() - t0) / k)
            if name == "loop":
                loop_states = out
            else:
                grouped_states = out
    t_loop, t_grouped = min(times["loop"]), min(times["grouped"])

    diff = max(float((a[n] - b[n]).abs().max()) for a, b in zip(loop_states, grouped_states) for n in a)
    steps = epochs * cfg.steps_per_epoch(len(sets[0]))
    print(
        f"{size:>2}x{size:<2} c={channels} w={width:<5} K={k:<3} epochs={epochs:<3} n={len(sets[0]):<5} steps={steps:<6} "
        f"loop {t_loop:7.3f} s/model  grouped {t_grouped:7.3f} s/model  loop/grouped {t_loop / t_grouped:5.2f}  max|Δw| {diff:.1e}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, nargs="+", default=[4, 8, 16])
    ap.add_argument("--epochs", type=int, default=60)
    ap.add_argument("--width", type=float, nargs="+", default=[0.25])
    ap.add_argument("--size", type=int, default=8)
    ap.add_argument("--channels", type=int, default=1)
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--n-retain", type=int, default=1150)
    ap.add_argument("--m", type=int, default=144)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3, help="best of this many interleaved repeats")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} thread(s)")
    for width in a.width:
        for k in a.k:
            run_case(k, a.epochs, width, a.size, a.channels, a.classes, a.n_retain, a.m, a.batch, a.repeats)


if __name__ == "__main__":
    main()
