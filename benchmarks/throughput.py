"""Training throughput of TinyNet: K models at once, fp32 vs bf16, on CPU or a GPU; and one epoch of a design.

Run::

    python benchmarks/throughput.py --device cpu --k 1 --width 0.25 --size 8 --channels 1 --classes 10 --batch 64
    python benchmarks/throughput.py --device cuda --k 1 8 32 64 --dtype fp32 bf16          # the paper's TinyNet, 32x32
    python benchmarks/throughput.py --device cuda --epoch config/paper.yaml:cifar_uniform   # one base-training epoch

Each case trains for ``--steps`` SGD steps (after ``--warmup`` steps) with the data resident on the
device: K = 1 is :class:`~unlearn_audit.models.TinyNetCIFAR100`, K > 1 one
:class:`~unlearn_audit.models.GroupedTinyNet` of K models (every model its own batch).  It prints
images/s summed over the K models and per model, side by side for every (K, dtype), and with
``--append FILE`` adds one Markdown row per case to FILE (``benchmarks/RESULTS.md``), the device
named, which ``unlearn-audit plan`` reads.  ``--epoch CONFIG:DESIGN`` times one epoch of that
design's base training (its batch size, optimiser and model) on random data of the design's
training-set size.  Not part of the test suite.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from unlearn_audit.models import GroupedTinyNet, build_model
from unlearn_audit.pipeline.provenance import cpu_model
from unlearn_audit.torch_utils import compile_model, compute_precision
from unlearn_audit.training import MomentumSGD

HEADER = "| date | device | model | input | K | dtype | batch | images/s (all K) | images/s per model |"


def device_name(device: torch.device) -> str:
    """The device as RESULTS.md names it: the GPU's name, or ``cpu (<model>, <threads> threads)``
    (the model as a run's provenance.json records it)."""
    if device.type == "cuda":
        return torch.cuda.get_device_name(device)
    return f"cpu ({cpu_model() or 'cpu'}, {torch.get_num_threads()} threads)"


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def images_per_second(k: int, dtype: str, device: torch.device, *, width: float, size: int, channels: int, classes: int,
                      batch: int, steps: int, warmup: int, compiled: bool = False) -> tuple[float, float]:
    """(images/s summed over K models of SGD training steps — forward, backward, momentum update —,
    seconds of the warm-up steps, which include the compilation when ``compiled``)."""
    params = {"in_channels": channels, "num_classes": classes, "width": width}
    net = compile_model((build_model("tinynet", **params) if k == 1 else GroupedTinyNet(k, **params)).to(device), compiled)
    opt = MomentumSGD(list(net.parameters()), momentum=0.9)  # the library's update (training.sgd)
    g = torch.Generator(device="cpu").manual_seed(0)
    shape = (batch, channels, size, size) if k == 1 else (k, batch, channels, size, size)
    x = torch.randn(shape, generator=g).to(device)
    y = torch.randint(0, classes, shape[:-3], generator=g).to(device)

    def step() -> None:
        opt.zero_grad()
        with compute_precision(dtype, device):
            logits = net(x)
            loss = F.cross_entropy(logits.reshape(-1, classes).float(), y.reshape(-1))
        loss.backward()
        opt.step(0.01)

    t_warm = time.perf_counter()
    for _ in range(max(1, warmup)):
        step()
    _sync(device)
    t0 = time.perf_counter()
    for _ in range(steps):
        step()
    _sync(device)
    return k * batch * steps / (time.perf_counter() - t0), t0 - t_warm


def epoch_seconds(spec: str, device: torch.device, dtype: str) -> tuple[str, float, int]:
    """(label, seconds, training-set size) of one base-training epoch of ``CONFIG:DESIGN``."""
    import yaml

    from unlearn_audit.training import TrainConfig

    path, design = spec.split(":", 1)
    cfg = yaml.safe_load(Path(path).read_text())["nn"]["designs"][design]
    model = cfg["model"]
    tcfg = TrainConfig.from_dict({**cfg["train"], "epochs": 1})
    if cfg["dataset"] != "cifar100":
        raise SystemExit(f"--epoch times CIFAR-100 designs (32x32 inputs); {design} is {cfg['dataset']}")
    # |D(S)|: the 45,000-image training portion less the pool of m*B, plus the half of it in D_f(S)
    n = 45_000 - int(cfg["m"]) * int(cfg["batch_size"]) // 2
    net = build_model(model["name"], **model.get("params", {})).to(device)
    p = model.get("params", {})
    x = torch.randn(n, p.get("in_channels", 3), 32, 32).to(device)
    y = torch.randint(0, p.get("num_classes", 100), (n,)).to(device)
    opt = MomentumSGD(list(net.parameters()), momentum=tcfg.momentum, weight_decay=tcfg.weight_decay)
    perm = torch.randperm(n, device=device)
    _sync(device)
    t0 = time.perf_counter()
    for i in range(0, n, tcfg.batch_size):
        idx = perm[i : i + tcfg.batch_size]
        opt.zero_grad()
        with compute_precision(dtype, device):
            loss = F.cross_entropy(net(x[idx]).float(), y[idx])
        loss.backward()
        opt.step(tcfg.lr)
    _sync(device)
    return f"{design} epoch ({path})", time.perf_counter() - t0, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--k", type=int, nargs="+", default=[1])
    ap.add_argument("--dtype", nargs="+", default=["fp32"], choices=["fp32", "bf16"])
    ap.add_argument("--width", type=float, default=1.0)
    ap.add_argument("--size", type=int, default=32)
    ap.add_argument("--channels", type=int, default=3)
    ap.add_argument("--classes", type=int, default=100)
    ap.add_argument("--batch", type=int, default=128)
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--epoch", metavar="CONFIG:DESIGN", help="time one base-training epoch of this design instead")
    ap.add_argument("--append", type=Path, help="add the results as Markdown rows to this file (benchmarks/RESULTS.md)")
    ap.add_argument("--compile", action="store_true", help="also time each case with torch.compile, side by side (dtype column '<dtype>+compile')")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    device = torch.device(a.device)
    name = device_name(device)
    today = dt.date.today().isoformat()
    rows = []
    if a.epoch:
        for dtype in a.dtype:
            label, seconds, n = epoch_seconds(a.epoch, device, dtype)
            print(f"{name}: {label} {dtype}: {seconds:.1f} s for {n} images ({n / seconds:,.0f} images/s)")
            rows.append(f"| {today} | {name} | {label} | 32x32 | 1 | {dtype} | - | {n / seconds:.0f} | {n / seconds:.0f} |")
    else:
        model = f"tinynet w={a.width:g}"
        print(f"{name}, torch {torch.__version__}: {model}, {a.size}x{a.size}x{a.channels}, {a.classes} classes, batch {a.batch} per model")
        base = None
        for k in a.k:
            line = []
            for dtype in a.dtype:
                for compiled in (False, True) if a.compile else (False,):
                    ips, warm = images_per_second(k, dtype, device, width=a.width, size=a.size, channels=a.channels, classes=a.classes,
                                                  batch=a.batch, steps=a.steps, warmup=a.warmup, compiled=compiled)
                    base = base or ips
                    label = dtype + ("+compile" if compiled else "")
                    extra = f", compiled in {warm:.0f} s" if compiled else ""
                    line.append(f"{label} {ips:10,.0f} img/s ({ips / k:9,.0f}/model, x{ips / base:5.2f} of K=1 {a.dtype[0]}{extra})")
                    rows.append(f"| {today} | {name} | {model} | {a.size}x{a.size}x{a.channels} | {k} | {label} | {a.batch} | {ips:.0f} | {ips / k:.0f} |")
            print(f"K={k:<3} " + "   ".join(line))
    if a.append:
        a.append.write_text(with_rows(a.append.read_text() if a.append.exists() else "", rows))
    if any(not math.isfinite(float(r.split("|")[-3])) for r in rows):
        raise SystemExit("a throughput was not finite")


def with_rows(text: str, rows: list[str], header: str = HEADER) -> str:
    """``text`` with ``rows`` added at the end of its table under ``header`` (the throughput table
    by default; the table is created at the end when absent), so that prose after it stays after it."""
    if header not in text:
        text += ("\n" if text and not text.endswith("\n") else "") + f"\n{header}\n|{'---|' * header.count(' | ')}---|\n"
    lines = text.split("\n")
    start = next(i for i, line in enumerate(lines) if line.strip() == header)
    end = start + 1
    while end < len(lines) and lines[end].startswith("|"):
        end += 1
    return "\n".join(lines[:end] + rows + lines[end:])


if __name__ == "__main__":
    main()
