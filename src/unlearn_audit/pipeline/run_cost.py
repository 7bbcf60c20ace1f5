"""What one neural-network run costs, in *training-image equivalents* (one forward and backward pass of
one image; a forward-only pass counts 1/3, a Hessian–vector product 2), from a design's data sizes
and a method's hyperparameters.  Read by the cost model (:mod:`.cost`, ``unlearn-audit plan``) and by
the jobs' runtime requests (:class:`.plan.resources.ResourcesPlan`), which price an unlearning run
relative to a base training.  Torch-free; no plan import (the plan imports this module).
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Mapping, Sequence

from ..data import DATASETS

__all__ = ["FORWARD", "HVP", "design_sizes", "charlstm_training_flops", "base_training_images", "unlearning_images", "unlearning_run_images"]

FORWARD = 1.0 / 3.0   # a forward-only pass, in training-image units
HVP = 2.0             # a Hessian-vector product (double backward), in training-image units


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


def design_sizes(design: Mapping) -> tuple[float, float, float]:
    """(|D_r|, m·B, |test|) of a design, in examples (text: windows; :func:`_shakespeare_sizes`;
    images: the retain set capped at ``dataset_params.max_retain``)."""
    pool = math.nan if design.get("batch_size") is None else float(int(design["m"]) * int(design["batch_size"]))
    if design["dataset"] == "shakespeare":
        return _shakespeare_sizes(design, pool)
    spec = DATASETS.get(design["dataset"])
    if spec is None or spec.train_portion is None or spec.n_test is None:
        raise ValueError(f"no size model for dataset {design['dataset']!r}")
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


def unlearning_images(method: str, p, n_retain: float, n_forget: float) -> float:
    """One unlearning run's noiseless part (the noise release is free)."""
    if method == "hessian":
        return n_retain + HVP * p.s1 * p.s2 * p.batch_size
    if method == "rewind_to_delete":
        return (p.K + p.lipschitz_samples + 1) * n_retain
    if method == "no_unlearning":  # the controls: scoring only
        return 0.0
    epochs = getattr(p, "epochs", 1)
    forget_epochs = getattr(p, "ascent_epochs", 0) + getattr(p, "forget_epochs", 0)
    return epochs * n_retain + forget_epochs * n_forget


def unlearning_run_images(design: Mapping, experiments: Sequence[Mapping]) -> list[tuple[float, float, float]]:
    """For one run of a group of experiments that share their noiseless part (each an experiment's
    config): per experiment, (its share of the noiseless unlearning, the scoring of a calibration
    run, the scoring of an evaluation run).  Scoring scores the pool once, and once more per
    checkpoint step; an evaluation run also measures retain and test accuracy."""
    from ..unlearning import make_params

    n_retain, pool, n_test = design_sizes(design)
    out = []
    for exp in experiments:
        p = make_params(exp["method"], exp.get("params", {}))
        p = SimpleNamespace(**p) if isinstance(p, dict) else p  # an import-path method with plain dict params
        shared = unlearning_images(exp["method"], p, n_retain, pool / 2) / len(experiments)
        calib = FORWARD * (1 + len(exp.get("params", {}).get("checkpoint_steps", []))) * pool
        out.append((shared, calib, calib + FORWARD * (n_retain + n_test)))
    return out
