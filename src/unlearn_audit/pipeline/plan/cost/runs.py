"""What one neural-network run costs, in *training-image equivalents* (one forward and backward pass of
one image; a forward-only pass counts 1/3, a Hessian–vector product 2) and in *steps* (forward and
backward passes over a batch, each with a step's fixed cost; a forward-only pass counts 1/3), from a
design's data sizes (its dataset's spec) and a method's hyperparameters (its method spec's work,
:class:`unlearn_audit.unlearning.spec.MethodSpec`; docs/development.md#add-an-unlearning-method).
Read by the cost model (:mod:`.hours`, ``unlearn-audit plan``) and by the jobs' runtime requests
(:class:`..pricing.ChunkPricing`), which price an unlearning run relative to a base training.  Torch-free; no plan import (the plan imports
this module).
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Mapping, NamedTuple, Sequence

from ....data import dataset_spec
from ....unlearning.spec import FORWARD, HVP, RunPart

__all__ = ["FORWARD", "HVP", "RunPart", "candidate_pool", "add_parts", "design_sizes", "base_training_images", "base_training_steps", "retrain_work",
           "unlearning_images", "unlearning_steps", "unlearning_run_images", "unlearning_run_steps", "unlearning_run_work", "RunWork",
           "evaluation_metrics_work", "hessian_vector_products",
           "run_parts", "group_run_parts", "takes_training_steps", "training_k", "unlearning_k"]


def candidate_pool(design: Mapping) -> float:
    """m·B, the candidate pool of a design in examples; NaN where the design has no B (a text
    dataset's size model counts its pool)."""
    return math.nan if design.get("batch_size") is None else float(int(design["m"]) * int(design["batch_size"]))


def add_parts(into: dict[str, RunPart], parts: Mapping[str, RunPart], factor: float = 1.0) -> dict[str, RunPart]:
    """``into`` with each of ``parts`` scaled by ``factor`` added to the part of its name (in place)."""
    for name, part in parts.items():
        share = part.scaled(factor)
        into[name] = into[name] + share if name in into else share
    return into


def design_sizes(design: Mapping) -> tuple[float, float, float]:
    """(|D_r|, m·B, |test|) of a design, in examples: its dataset spec's
    (:meth:`unlearn_audit.data.DatasetSpec.sizes`: text windows or question-answer pairs from the
    dataset's size model; images: the retain set capped at ``dataset_params.max_retain``).  A
    dataset without a size model (one of one's own by import path, a question-answer file whose
    count only the file knows) has NaN sizes: the cost model leaves it out and its jobs ask for
    ``runtime_minutes_per_run``."""
    pool = candidate_pool(design)
    spec = dataset_spec(design["dataset"])
    if spec is None:
        return math.nan, pool, math.nan
    return spec.sizes(design, pool)


def base_training_images(design: Mapping) -> float:
    """One base model's training: ``epochs`` passes over D_r and the half of the pool that a sign
    vector keeps (Algorithm 2, step 3)."""
    n_retain, pool, _ = design_sizes(design)
    return design["train"]["epochs"] * (n_retain + pool / 2)


def _spec(method: str):
    from ....unlearning import method_spec

    return method_spec(method)


def unlearning_images(method: str, p, n_retain: float, n_forget: float) -> float:
    """One unlearning run's noiseless part (the noise release is free), in training-image
    equivalents: its method spec's work (:attr:`unlearn_audit.unlearning.spec.MethodSpec.work`);
    NaN without a retain size (:func:`design_sizes`)."""
    if not math.isfinite(n_retain):
        return math.nan
    return _spec(method).work(p, n_retain, n_forget)[1]


def unlearning_steps(method: str, p, n_retain: float, n_forget: float) -> float:
    """The steps (passes over a batch, each with a fixed cost beside its images,
    :func:`.throughput.read_step_costs`) of one unlearning run's noiseless part: its method spec's
    work (an optimizer step counts each forward and backward pass it takes; a Hessian–vector product
    counts ``HVP`` steps); NaN without a retain size (:func:`design_sizes`)."""
    if not math.isfinite(n_retain):
        return math.nan
    return _spec(method).work(p, n_retain, n_forget)[0]


def hessian_vector_products(method: str, p) -> tuple[float, float]:
    """(Hessian–vector products, their examples) of one unlearning run (its method spec's; the
    Hessian method's LiSSA products, G.4).  Counted in :func:`unlearning_steps` and
    :func:`unlearning_images` at ``HVP`` training units each, and priced at their own measured cost
    where one is recorded (:func:`run_parts`)."""
    return _spec(method).hessian_vector_products(p)


def run_parts(method: str, p, n_retain: float) -> dict[str, RunPart]:
    """The parts of one unlearning run's noiseless part that a per-unit row of the device can price
    on its own, by the case of ``benchmarks/gpu_cases.py`` that measures them (its method spec's
    ``parts``: the Hessian method's Hessian–vector products, ``hvp``; model clipping's noisy steps,
    ``noisy``; rewind-to-delete's full-batch micro-batches, ``r2d``); none without a retain size."""
    if not math.isfinite(n_retain) or n_retain <= 0:
        return {}
    return _spec(method).run_parts(p, n_retain)


def base_training_steps(design: Mapping) -> float:
    """One base model's training steps: ``epochs`` passes over D_r and half the pool at the batch size."""
    n_retain, pool, _ = design_sizes(design)
    if not math.isfinite(n_retain + pool):
        return math.nan
    return float(design["train"]["epochs"] * math.ceil((n_retain + pool / 2) / design["train"]["batch_size"]))


def retrain_work(design: Mapping) -> tuple[float, float]:
    """(optimizer steps, training-image equivalents) of the one retrained model A(D_r) of a design
    with a *Retrain* control: ``epochs`` passes over D_r alone; NaN without a retain size."""
    n_retain = design_sizes(design)[0]
    if not math.isfinite(n_retain):
        return math.nan, math.nan
    epochs = design["train"]["epochs"]
    return float(epochs * math.ceil(n_retain / design["train"]["batch_size"])), epochs * n_retain


def _method_params(exp: Mapping):
    """An experiment's validated hyperparameters, read by attribute (an import-path method with plain
    dict params as a namespace)."""
    from ....unlearning import make_params

    p = make_params(exp["method"], exp.get("params", {}))
    return SimpleNamespace(**p) if isinstance(p, dict) else p


def unlearning_run_steps(design: Mapping, experiments: Sequence[Mapping]) -> list[float]:
    """Per experiment of a group sharing its noiseless part: its share of the run's optimizer steps
    (scoring's forward passes, in chunks of a thousand examples, are left to the images)."""
    n_retain, pool, _ = design_sizes(design)
    out = []
    for exp in experiments:
        p = _method_params(exp)
        out.append(unlearning_steps(exp["method"], p, n_retain, pool / 2) / len(experiments))
    return out


def evaluation_metrics_work(design: Mapping) -> tuple[float, float, dict[str, RunPart]]:
    """(steps, training-image equivalents, parts) that the dataset's own metrics add to one
    evaluation run of one experiment (its spec's ``evaluation_counts``,
    :class:`unlearn_audit.data.sizes.EvaluationCounts`: TOFU's on a question-answer design), zeros
    for a dataset without them.  Greedy decoding is the part ``decode``: a unit is one token step over
    a batch of prompts (a forward-only step, its examples the batch's pairs), which a per-unit row
    prices where recorded (``benchmarks/gpu_cases.py decode``); a decoded pair's tokens add one
    forward pass of a sequence, and each alternative answer one.  NaN where the sizes are unknown."""
    spec = dataset_spec(design["dataset"])
    if spec is None or spec.evaluation_counts is None:
        return 0.0, 0.0, {}
    counts = spec.evaluation_counts(design, candidate_pool(design))
    if not math.isfinite(counts.decoded):  # sizes only the data know: priced as the run is
        return math.nan, math.nan, {}
    decode = RunPart(units=counts.decode_steps, examples=counts.decode_examples, steps=FORWARD * counts.decode_steps,
                     images=FORWARD * counts.decoded)
    return decode.steps, decode.images + FORWARD * counts.alternates, {"decode": decode}


def unlearning_run_images(design: Mapping, experiments: Sequence[Mapping]) -> list[tuple[float, float, float]]:
    """For one run of a group of experiments that share their noiseless part (each an experiment's
    config): per experiment, (its share of the noiseless unlearning, the scoring of a calibration
    run, the scoring of an evaluation run).  Scoring scores the pool once, and once more per
    checkpoint step; an evaluation run also measures retain and test accuracy, and the dataset's own
    metrics (:func:`evaluation_metrics_work`)."""
    n_retain, pool, n_test = design_sizes(design)
    metrics = evaluation_metrics_work(design)[1]
    out = []
    for exp in experiments:
        p = _method_params(exp)
        shared = unlearning_images(exp["method"], p, n_retain, pool / 2) / len(experiments)
        calib = FORWARD * (1 + len(exp.get("params", {}).get("checkpoint_steps", []))) * pool
        out.append((shared, calib, calib + FORWARD * (n_retain + n_test) + metrics))
    return out


class RunWork(NamedTuple):
    """One run of a group of experiments sharing their noiseless part (:func:`unlearning_run_work`)."""

    steps: float                  # a calibration run's steps
    calib_images: float
    eval_images: float
    parts: dict[str, RunPart]     # a calibration run's parts that a per-unit row can price
    eval_steps: float             # an evaluation run's: the steps and the dataset's own metrics'
    eval_parts: dict[str, RunPart]


def unlearning_run_work(design: Mapping, experiments: Sequence[Mapping]) -> RunWork:
    """(steps, images of a calibration run, images of an evaluation run, the parts a per-unit row can
    price, an evaluation run's steps and parts) of one run of a group of experiments sharing their
    noiseless part: :func:`unlearning_run_steps` and :func:`unlearning_run_images` summed over the
    group, the parts of its noiseless part (:func:`run_parts`, counted in the steps and images), and
    for an evaluation run the dataset's own metrics of each experiment's model
    (:func:`evaluation_metrics_work`)."""
    per_run = unlearning_run_images(design, experiments)
    steps, parts = sum(unlearning_run_steps(design, experiments)), group_run_parts(design, experiments)
    metric_steps, _, metric_parts = evaluation_metrics_work(design)
    eval_parts = add_parts(dict(parts), metric_parts, len(experiments))
    return RunWork(steps, sum(shared + calib for shared, calib, _ in per_run), sum(shared + evals for shared, _, evals in per_run), parts,
                   steps + len(experiments) * metric_steps, eval_parts)


def group_run_parts(design: Mapping, experiments: Sequence[Mapping]) -> dict[str, RunPart]:
    """The parts a per-unit row can price (:func:`run_parts`) of one run of a group of experiments
    sharing their noiseless part, each experiment's an equal share."""
    n_retain = design_sizes(design)[0]
    parts: dict[str, RunPart] = {}
    for exp in experiments:
        add_parts(parts, run_parts(exp["method"], _method_params(exp), n_retain), 1 / len(experiments))
    return parts


def takes_training_steps(method: str | None) -> bool:
    """Whether a job of ``method``'s runs (None: a base training) takes training steps (its method
    spec's ``training_loop``), the first of which imports ``torch._inductor`` and ``torch._dynamo``
    once a job process (the library's loops switch deterministic kernels on by
    ``torch.use_deterministic_algorithms``; the language-model methods step ``torch.optim``)."""
    return method is None or _spec(method).training_loop


def training_k(design: Mapping, batched: int | None = None) -> int:
    """How many base models of the design train at once: ``batched`` for a design whose model trains
    as one grouped network (its model spec's ``grouped``) or else its ``models_per_group``."""
    from ....model_specs import model_spec

    spec = model_spec(design["model"]["name"])
    return int(batched if batched and spec is not None and spec.grouped else design.get("models_per_group", 1))


def unlearning_k(design: Mapping, experiment: Mapping, batched: int | None = None) -> int:
    """How many of an experiment's runs unlearn at once: for a method that can be grouped (its spec's
    ``grouped``), ``batched`` or else its design's ``unlearn_models_per_group``; 1 for the others."""
    if not _spec(experiment["method"]).grouped:
        return 1
    return int(batched or design.get("unlearn_models_per_group", 1))
