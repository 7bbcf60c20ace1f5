"""Shared helpers of the regime scripts (analysis/regime/): one core, data and base models via the library.

Nothing here changes the library: data come from unlearn_audit.pipeline.nn.prepare_data with the
design's config and seed, base models from pipeline.nn_runs' own base_training_setup/training_set,
i.e. exactly what `snakemake` trains for the same design and sign vector.
"""
from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
    os.environ[_v] = "1"

import time
from pathlib import Path

import numpy as np
import torch
import yaml

torch.set_num_threads(1)

from unlearn_audit.data import load_audit_data  # noqa: E402
from unlearn_audit.models import build_model  # noqa: E402
from unlearn_audit.pipeline import nn as pnn  # noqa: E402
from unlearn_audit.pipeline import nn_runs  # noqa: E402
from unlearn_audit.pipeline.plan.experiment import design_seed  # noqa: E402
from unlearn_audit.scores import model_scores  # noqa: E402
from unlearn_audit.training import train_model  # noqa: E402
from unlearn_audit.unlearning import unlearn  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def load_config(path=ROOT / "config" / "config.yaml") -> dict:
    with open(path) as f:
        cfg = yaml.safe_load(f)
    return cfg


def design_data(cfg: dict, design: str, workdir: Path):
    """The design's audit data, prepared as the workflow's nn_prepare_data rule does."""
    dcfg = cfg["nn"]["designs"][design]
    workdir.mkdir(parents=True, exist_ok=True)
    data_path = workdir / f"{design}.npz"
    if not data_path.exists():
        pnn.prepare_data(design, dcfg, design_seed(dcfg, int(cfg["seed"])), str(ROOT / cfg.get("resources_dir", "resources")),
                         data_path, workdir / f"{design}_split.parquet")
    return load_audit_data(data_path)


def train_base(cfg: dict, design: str, data, signs: np.ndarray, cache: Path | None = None):
    """A(D(S)) from the design's fixed x0 and order (nn_runs.train, models_per_group 1); (model, seconds)."""
    dcfg = cfg["nn"]["designs"][design]
    mcfg = dict(dcfg["model"])
    model = build_model(mcfg["name"], **mcfg.get("params", {}))
    if cache is not None and cache.exists():
        model.load_state_dict(torch.load(cache, map_location="cpu", weights_only=True))
        return model, 0.0
    x0, tcfg, orders = nn_runs.base_training_setup(design, dcfg, design_seed(dcfg, int(cfg["seed"])), data)
    x, y, ids = nn_runs.training_set(data, signs)
    model.load_state_dict(x0)
    t0 = time.perf_counter()
    train_model(model, x, y, ids, orders, tcfg, progress=False)
    sec = time.perf_counter() - t0
    if cache is not None:
        cache.parent.mkdir(parents=True, exist_ok=True)
        torch.save(model.state_dict(), cache)
    return model, sec


def acc(model, x, y) -> float:
    if len(x) == 0:
        return float("nan")
    return float(np.mean(model_scores(model, x, y, kind="image")["correct"]))


def accuracies(model, data, signs) -> dict:
    fx, fy = nn_runs.forget_set(data, signs)
    return {"retain": acc(model, data.retain_x, data.retain_y), "forget": acc(model, fx, fy),
            "test": acc(model, data.test_x, data.test_y)}


def run_unlearn(method: str, model, data, signs, params: dict, seed: int, monitor=None):
    """unlearn(method, ...) as nn_runs.unlearn calls it; (unlearned model, seconds)."""
    fx, fy = nn_runs.forget_set(data, signs)
    retain = (torch.as_tensor(data.retain_x), torch.as_tensor(data.retain_y))
    forget = (torch.as_tensor(fx), torch.as_tensor(fy))
    gen = torch.Generator().manual_seed(int(seed))
    t0 = time.perf_counter()
    out = unlearn(method, model, retain, forget, params, gen, monitor=monitor)
    return out, time.perf_counter() - t0
