"""What one neural-network run costs, in *training-image equivalents* (one forward and backward pass of
one image; a forward-only pass counts 1/3, a Hessian–vector product 2) and in *steps* (forward and
backward passes over a batch, each with a step's fixed cost; a forward-only pass counts 1/3), from a
design's data sizes and a method's hyperparameters.  Read by the cost model (:mod:`.hours`,
``unlearn-audit plan``) and by the jobs' runtime requests (:class:`..pricing.ChunkPricing`), which
price an unlearning run relative to a base training.  Torch-free; no plan import (the plan imports
this module).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Mapping, Sequence

from ....data import DATASETS

__all__ = ["FORWARD", "HVP", "RunPart", "design_sizes", "charlstm_training_flops", "base_training_images", "base_training_steps", "retrain_work",
           "unlearning_images", "unlearning_steps", "unlearning_run_images", "unlearning_run_steps", "unlearning_run_work", "hessian_vector_products",
           "run_parts", "group_run_parts", "NO_TRAINING_LOOP", "takes_training_steps", "training_k", "unlearning_k"]

FORWARD = 1.0 / 3.0   # a forward-only pass, in training-image units
HVP = 2.0             # a Hessian-vector product (double backward), in training-image units


@dataclass(frozen=True)
class RunPart:
    """Work of a run that a per-unit row prices on its own (:func:`.throughput.read_unit_costs`):
    ``units`` (Hessian–vector products, noisy steps, micro-batches) over ``examples`` rows, counted
    in the run's steps and training-image equivalents as ``steps`` and ``images``."""

    units: float
    examples: float
    steps: float
    images: float

    def __add__(self, other: "RunPart") -> "RunPart":
        return RunPart(self.units + other.units, self.examples + other.examples, self.steps + other.steps, self.images + other.images)

    def scaled(self, factor: float) -> "RunPart":
        return RunPart(self.units * factor, self.examples * factor, self.steps * factor, self.images * factor)


#: App. D.2's Shakespeare at its 300 roles: training characters of the retain roles (D_r) and of the
#: forget roles (D_f), each role's blocks split 80/10/10 into train/validation/test.
SHAKESPEARE_ROLES = 300
SHAKESPEARE_RETAIN_CHARACTERS = 1_221_363
SHAKESPEARE_FORGET_CHARACTERS = 135_300


def _shakespeare_sizes(design: Mapping, pool: float) -> tuple[float, float, float]:
    """Windows of a Shakespeare design from App. D.2's character counts (a window starts at every
    ``stride``-th character, so windows ≈ characters / stride), scaled by ``num_roles`` / 300 and
    capped by ``max_retain_windows`` / ``max_eval_windows``; the pool is m·B where B is given, else
    every window of the forget chunks.  An estimate: the counts are the paper's corpus, not the data."""
    dp = design.get("dataset_params", {})
    roles = dp.get("num_roles", SHAKESPEARE_ROLES)
    scale = (roles or SHAKESPEARE_ROLES) / SHAKESPEARE_ROLES
    stride = int(dp.get("stride", 1))
    forget_stride, eval_stride = int(dp.get("forget_stride") or stride), int(dp.get("eval_stride") or stride)
    test_characters = (SHAKESPEARE_RETAIN_CHARACTERS + SHAKESPEARE_FORGET_CHARACTERS) / 8  # 10 % against 80 %
    retain = SHAKESPEARE_RETAIN_CHARACTERS * scale / stride
    test = test_characters * scale / eval_stride
    if dp.get("max_retain_windows"):
        retain = min(retain, float(dp["max_retain_windows"]))
    if dp.get("max_eval_windows"):
        test = min(test, float(dp["max_eval_windows"]))
    if math.isnan(pool):
        pool = SHAKESPEARE_FORGET_CHARACTERS * scale / forget_stride
    return retain, pool, test


def _qa_sizes(design: Mapping, pool: float) -> tuple[float, float, float]:
    """Pairs of a question-answer design: the synthetic source's ``n_entities`` × ``pairs_per_entity``,
    or TOFU's 200 authors × 20 for a file in ``format: tofu`` (its ``full.json``); the retain set is
    every entity but the m candidates and the held-out ones, the test set the test entities' pairs.
    NaN for another file (only the file knows its count)."""
    from ....data.qa import QA_DEFAULTS, TOFU_ENTITIES, TOFU_PAIRS_PER_ENTITY

    dp = {**QA_DEFAULTS, **design.get("dataset_params", {})}
    if dp["source"] == "synthetic":
        entities, per_entity = int(dp["n_entities"]), int(dp["pairs_per_entity"])
    elif dp["format"] == "tofu":
        entities, per_entity = TOFU_ENTITIES, TOFU_PAIRS_PER_ENTITY
    else:
        return math.nan, pool, math.nan
    held_out = int(dp["n_val_entities"]) + int(dp["n_test_entities"])
    retain = max(entities - int(design["m"]) - held_out, 0) * per_entity  # too few entities: the config check says so
    return float(retain), pool, float(int(dp["n_test_entities"]) * per_entity)


def design_sizes(design: Mapping) -> tuple[float, float, float]:
    """(|D_r|, m·B, |test|) of a design, in examples (text: windows, :func:`_shakespeare_sizes`, or
    question-answer pairs, :func:`_qa_sizes`; images: the retain set capped at
    ``dataset_params.max_retain``).  A dataset without a size model (one of one's own by import path,
    a question-answer file whose count only the file knows) has NaN sizes: the cost model leaves it
    out and its jobs ask for ``runtime_minutes_per_run``."""
    pool = math.nan if design.get("batch_size") is None else float(int(design["m"]) * int(design["batch_size"]))
    if design["dataset"] == "shakespeare":
        return _shakespeare_sizes(design, pool)
    if design["dataset"] == "qa":
        return _qa_sizes(design, pool)
    spec = DATASETS.get(design["dataset"])
    if spec is None or spec.train_portion is None or spec.n_test is None:
        return math.nan, pool, math.nan
    retain = spec.train_portion - pool
    max_retain = (design.get("dataset_params") or {}).get("max_retain")
    return (min(retain, float(max_retain)) if max_retain else retain), pool, spec.n_test


def charlstm_training_flops(hidden: int, embed: int, vocab: int, layers: int, window: int) -> float:
    """FLOPs of one training window (forward + backward ≈ 3 × forward) of the CharLSTM (App. D.2): at
    each of the ``window`` positions, every layer's four gates (input and recurrent matrices) and the
    read-out to the vocabulary (the embedding is a lookup)."""
    per_position = sum(4 * hidden * ((embed if layer == 0 else hidden) + hidden) for layer in range(layers)) + hidden * vocab
    return 3 * 2 * window * per_position


def base_training_images(design: Mapping) -> float:
    """One base model's training: ``epochs`` passes over D_r and the half of the pool that a sign
    vector keeps (Algorithm 2, step 3)."""
    n_retain, pool, _ = design_sizes(design)
    return design["train"]["epochs"] * (n_retain + pool / 2)


def _ida_combined_steps(p, n_retain: float) -> float:
    """IDA's combined steps: every (q+1)-th step of its ``forget_epochs`` epochs over the retain set (G.5)."""
    return math.floor(p.forget_epochs * math.ceil(n_retain / p.batch_size) / (p.q + 1))


def _forget_rows(batches: int, batch_size: int, n_forget: float) -> float:
    """Rows of ``batches`` mini-batches cycling through D_f(S) in passes of ceil(n/batch_size) batches."""
    if not n_forget:
        return 0.0
    per_pass = math.ceil(n_forget / batch_size)
    full, rest = divmod(batches, per_pass)
    return full * n_forget + min(rest * batch_size, n_forget)


def _passes_over_forget(p) -> bool:
    """Whether a method's ``epochs`` pass over D_f(S) alone (the language-model methods:
    gradient ascent, gradient difference, NPO, SimNPO), not over D_r."""
    from ....unlearning.params import GradientAscentParams

    return isinstance(p, GradientAscentParams)


def _baseline_work(method: str, p, n_retain: float, n_forget: float) -> tuple[float, float] | None:
    """(steps, training-image equivalents) of one run of an image-unlearning baseline (``neggrad_plus``,
    ``scrub``, ``random_labels``, ``salun``, ``bad_teacher``, ``ssd``); None for another method.  A
    step counts each pass it takes over a batch (NegGrad+'s retain and forget batches: two; a
    teacher's forward pass: ``FORWARD``, SCRUB's one teacher, Bad Teacher's two, each on its part of
    the batch), and a teacher's forward pass of a row ``FORWARD`` image; SalUn's saliency and SSD's
    importances, gradients of rows, count as training images (and their batches as steps)."""
    if method == "neggrad_plus":  # a retain batch and the next forget batch a step, each its own pass
        steps = p.epochs * math.ceil(n_retain / p.batch_size)
        return float(steps * (2 if n_forget else 1)), p.epochs * n_retain + _forget_rows(steps, p.forget_batch_size or p.batch_size, n_forget)
    if method == "scrub":  # max epochs over D_f(S), min epochs over D_r; the teacher sees every batch
        max_steps = p.max_steps * math.ceil(n_forget / (p.forget_batch_size or p.batch_size)) if n_forget else 0
        return (1.0 + FORWARD) * (p.epochs * math.ceil(n_retain / p.batch_size) + max_steps), (1.0 + FORWARD) * (p.epochs * n_retain + p.max_steps * n_forget)
    if method in ("random_labels", "salun"):  # passes over D_r ∪ D_f(S); SalUn's saliency first
        rows = n_retain + n_forget
        steps, images = p.epochs * math.ceil(rows / p.batch_size), p.epochs * rows
        if method == "salun" and n_forget:
            steps, images = steps + math.ceil(n_forget / p.batch_size), images + n_forget
        return float(steps), float(images)
    if method == "bad_teacher":  # passes over the retain subset ∪ D_f(S), each row through one teacher, each teacher a pass
        rows = p.retain_rows(n_retain) + n_forget
        teachers = 2 if p.retain_rows(n_retain) and n_forget else 1
        return (1.0 + teachers * FORWARD) * p.epochs * math.ceil(rows / p.batch_size), (1.0 + FORWARD) * p.epochs * rows
    if method == "ssd":  # the importances on D_r ∪ D_f(S) and on D_f(S); no training
        if not n_forget:
            return 0.0, 0.0
        return float(math.ceil((n_retain + n_forget) / p.batch_size) + math.ceil(n_forget / p.batch_size)), n_retain + 2.0 * n_forget
    return None


def unlearning_images(method: str, p, n_retain: float, n_forget: float) -> float:
    """One unlearning run's noiseless part (the noise release is free); NaN without a retain size
    (:func:`design_sizes`).  A language-model method passes over D_f(S), with NPO's reference
    model's forward pass of each forget pair and, where ``retain_weight`` > 0, a retain batch of
    ``batch_size`` pairs a step."""
    if not math.isfinite(n_retain):
        return math.nan
    if _passes_over_forget(p):
        steps = unlearning_steps(method, p, n_retain, n_forget)
        retain_rows = steps * min(p.batch_size, n_retain) if getattr(p, "retain_weight", 0.0) > 0 else 0.0
        return p.epochs * n_forget * (1.0 + (FORWARD if method == "npo" else 0.0)) + retain_rows
    baseline = _baseline_work(method, p, n_retain, n_forget)
    if baseline is not None:
        return baseline[1]
    if method == "hessian":
        return n_retain + HVP * p.s1 * p.s2 * p.batch_size
    if method == "rewind_to_delete":
        return (p.K + p.lipschitz_samples + 1) * n_retain
    if method == "no_unlearning":  # the controls: scoring only
        return 0.0
    if method == "ida":  # E_f interleaved epochs over D_r, a forget mini-batch on every (q+1)-th step, then the plain epochs
        return (p.forget_epochs + p.epochs) * n_retain + _forget_rows(_ida_combined_steps(p, n_retain), p.forget_batch_size or p.batch_size, n_forget)
    epochs = getattr(p, "epochs", 1)
    return epochs * n_retain + getattr(p, "ascent_epochs", 0) * n_forget


def unlearning_steps(method: str, p, n_retain: float, n_forget: float) -> float:
    """The steps (passes over a batch, each with a fixed cost beside its images,
    :func:`.throughput.read_step_costs`) of one unlearning run's noiseless part: an optimizer step
    counts each forward and backward pass it takes (IDA's combined step two: its retain and forget
    batches; the baselines' :func:`_baseline_work`); a Hessian–vector product counts ``HVP``
    steps; NaN without a retain size (:func:`design_sizes`)."""
    if not math.isfinite(n_retain):
        return math.nan
    baseline = _baseline_work(method, p, n_retain, n_forget)
    if baseline is not None:
        return baseline[0]
    if method == "hessian":
        return math.ceil(n_retain / p.grad_batch_size) + HVP * p.s1 * p.s2
    if method == "rewind_to_delete":
        return (p.K + p.lipschitz_samples + 1) * math.ceil(n_retain / p.micro_batch)
    if method == "no_unlearning":
        return 0.0
    batch = getattr(p, "batch_size", None)
    if not batch:  # a method of the user's without a batch size: one step a pass
        return float(getattr(p, "epochs", 1))
    if _passes_over_forget(p):
        return float(p.epochs * math.ceil(n_forget / batch)) if n_forget else 0.0
    steps = getattr(p, "epochs", 1) * math.ceil(n_retain / batch)
    if method == "ida":  # the interleaved epochs, each combined step a second pass over its forget batch
        steps += p.forget_epochs * math.ceil(n_retain / batch) + (_ida_combined_steps(p, n_retain) if n_forget and p.lam > 0 else 0)
    if getattr(p, "ascent_epochs", 0) and n_forget:
        steps += p.ascent_epochs * math.ceil(n_forget / (getattr(p, "ascent_batch_size", None) or batch))
    return float(steps)


def hessian_vector_products(method: str, p) -> tuple[float, float]:
    """(Hessian–vector products, their examples) of one unlearning run: LiSSA's s1·s2 products over
    minibatches of ``batch_size`` (G.4); none for the other methods.  Counted in
    :func:`unlearning_steps` and :func:`unlearning_images` at ``HVP`` training units each, and priced
    at their own measured cost where one is recorded (:func:`run_parts`)."""
    if method == "hessian":
        return float(p.s1 * p.s2), float(p.s1 * p.s2 * p.batch_size)
    return 0.0, 0.0


def _noisy_part(p, n_retain: float) -> RunPart | None:
    """Model clipping's T noisy steps (App. G.1, Eq. 14) at ``noisy_batch_size``: T of the budget's
    ``epochs · ceil(n/batch_size)`` steps, each counted as a fine-tuning step of n/ceil(n/batch_size)
    images; None where T is not known (the accountant's T beyond the budget)."""
    n = int(round(n_retain))
    total = p.total_steps(n)
    noisy = p.noisy_step_count(total)
    if noisy is None or not noisy:
        return None
    noisy = min(noisy, total)
    return RunPart(float(noisy), noisy * n / math.ceil(n / p.noisy_batch_size), float(noisy), noisy * n / p.steps_per_epoch(n))


def run_parts(method: str, p, n_retain: float) -> dict[str, RunPart]:
    """The parts of one unlearning run's noiseless part that a per-unit row of the device can price
    on its own, by the case of ``benchmarks/gpu_cases.py`` that measures them: the Hessian method's
    s1·s2 Hessian–vector products over minibatches (``hvp``, G.4), model clipping's noisy steps
    (``noisy``, :func:`_noisy_part`) and rewind-to-delete's K + ``lipschitz_samples`` + 1 full-batch
    gradients in micro-batches of ``micro_batch`` (``r2d``, G.2); none for the other methods or
    without a retain size."""
    if not math.isfinite(n_retain) or n_retain <= 0:
        return {}
    if method == "hessian":
        products, examples = hessian_vector_products(method, p)
        return {"hvp": RunPart(products, examples, HVP * products, HVP * examples)}
    if method == "model_clipping":
        part = _noisy_part(p, n_retain)
        return {"noisy": part} if part is not None else {}
    if method == "rewind_to_delete":
        gradients = p.K + p.lipschitz_samples + 1
        micro = float(gradients * math.ceil(n_retain / p.micro_batch))
        return {"r2d": RunPart(micro, gradients * n_retain, micro, gradients * n_retain)}
    return {}


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


def unlearning_run_images(design: Mapping, experiments: Sequence[Mapping]) -> list[tuple[float, float, float]]:
    """For one run of a group of experiments that share their noiseless part (each an experiment's
    config): per experiment, (its share of the noiseless unlearning, the scoring of a calibration
    run, the scoring of an evaluation run).  Scoring scores the pool once, and once more per
    checkpoint step; an evaluation run also measures retain and test accuracy."""
    n_retain, pool, n_test = design_sizes(design)
    out = []
    for exp in experiments:
        p = _method_params(exp)
        shared = unlearning_images(exp["method"], p, n_retain, pool / 2) / len(experiments)
        calib = FORWARD * (1 + len(exp.get("params", {}).get("checkpoint_steps", []))) * pool
        out.append((shared, calib, calib + FORWARD * (n_retain + n_test)))
    return out


def unlearning_run_work(design: Mapping, experiments: Sequence[Mapping]) -> tuple[float, float, float, dict[str, RunPart]]:
    """(steps, images of a calibration run, images of an evaluation run, the parts a per-unit row can
    price) of one run of a group of experiments sharing their noiseless part:
    :func:`unlearning_run_steps` and :func:`unlearning_run_images` summed over the group, and the
    parts of its noiseless part (:func:`run_parts`, counted in the steps and images)."""
    per_run = unlearning_run_images(design, experiments)
    return (sum(unlearning_run_steps(design, experiments)), sum(shared + calib for shared, calib, _ in per_run),
            sum(shared + evals for shared, _, evals in per_run), group_run_parts(design, experiments))


def group_run_parts(design: Mapping, experiments: Sequence[Mapping]) -> dict[str, RunPart]:
    """The parts a per-unit row can price (:func:`run_parts`) of one run of a group of experiments
    sharing their noiseless part, each experiment's an equal share."""
    n_retain = design_sizes(design)[0]
    parts: dict[str, RunPart] = {}
    for exp in experiments:
        for name, part in run_parts(exp["method"], _method_params(exp), n_retain).items():
            share = part.scaled(1 / len(experiments))
            parts[name] = parts[name] + share if name in parts else share
    return parts


#: The built-in methods whose runs take no step of the library's training loops (``training.sgd``, the
#: grouped and vmapped loops, model clipping's noisy phase, SSD's and SalUn's gradients): the
#: controls' scoring, the Hessian method's LiSSA products and rewind-to-delete's full-batch gradients.
NO_TRAINING_LOOP = ("no_unlearning", "hessian", "rewind_to_delete")


def takes_training_steps(method: str | None) -> bool:
    """Whether a job of ``method``'s runs (None: a base training) takes training steps, the first of
    which imports ``torch._inductor`` and ``torch._dynamo`` once a job process (the library's loops
    switch deterministic kernels on by ``torch.use_deterministic_algorithms``; the language-model
    methods step ``torch.optim``)."""
    return method not in NO_TRAINING_LOOP


def training_k(design: Mapping, batched: int | None = None) -> int:
    """How many base models of the design train at once: ``batched`` for a TinyNet design (the grouped
    network's model) or else its ``models_per_group``."""
    return int(batched if batched and design["model"]["name"] == "tinynet" else design.get("models_per_group", 1))


def unlearning_k(design: Mapping, experiment: Mapping, batched: int | None = None) -> int:
    """How many of an experiment's runs unlearn at once: for a method that can be grouped, ``batched``
    or else its design's ``unlearn_models_per_group``; 1 for the others."""
    from ....unlearning.params import BUILTIN_GROUPED

    if experiment["method"] not in BUILTIN_GROUPED:
        return 1
    return int(batched or design.get("unlearn_models_per_group", 1))
