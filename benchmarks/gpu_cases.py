"""The per-unit costs the cost model prices beside a training step, at the paper's shapes.

Run (``benchmarks/gpu.sh`` runs each case as a step of its own)::

    python benchmarks/gpu_cases.py noisy --device cuda --units 200 --append benchmarks/RESULTS.md
    python benchmarks/gpu_cases.py lm --device cuda --dtype bf16 --units 10 --append benchmarks/RESULTS.md
    python benchmarks/gpu_cases.py noisy r2d lstm lissa lm --device cpu --tiny       (a check of the code, seconds)

Cases, each in milliseconds per unit (a call of ``--units`` + 1 units less a call of one, after a
warm-up call):

* ``noisy``: model clipping's noisy steps (App. G.1, Eq. 14: an SGD step, the projection onto the
  C2 ball and Gaussian noise) of ``config/paper.yaml``'s TinyNet (width 1, 32x32x3, 100 classes),
  batch 128, as :mod:`unlearn_audit.unlearning.model_clipping` takes them on the device;
* ``r2d``: rewind-to-delete's full-batch retain gradient (App. G.2), one micro-batch of 1,024
  images a unit;
* the shapes column of ``noisy`` and ``r2d`` names the model and input as the throughput rows do
  (``tinynet w=1 32x32x3, batch 128``), so that ``unlearn-audit plan``, ``plan --check`` and the
  cost-model walltimes price model clipping's noisy steps and rewind-to-delete's micro-batches of
  that model on that device at the row (fp32; a bf16 row for a bf16 design);
* ``lstm``: base-training steps of the Shakespeare CharLSTM (App. D.2: 256 units, 2 layers),
  batch 256 windows of 80 characters, by :func:`~unlearn_audit.training.sgd.sgd_run` (``--hidden``
  and ``--windows`` for another design's; with ``--append`` also a row of the throughput table, in
  windows/s, which ``unlearn-audit plan`` reads for the CharLSTM);
* ``lm``: base-training steps of ``config/tofu.yaml``'s language model (Llama-3.2-1B's architecture
  from its published config, randomly initialised: nothing is downloaded), with the optimizer its
  design trains with (AdamW), batch 32 sequences of 256 tokens (``--dtype bf16``: the design's
  precision; ``--sequences``: other batch sizes, a row each; ``--design``: another language-model
  design, e.g. ``config/llm.yaml:qa_gpt2``); with ``--append`` also a row of the throughput table,
  in sequences/s, which ``unlearn-audit plan`` reads for that design in place of its assumed TFLOP/s;
* ``decode``: greedy decoding of the TOFU metrics' answers (:mod:`unlearn_audit.qa_eval`) by the same
  language model's ``generate`` with its key-value cache, in fp32 as evaluation runs decode, over
  a batch of 64 prompts of half a sequence (``--sequences``: other batches, a row each), one unit
  one token step; the shapes column names the model and input as the throughput rows do, so that
  the cost model prices an evaluation run's decoding at the row (``decode`` of
  :func:`unlearn_audit.pipeline.plan.cost.runs.evaluation_metrics_work`);
* ``lissa``: LiSSA iterations of the Hessian method (App. G.4), one Hessian-vector product of a
  minibatch of 10 a unit (``--hvp-batch``: one or more minibatch sizes), on the TinyNet;
  ``lissa-lstm`` the same on the CharLSTM, with cuDNN off as the method runs it on a GPU.  With
  ``--append`` each also writes a row of the Hessian-vector product table (examples/s), which
  ``unlearn-audit plan --check`` and the cost-model walltimes read for the Hessian method.

``--design CONFIG:DESIGN`` takes the model and input shapes from a design of a config instead of
the paper's (e.g. ``config/config.yaml:digits_uniform``, ``config/config.yaml:shakespeare``).

With ``--append`` each case adds its row to the per-unit table of ``benchmarks/RESULTS.md`` as
soon as it finishes, so a step cut off by its time limit keeps the cases before it.  ``--tiny``
shrinks every shape (a check that the code runs, not a measurement; its rows say ``tiny``).  A
case that runs out of GPU memory is written as such and the next one runs.  Not part of the test
suite.
"""

from __future__ import annotations

import argparse
import datetime as dt
import math
import sys
import time
from pathlib import Path

import numpy as np
import torch

import yaml

from unlearn_audit.data import DATASETS
from unlearn_audit.models import build_model
from unlearn_audit.language_model_shapes import lm_config, lm_label, lm_tokens
from unlearn_audit.pipeline.plan.cost.throughput import HVP_HEADER, UNIT_HEADER
from unlearn_audit.data.qa import GENERATION_BATCH
from unlearn_audit.torch_utils import compute_precision, deterministic_default, full_precision
from unlearn_audit.training.sgd import random_batches, sgd_run
from unlearn_audit.unlearning.hessian import hessian_step, retain_gradient
from unlearn_audit.unlearning.model_clipping import _noisy_phase
from unlearn_audit.unlearning.params import HessianParams, ModelClippingParams
from unlearn_audit.unlearning import Monitor

sys.path.insert(0, str(Path(__file__).resolve().parent))
from throughput import _sync, device_name, with_rows  # noqa: E402  (the throughput table's format)

CASES = ("noisy", "r2d", "lstm", "lissa", "lissa-lstm", "lm", "decode")
#: The language model of ``lm``: config/tofu.yaml's design.
LM_DESIGN = Path(__file__).resolve().parents[1] / "config" / "tofu.yaml", "tofu_llama"
#: ``--tiny``'s language model: two layers of 64.
TINY_LM = {"model_type": "llama", "vocab_size": 128, "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2,
           "num_attention_heads": 4, "num_key_value_heads": 2}


def _shapes(tiny: bool, hidden: int | None = None, windows: int | None = None, design: str | None = None) -> dict:
    if tiny:
        s = {"width": 0.25, "size": 8, "channels": 3, "classes": 10, "batch": 16, "micro": 32, "hidden": 16, "windows": 8, "chars": 12,
             "lm": {"config": TINY_LM}, "tokens": 16, "sequences": 4, "optimizer": "adamw"}
    else:
        s = {"width": 1.0, "size": 32, "channels": 3, "classes": 100, "batch": 128, "micro": 1024, "hidden": 256, "windows": 256, "chars": 80,
             **_lm_shapes()}
    return s | (_design_shapes(design) if design else {}) | ({"hidden": hidden} if hidden else {}) | ({"windows": windows} if windows else {})


def _design_shapes(spec: str) -> dict:
    """The model and input shapes of ``CONFIG:DESIGN`` (a design of a config file)."""
    path, _, name = spec.rpartition(":")
    designs = yaml.safe_load(Path(path).read_text())["nn"]["designs"]
    if name not in designs:
        raise SystemExit(f"--design {spec}: no design {name!r} in {path} (designs: {', '.join(designs)})")
    design = designs[name]
    params = design["model"].get("params", {})
    if design["model"]["name"] == "causal_lm":
        return _lm_shapes(design)
    if design["model"]["name"] == "charlstm":
        return {"hidden": int(params.get("hidden_size", 256)), "chars": int(design.get("dataset_params", {}).get("window", 80))}
    side, channels = DATASETS[design["dataset"]].image
    return {"width": float(params.get("width", 1.0)), "size": side, "channels": channels, "classes": int(params.get("num_classes", 100))}


def _lm_shapes(design: dict | None = None) -> dict:
    """A language-model design's model (its ``causal_lm`` params), tokens a sequence, batch and
    base-training optimizer; by default config/tofu.yaml's."""
    if design is None:
        path, name = LM_DESIGN
        design = yaml.safe_load(path.read_text())["nn"]["designs"][name]
    return {"lm": design["model"]["params"], "tokens": lm_tokens(design), "sequences": int(design["train"]["batch_size"]),
            "optimizer": design["train"].get("optimizer", "sgd")}


def _causal_lm(s: dict, device: torch.device):
    """The language model of ``s["lm"]`` (its params), built on ``device`` from its config (a Hub
    model's published one: nothing downloaded), randomly initialised."""
    config = lm_config(s["lm"])
    if config is None:
        raise SystemExit(f"lm: no config known for {s['lm']} (a config, a local directory with its config.json, or a Hub model of HUB_CONFIGS)")
    with device:
        return build_model("causal_lm", config=config)


def _labels(lstm: bool, s: dict) -> tuple[str, str]:
    """(model, input) as the throughput tables name them (``pipeline.plan.cost.throughput.model_key``)."""
    return (f"charlstm h={s['hidden']}", f"T={s['chars']}") if lstm else (f"tinynet w={s['width']:g}", f"{s['size']}x{s['size']}x{s['channels']}")


def _images(n: int, s: dict, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    return (torch.randn(n, s["channels"], s["size"], s["size"], generator=g).to(device), torch.randint(0, s["classes"], (n,), generator=g).to(device))


def _text(n: int, s: dict, device: torch.device) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 100, (n, s["chars"]), generator=g)
    return x.to(device), torch.roll(x, -1, dims=1).to(device)


def _tinynet(s: dict, device: torch.device):
    return build_model("tinynet", in_channels=s["channels"], num_classes=s["classes"], width=s["width"]).to(device)


def _charlstm(s: dict, device: torch.device):
    return build_model("charlstm", hidden_size=s["hidden"]).to(device)


def case_timer(case: str, units: int, s: dict, device: torch.device):
    """(a function that runs ``n`` units of ``case``, a description of its shapes)."""
    if case == "noisy":
        model = _tinynet(s, device)
        x, y = _images(s["batch"] * 4, s, device)
        params = ModelClippingParams(C2=0.2, sigma=0.1, epsilon=None, delta=None, noisy_steps=1, noisy_batch_size=s["batch"])
        g = torch.Generator().manual_seed(1)

        def run(n: int) -> None:
            batches = random_batches(len(x), s["batch"], 1, g)
            schedule = [batches[i % len(batches)] for i in range(n)]
            _noisy_phase(model, x, y, schedule, params, torch.Generator(device=device).manual_seed(2), set(), Monitor())

        return run, f"{' '.join(_labels(False, s))}, batch {s['batch']}"
    if case == "r2d":
        model = _tinynet(s, device)
        retain = _images(s["micro"] * units, s, device)
        # one unit: one micro-batch of the full-batch gradient (n units = the gradient over n micro-batches)
        return (lambda n: retain_gradient(model, (retain[0][: n * s["micro"]], retain[1][: n * s["micro"]]), s["micro"]),
                f"{' '.join(_labels(False, s))}, micro-batch {s['micro']}")
    if case == "lstm":
        model = _charlstm(s, device)
        x, y = _text(s["windows"] * 4, s, device)
        g = torch.Generator().manual_seed(1)

        def run(n: int) -> None:
            batches = random_batches(len(x), s["windows"], 1, g)
            sgd_run(model, x, y, [batches[i % len(batches)] for i in range(n)], np.full(n, 0.1), grad_clip=1.0, show_progress=False)

        return run, f"charlstm {s['hidden']} units, batch {s['windows']} x {s['chars']} chars"
    if case == "lm":
        model = _causal_lm(s, device)
        g = torch.Generator().manual_seed(0)
        x = torch.randint(0, model.lm.config.vocab_size, (s["sequences"] * 4, s["tokens"]), generator=g).to(device)
        y = torch.roll(x, -1, dims=1)
        g = torch.Generator().manual_seed(1)

        def run(n: int) -> None:
            batches = random_batches(len(x), s["sequences"], 1, g)
            sgd_run(model, x, y, [batches[i % len(batches)] for i in range(n)], np.full(n, 1e-5), weight_decay=0.01, grad_clip=1.0,
                    show_progress=False, optimizer=s["optimizer"])

        return run, f"{lm_label(s['lm'])}, {s['optimizer']}, batch {s['sequences']} x {s['tokens']} tokens"
    if case == "decode":
        model = _causal_lm(s, device).eval()
        g = torch.Generator().manual_seed(0)
        prompts = torch.randint(1, model.lm.config.vocab_size, (s["sequences"], max(s["tokens"] // 2, 1)), generator=g).to(device)

        @torch.no_grad()
        def run(n: int) -> None:
            with full_precision(device):
                model.lm.generate(input_ids=prompts, attention_mask=torch.ones_like(prompts), max_new_tokens=n, min_new_tokens=n,
                                  do_sample=False, num_beams=1, use_cache=True, pad_token_id=0)

        return run, f"{lm_label(s['lm'])} T={s['tokens']}, batch {s['sequences']}"
    if case in ("lissa", "lissa-lstm"):
        lstm = case == "lissa-lstm"
        model = _charlstm(s, device) if lstm else _tinynet(s, device)
        retain = (_text if lstm else _images)(max(s["batch"], s["hvp_batch"]) * 4, s, device)
        forget = tuple(t[:4] for t in retain)

        def run(n: int) -> None:
            params = HessianParams(s1=1, s2=n, scale=1.0e6, batch_size=s["hvp_batch"], grad_batch_size=len(retain[0]))
            hessian_step(model, retain, forget, params, torch.Generator().manual_seed(3))

        what = f"charlstm {s['hidden']} units, {s['chars']} chars" if lstm else f"tinynet w={s['width']:g} {s['size']}x{s['size']}x{s['channels']}"
        return run, f"{what}, minibatch {s['hvp_batch']} (one unit: one Hessian-vector product; the gradient once)"
    raise ValueError(f"unknown case {case!r}; known: {', '.join(CASES)}")


def _seconds(run, n: int, device: torch.device) -> float:
    _sync(device)
    t0 = time.perf_counter()
    run(n)
    _sync(device)
    return time.perf_counter() - t0


def measure(case: str, units: int, s: dict, device: torch.device) -> tuple[float, str]:
    """(milliseconds per unit of ``case``, its shapes): after a warm-up call, the time of a call of
    ``units`` + 1 units less that of a call of one, over ``units`` (what a call costs once, e.g.
    LiSSA's gradient or building the schedule, is not a unit's)."""
    run, shapes = case_timer(case, units + 1, s, device)
    run(1)
    one = _seconds(run, 1, device)
    return 1e3 * max(_seconds(run, units + 1, device) - one, 0.0) / units, shapes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("cases", nargs="+", choices=CASES)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--units", type=int, default=20, help="units timed per case (after one warm-up unit)")
    ap.add_argument("--dtype", default="fp32", choices=["fp32", "bf16"])
    ap.add_argument("--tiny", action="store_true", help="tiny shapes: a check that the code runs")
    ap.add_argument("--hidden", type=int, help="the CharLSTM's units (default 256, the paper's)")
    ap.add_argument("--windows", type=int, help="the CharLSTM's batch of windows (default 256, the paper's)")
    ap.add_argument("--design", help="CONFIG:DESIGN whose model and input shapes to use (default: the paper's)")
    ap.add_argument("--hvp-batch", type=int, nargs="+", default=[10], help="lissa cases: the minibatch sizes of a product (default 10, App. G.4's CIFAR-100)")
    ap.add_argument("--sequences", type=int, nargs="+", help="lm, decode: the batch sizes to time, a row each (default the design's, decode 64; two or more "
                    "give plan a step's fixed cost beside its rate)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--append", type=Path, help="add each case's row to this file's per-unit table as it finishes")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    device = torch.device(a.device)
    name, today, shapes = device_name(device), dt.date.today().isoformat(), _shapes(a.tiny, a.hidden, a.windows, a.design)
    print(f"{name}, torch {torch.__version__}; load average {Path('/proc/loadavg').read_text().split()[:3]}", flush=True)
    runs = [(case, shapes | {"hvp_batch": b}) for case in a.cases if case not in ("lm", "decode") for b in (a.hvp_batch if case.startswith("lissa") else a.hvp_batch[:1])]
    runs += [("lm", shapes | {"sequences": q}) for q in (a.sequences or [shapes["sequences"]]) if "lm" in a.cases]
    runs += [("decode", shapes | {"sequences": q}) for q in (a.sequences or [GENERATION_BATCH]) if "decode" in a.cases]
    for case, s in runs:
        t0 = time.perf_counter()
        try:
            with compute_precision(a.dtype, device), deterministic_default(True):
                ms, shapes = measure(case, a.units, s, device)
            value = f"{ms:.3f}"
        except torch.OutOfMemoryError:
            torch.cuda.empty_cache()
            ms, shapes, value = float("nan"), "out of memory", "out of memory"
        label = case + (" tiny" if a.tiny else "")
        print(f"{label:<16} {value:>14} ms/unit   {shapes}   ({time.perf_counter() - t0:.1f} s)", flush=True)
        if a.append:
            row = f"| {today} | {name} | {label} | {shapes} | {a.dtype} | {a.units} | {value} |"
            text = with_rows(a.append.read_text() if a.append.exists() else "", [row], UNIT_HEADER)
            if case == "lstm" and math.isfinite(ms) and ms > 0:  # also a throughput row, in windows/s, that plan reads
                rate = s["windows"] / (ms / 1e3)
                text = with_rows(text, [f"| {today} | {name} | charlstm h={s['hidden']} | T={s['chars']} | 1 | {a.dtype} | {s['windows']} | {rate:.0f} | {rate:.0f} |"])
            if case == "lm" and math.isfinite(ms) and ms > 0:  # a throughput row, in sequences/s, that plan reads
                rate = s["sequences"] / (ms / 1e3)
                text = with_rows(text, [f"| {today} | {name} | {lm_label(s['lm'])} | T={s['tokens']} | 1 | {a.dtype} | {s['sequences']} | {rate:.2f} | {rate:.2f} |"])
            if case.startswith("lissa") and math.isfinite(ms) and ms > 0:  # a row of the HVP table, in examples/s
                model, inp = _labels(case == "lissa-lstm", s)
                text = with_rows(text, [f"| {today} | {name} | {model} | {inp} | {a.dtype} | {s['hvp_batch']} | {s['hvp_batch'] / (ms / 1e3):.0f} |"], HVP_HEADER)
            a.append.write_text(text)


if __name__ == "__main__":
    main()
