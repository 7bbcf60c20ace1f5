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

__all__ = ["FORWARD", "HVP", "design_sizes", "base_training_images", "unlearning_images", "unlearning_run_images"]

FORWARD = 1.0 / 3.0   # a forward-only pass, in training-image units
HVP = 2.0             # a Hessian-vector product (double backward), in training-image units


def design_sizes(design: Mapping) -> tuple[float, float, float]:
    """(|D_r|, m·B, |test|) of a design, in examples (text: windows); NaN where only the data tell
    (a Shakespeare design without ``max_retain_windows`` / ``max_eval_windows``, or with B per role)."""
    pool = math.nan if design.get("batch_size") is None else float(int(design["m"]) * int(design["batch_size"]))
    if design["dataset"] == "shakespeare":
        dp = design.get("dataset_params", {})
        return float(dp.get("max_retain_windows", math.nan)), pool, float(dp.get("max_eval_windows", math.nan))
    spec = DATASETS.get(design["dataset"])
    if spec is None or spec.train_portion is None or spec.n_test is None:
        raise ValueError(f"no size model for dataset {design['dataset']!r}")
    return spec.train_portion - pool, pool, spec.n_test


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
