"""What a model's steps cost on a device, read from the throughput rows of ``benchmarks/RESULTS.md``
(written by ``benchmarks/throughput.py``, ``benchmarks/workflow_loop.py`` and
``benchmarks/gpu_cases.py``), and the FLOP counts that stand in where nothing was measured.  Read by
the cost model (:mod:`.hours`), its check (:mod:`.check`) and the jobs' runtimes
(:class:`..pricing.ChunkPricing`).  Torch-free; no plan import.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ....data import DATASETS
from .language_models import lm_label, lm_shape, lm_tokens
from .runs import HVP, charlstm_training_flops

__all__ = ["StepCost", "HVP_HEADER", "PRECISIONS", "precision_label", "tinynet_training_flops", "model_key", "read_throughputs", "read_step_costs", "read_hvp_costs",
           "run_seconds"]

#: The table of Hessian–vector product rates in ``benchmarks/RESULTS.md`` (``benchmarks/gpu_cases.py
#: lissa --append``): examples/s of one product over a minibatch of ``batch`` examples.
HVP_HEADER = "| date | device | model | input | dtype | batch | examples/s |"


def tinynet_training_flops(width: float, size: int, channels: int, classes: int) -> float:
    """FLOPs of one training image (forward + backward ≈ 3 × forward) of TinyNet (App. D.1)."""
    f1, f2 = round(64 * width), round(128 * width)
    half = (size // 2) ** 2
    macs = size * size * (channels * f1 + f1 * f1) * 9 + half * (f1 * f2 + f2 * f2) * 9 + f2 * classes
    return 3 * 2 * macs


#: The precisions whose throughput rows price a design of that ``precision``: an fp32 row under its
#: model's label, a bf16 or tf32 row under the label and the precision (:func:`model_key`).
PRECISIONS = ("fp32", "bf16", "tf32")


def precision_label(model: str, precision: str) -> str:
    """How a row or a design of ``precision`` names its model: the label, and the precision unless fp32."""
    return model if precision == "fp32" else f"{model} {precision}"


def _rows(results_md: str | Path, device: str):
    """(model, input, K, batch, images/s of the K models) of each throughput row of a precision of
    :data:`PRECISIONS` whose device column contains ``device`` (case-insensitively), in the file's
    order; the model labelled with its row's precision (:func:`precision_label`)."""
    path = Path(results_md)
    if not path.exists():
        return
    for line in path.read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 9 or cells[0] in ("date", "") or set(cells[0]) <= {"-"}:
            continue
        _, dev, model, inp, k, dtype, batch, all_k, _ = cells
        if device.lower() in dev.lower() and dtype in PRECISIONS and k.isdigit():
            yield precision_label(model, dtype), inp, int(k), int(batch) if batch.isdigit() else None, float(all_k)


def read_throughputs(results_md: str | Path, device: str) -> dict[tuple[str, str, int], float]:
    """{(model, input, K): images/s summed over the K models} of the rows of ``device`` in
    RESULTS.md (fp32, bf16 and tf32, a precision other than fp32 in the model's label; the device
    column contains ``device``, case-insensitively; the last row of a kind wins).  The summed rate is the one that prices work: N trainings of I images each, K at a
    time, take N·I / rate seconds (the per-model column is that rate over K)."""
    return {(model, inp, k): rate for model, inp, k, _, rate in _rows(results_md, device)}


#: The fixed reference job: digits' TinyNet training loop on one CPU thread, K = 1, batch 64, fp32.
#: Run beside a timed run, its images/s against its own row of RESULTS.md tells how much faster or
#: slower the machine was than when the rows were measured (``plan --check --reference-img-s``).
REFERENCE_JOB = ("benchmarks/workflow_loop.py --device cpu --width 0.25 --size 8 --channels 1 --classes 10 "
                 "--batch 64 --k 1 --dtype fp32")
REFERENCE_ROW = ("tinynet w=0.25", "8x8x1", 1, 64)


def reference_rate(results_md: str | Path, device: str) -> float | None:
    """The images/s of :data:`REFERENCE_JOB`'s case in the last such row of ``device`` (None: no row)."""
    rates = [rate for model, inp, k, batch, rate in _rows(results_md, device) if (model, inp, k, batch) == REFERENCE_ROW]
    return rates[-1] if rates else None


@dataclass(frozen=True)
class StepCost:
    """A step of ``batch`` images takes ``step_s + batch / images_per_s`` seconds: a fixed cost (the
    kernel launches, the optimizer, Python) and a marginal rate."""

    step_s: float
    images_per_s: float

    def seconds(self, steps: float, images: float) -> float:
        return steps * self.step_s + images / self.images_per_s


def _fitted(rates: Mapping[int, float], k: int = 1) -> StepCost:
    """The step cost through the seconds of one step of the K models at each recorded batch size
    (least squares; a negative fixed cost is taken as 0); from one batch size no fixed cost and its rate."""
    xs = sorted(rates)
    ys = [k * b / rates[b] for b in xs]  # seconds of one step of the K models
    slope, intercept = 0.0, -1.0
    if len(xs) > 1:
        mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)
        intercept = my - slope * mx
    # a run's share of a step of K runs: the fixed cost over K, its images at the summed rate
    return StepCost(intercept / k, k / slope) if intercept >= 0 and slope > 0 else StepCost(0.0, rates[xs[-1]])


def read_step_costs(results_md: str | Path, device: str) -> dict[tuple[str, str, int], StepCost]:
    """{(model, input, K): :class:`StepCost`} from the rows of ``device`` (as
    :func:`read_throughputs`): where rows of two or more batch sizes were recorded, the line
    through their seconds a step against the batch; else no fixed cost and the one rate."""
    by_batch: dict[tuple[str, str, int], dict[int, float]] = {}
    for model, inp, k, batch, rate in _rows(results_md, device):
        if batch:
            by_batch.setdefault((model, inp, k), {})[batch] = rate
    return {key: _fitted(rates, key[2]) for key, rates in by_batch.items()}


def read_hvp_costs(results_md: str | Path, device: str) -> dict[tuple[str, str], StepCost]:
    """{(model, input): :class:`StepCost` of one Hessian–vector product over a minibatch} from the fp32
    rows of the table under :data:`HVP_HEADER` whose device contains ``device`` (fitted over the
    minibatch sizes as :func:`read_step_costs`)."""
    path = Path(results_md)
    by_batch: dict[tuple[str, str], dict[int, float]] = {}
    inside = False
    for line in (path.read_text().splitlines() if path.exists() else []):
        if line.strip() == HVP_HEADER:
            inside = True
            continue
        if inside and not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not inside or set(cells[0]) <= {"-"}:
            continue
        _, dev, model, inp, dtype, batch, rate = cells
        if device.lower() in dev.lower() and dtype == "fp32" and batch.isdigit():
            by_batch.setdefault((model, inp), {})[int(batch)] = float(rate)
    return {key: _fitted(rates) for key, rates in by_batch.items()}


def model_key(design: Mapping) -> tuple[str, str, float]:
    """(model label, input label, training FLOPs per image) as benchmarks/throughput.py names them (a
    language model's per sequence of ``max_length`` tokens, :mod:`.language_models`); the label
    carries the design's ``precision`` unless fp32 (:func:`precision_label`), so that a design is
    priced at the rows of its precision."""
    model, inp, flops = _model_key(design)
    return precision_label(model, str(design.get("precision", "fp32"))), inp, flops


def _model_key(design: Mapping) -> tuple[str, str, float]:
    model = design["model"]
    p = model.get("params", {})
    if model["name"] == "causal_lm":
        tokens = lm_tokens(design)
        shape = lm_shape(p)
        return lm_label(p), f"T={tokens}", shape.training_flops(tokens) if shape else math.nan
    if model["name"] == "charlstm":  # the schema's model names: tinynet, charlstm
        hidden, window = int(p.get("hidden_size", 256)), int(design.get("dataset_params", {}).get("window", 80))
        flops = charlstm_training_flops(hidden, int(p.get("embed_dim", 8)), int(p.get("vocab_size", 100)), int(p.get("num_layers", 2)), window)
        return f"charlstm h={hidden}", f"T={window}", flops
    if model["name"] != "tinynet":
        return model["name"], "-", math.nan
    spec = DATASETS.get(design["dataset"])
    if spec is None or spec.image is None:
        return model["name"], "-", math.nan
    size, channels = spec.image
    width = float(p.get("width", 1.0))
    return f"tinynet w={width:g}", f"{size}x{size}x{channels}", tinynet_training_flops(width, size, channels, int(p.get("num_classes", 100)))




def run_seconds(design: Mapping, steps: float, images: float, k: int, step_costs: Mapping, assume_tflops: float | None = None,
                hvps: tuple[float, float] = (0.0, 0.0), hvp_costs: Mapping | None = None) -> float:
    """Seconds of ``steps`` optimizer steps over ``images`` training-image equivalents of the design's
    model, K runs at a time: at the recorded step cost of K (else of K = 1), else at the model's FLOPs
    over ``assume_tflops``; NaN where neither is known.  ``hvps`` (products, their examples), counted
    in the steps and images at ``runs.HVP`` training units each, are priced instead at the
    model's recorded Hessian–vector product cost where ``hvp_costs`` (:func:`read_hvp_costs`) has one."""
    model, inp, flops = model_key(design)
    products, examples = hvps
    hvp = (hvp_costs or {}).get((model, inp))
    extra = 0.0
    if hvp is not None and products:
        steps, images = steps - HVP * products, images - HVP * examples
        extra = hvp.seconds(products, examples)
    cost = step_costs.get((model, inp, k), step_costs.get((model, inp, 1)))
    if cost is not None:
        return cost.seconds(steps, images) + extra
    if assume_tflops and math.isfinite(flops):
        return images * flops / (assume_tflops * 1e12) + extra
    return math.nan
