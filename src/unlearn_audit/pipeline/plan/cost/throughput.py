"""What a model's steps cost on a device, read from the throughput rows of ``benchmarks/RESULTS.md``
(written by ``benchmarks/throughput.py``, ``benchmarks/workflow_loop.py`` and
``benchmarks/gpu_cases.py``), and the FLOP counts that stand in where nothing was measured.  Read by
the cost model (:mod:`.hours`), its check (:mod:`.check`) and the jobs' runtimes
(:class:`..pricing.ChunkPricing`).  Torch-free; no plan import.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping

from ....model_specs import ModelSpec, model_spec, tinynet_training_flops
from .runs import RunPart

__all__ = ["StepCost", "HVP_HEADER", "UNIT_HEADER", "UNIT_CASES", "PRECISIONS", "precision_label", "tinynet_training_flops", "model_key",
           "read_throughputs", "read_step_costs", "read_hvp_costs", "read_unit_costs", "priced_parts", "run_seconds"]

#: The table of Hessian–vector product rates in ``benchmarks/RESULTS.md`` (``benchmarks/gpu_cases.py
#: lissa --append``): examples/s of one product over a minibatch of ``batch`` examples.
HVP_HEADER = "| date | device | model | input | dtype | batch | examples/s |"
#: The per-unit table of ``benchmarks/RESULTS.md`` (``benchmarks/gpu_cases.py --append``): milliseconds
#: per unit of a case, its model, input and batch in the shapes column (``tinynet w=1 32x32x3, batch 128``).
UNIT_HEADER = "| date | device | case | shapes | dtype | units | ms per unit |"
#: The cases of the per-unit table that price a part of a run (:class:`.runs.RunPart`) on their own:
#: model clipping's noisy steps (App. G.1), rewind-to-delete's full-batch micro-batches (App. G.2) and a language
#: model's greedy token steps over a batch of prompts (the TOFU metrics' answers, docs/metrics.md).
UNIT_CASES = ("noisy", "r2d", "decode")
_SHAPES = re.compile(r"^(?P<model>.+) (?P<input>\d+x\d+x\d+|T=\d+), (?:micro-)?batch (?P<batch>\d+)$")


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


def _table(results_md: str | Path, header: str) -> Iterator[list[str]]:
    """The cells of each row of the table under ``header`` in ``results_md`` (none where either is missing)."""
    path = Path(results_md)
    inside = False
    for line in (path.read_text().splitlines() if path.exists() else []):
        if line.strip() == header:
            inside = True
            continue
        if inside and not line.startswith("|"):
            return
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if inside and not set(cells[0]) <= {"-"}:
            yield cells


def _unit_rows(results_md: str | Path, device: str) -> Iterator[tuple[str, str, str, int, float]]:
    """(part, model, input, batch, examples/s) of the Hessian–vector product rows (part ``hvp``) and of
    the per-unit rows of :data:`UNIT_CASES` whose device contains ``device`` (case-insensitively), a
    precision of :data:`PRECISIONS` in the model's label (:func:`precision_label`)."""
    for _, dev, model, inp, dtype, batch, rate in _table(results_md, HVP_HEADER):
        if device.lower() in dev.lower() and dtype in PRECISIONS and batch.isdigit():
            yield "hvp", precision_label(model, dtype), inp, int(batch), float(rate)
    for _, dev, case, shapes, dtype, _, ms in _table(results_md, UNIT_HEADER):
        match = _SHAPES.match(shapes)
        if case in UNIT_CASES and match and device.lower() in dev.lower() and dtype in PRECISIONS and ms.replace(".", "", 1).isdigit() and float(ms) > 0:
            batch = int(match["batch"])
            yield case, precision_label(match["model"], dtype), match["input"], batch, batch / (float(ms) / 1e3)


def read_unit_costs(results_md: str | Path, device: str) -> dict[tuple[str, str, str], StepCost]:
    """{(part, model, input): :class:`StepCost` of one unit over a batch} for the parts a per-unit row
    prices (:func:`_unit_rows`; benchmarks/RESULTS.md, "Per-unit costs"): a Hessian–vector product
    over a minibatch (``hvp``), a noisy model-clipping step (``noisy``), a micro-batch of
    rewind-to-delete's full-batch gradient (``r2d``), a language model's greedy token step over a
    batch of prompts (``decode``); fitted over the batch sizes as
    :func:`read_step_costs` (one batch size: no fixed cost and its rate)."""
    by_batch: dict[tuple[str, str, str], dict[int, float]] = {}
    for part, model, inp, batch, rate in _unit_rows(results_md, device):
        by_batch.setdefault((part, model, inp), {})[batch] = rate
    return {key: _fitted(rates) for key, rates in by_batch.items()}


def read_hvp_costs(results_md: str | Path, device: str) -> dict[tuple[str, str], StepCost]:
    """{(model, input): :class:`StepCost` of one Hessian–vector product over a minibatch}: the ``hvp``
    part of :func:`read_unit_costs`."""
    return {(model, inp): cost for (part, model, inp), cost in read_unit_costs(results_md, device).items() if part == "hvp"}


def model_key(design: Mapping) -> tuple[str, str, float]:
    """(model label, input label, training FLOPs per image) as benchmarks/throughput.py names them:
    the design's model spec's (:meth:`unlearn_audit.model_specs.ModelSpec.cost_key`; a language
    model's per sequence of ``max_length`` tokens, :mod:`unlearn_audit.language_model_shapes`; a model without a FLOP
    count: its name, ``-`` and NaN); the label carries the design's ``precision`` unless fp32
    (:func:`precision_label`), so that a design is priced at the rows of its precision."""
    name = design["model"]["name"]
    model, inp, flops = (model_spec(name) or ModelSpec(name, name)).cost_key(design)
    return precision_label(model, str(design.get("precision", "fp32"))), inp, flops


def priced_parts(design: Mapping, parts: Mapping[str, RunPart], unit_costs: Mapping) -> tuple[float, float, float]:
    """(steps, training-image equivalents, seconds) of the ``parts`` of a run (:func:`.runs.run_parts`)
    that ``unit_costs`` (:func:`read_unit_costs`) prices for the design's model and input: the steps
    and images they are counted in, to be taken out of the run's, and their seconds at their own
    unit cost; zeros for a part without one."""
    model, inp, _ = model_key(design)
    steps = images = seconds = 0.0
    for name, part in parts.items():
        cost = unit_costs.get((name, model, inp))
        if cost is not None and part.units:
            steps, images, seconds = steps + part.steps, images + part.images, seconds + cost.seconds(part.units, part.examples)
    return steps, images, seconds


def run_seconds(design: Mapping, steps: float, images: float, k: int, step_costs: Mapping, assume_tflops: float | None = None,
                parts: Mapping[str, RunPart] | None = None, unit_costs: Mapping | None = None) -> float:
    """Seconds of ``steps`` steps (passes over a batch, :func:`.runs.unlearning_steps`) over ``images``
    training-image equivalents of the design's model, K runs at a time: at the recorded step cost of K (else of K = 1), else at the model's FLOPs
    over ``assume_tflops``; NaN where neither is known.  The run's ``parts`` (Hessian–vector products,
    noisy steps, full-batch micro-batches: :func:`.runs.run_parts`), counted in the steps and
    images, are priced instead at their own recorded unit cost where ``unit_costs``
    (:func:`read_unit_costs`) has one for the model (:func:`priced_parts`)."""
    model, inp, flops = model_key(design)
    taken_steps, taken_images, extra = priced_parts(design, parts or {}, unit_costs or {})
    steps, images = steps - taken_steps, images - taken_images
    cost = step_costs.get((model, inp, k), step_costs.get((model, inp, 1)))
    if cost is not None:
        return cost.seconds(steps, images) + extra
    if assume_tflops and math.isfinite(flops):
        return images * flops / (assume_tflops * 1e12) + extra
    return math.nan
