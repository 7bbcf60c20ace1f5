"""Neural-network audits, one function per workflow rule (DESIGN §3).

``workflow/rules/nn.smk`` → ``workflow/scripts/nn_<step>.py`` → the function of the same name here:

* :func:`prepare_data` (``nn_prepare_data``) — the dataset split of a design (retain set, candidate
  forget pool cut into m batches of size B, validation and test sets);
* :func:`sample_signs` (``nn_sample_signs``) — every sign vector of the design, calibration and
  evaluation phases from disjoint streams;
* :func:`train` (``nn_train_*``) — one base model per sign vector from the design's fixed initial
  model x0 and fixed shuffle order π (the threat model of Section 3.4), shared by every experiment
  on the design;
* :func:`unlearn` (``nn_unlearn_*``) — the unlearned model of each run and its per-example scores
  on the candidate forget pool, plus retain/forget/test accuracy;
* :func:`fit` (``nn_fit``) — per-example Gaussians from calibration runs only;
* :func:`audit` (``nn_audit``) — overlaps and bounds from evaluation runs only, the pre-registered
  cell marked;
* :func:`table` (``nn_table``) and :func:`figure_r` (``nn_figure_r``).

Chunked jobs read each run's index from its output path (:func:`~.paths.run_of_path`).

A *design* is everything that determines the base models (data, split, B, m, model, training
configuration, Γ, L); an *experiment* is an unlearning method with its hyperparameters on a
design.  Changing an experiment never retrains base models.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np
import pandas as pd
import torch

from .. import schemas
from .plan import preregistered_cell
from ..auditors.batchwise import audit_tables, fit_table
from ..auditors.runs import candidate_sign_table, sign_table
from ..data import load_audit_data, prepare_audit_data, save_audit_data, split_indices_frame
from ..io import read_concat, read_parquet, write_parquet
from ..models import build_model, initial_model
from ..report import write_table
from ..report.nn_figures import epsilon_vs_r_figure
from ..report.nn_tables import NN_TABLES
from ..scores import model_scores
from ..torch_utils import ProgressLog, save_state_dict
from ..seeds import seed_sequence, torch_seed
from ..training import TrainConfig, shuffle_orders, train_model
from ..stats.signs import sign_vector_rank, sign_vector_unrank
from ..unlearning import Monitor
from ..unlearning import unlearn as unlearn_model
from .paths import run_of_path
from .runtime import resolve_device

__all__ = [
    "prepare_data",
    "sample_signs",
    "train_config",
    "training_set",
    "forget_set",
    "train",
    "unlearn",
    "fit",
    "audit",
    "table",
    "figure_r",
]


def prepare_data(design: str, cfg: Mapping, root_seed: int, resources_dir: str, data_path, split_path) -> None:
    """Write the design's data split (.npz) and its index table (Parquet)."""
    seq = seed_sequence(root_seed, design, "data")
    data = prepare_audit_data(
        cfg["dataset"],
        split=cfg["split"],
        batch_size=None if cfg["batch_size"] is None else int(cfg["batch_size"]),
        m=int(cfg["m"]),
        forget_fraction=None,
        seed=int(seq.generate_state(1)[0]),
        resources_dir=resources_dir,
        **dict(cfg.get("dataset_params", {})),
    )
    save_audit_data(data, data_path)
    write_parquet(split_indices_frame(data), split_path)


def sample_signs(design: str, cfg: Mapping, root_seed: int, path) -> None:
    """Write every sign vector of the design (calibration and evaluation runs); a joint design has
    Γ = ``calibration_runs`` calibration runs per candidate S̃ ∈ S_m (Algorithm 3)."""
    make = candidate_sign_table if cfg.get("auditor", "batchwise") == "joint" else sign_table
    table = make(design, int(cfg["m"]), int(cfg["calibration_runs"]), int(cfg["evaluation_runs"]), root_seed)
    write_parquet(table, path, schemas.SIGNS)


def train_config(cfg: Mapping) -> TrainConfig:
    """TrainConfig from a config mapping, refusing unknown keys."""
    return TrainConfig.from_dict(cfg)


def training_set(data, signs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, example ids) of D(S) = D_r ∪ D_f(S); ids index the universe retain ‖ forget pool."""
    n_r = len(data.retain_x)
    chosen = np.flatnonzero(np.asarray(signs)[data.forget_batch] == 1)
    x = np.concatenate([data.retain_x, data.forget_x[chosen]])
    y = np.concatenate([data.retain_y, data.forget_y[chosen]])
    ids = np.concatenate([np.arange(n_r), n_r + chosen])
    return x, y, ids


def forget_set(data, signs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """D_f(S): only the sampled forget batches (never the whole candidate pool)."""
    chosen = np.flatnonzero(np.asarray(signs)[data.forget_batch] == 1)
    return data.forget_x[chosen], data.forget_y[chosen]


def _signs_for(table: pd.DataFrame, phase: str, runs: Sequence[int], signs_path) -> dict[int, np.ndarray]:
    """The sign vectors of ``runs`` in ``phase`` from the design's sign table (read from ``signs_path``)."""
    sub = table[(table.phase == phase) & table.run.isin(list(runs))]
    found = {int(r): np.asarray(s, dtype=np.int8) for r, s in zip(sub.run, sub.signs)}
    missing = sorted(set(runs) - set(found))
    if missing:
        raise ValueError(f"{signs_path}: no {phase} sign vectors for runs {missing}")
    return found


def _phase_runs(paths: Sequence[str]) -> tuple[str, list[int]]:
    """The one phase and the run indices of a chunk's per-run output paths."""
    parsed = [run_of_path(p) for p in paths]
    phases = {ph for ph, _ in parsed}
    if len(phases) != 1:
        raise ValueError(f"a chunk's outputs must all belong to one phase, got {sorted(phases)}")
    return phases.pop(), [run for _, run in parsed]


def train(design: str, cfg: Mapping, root_seed: int, data_path, signs_path, outputs: Sequence[str], device: str = "cpu") -> None:
    """Train the base model A(D(S)) of each output's run from the design's fixed x0 and π on ``device``.

    A joint design's outputs are candidate models (``…/base/candidate/<rank>.pt``), one per S̃ ∈ S_m:
    training is a deterministic function of S, so calibration and evaluation runs share them.
    Models are saved with CPU tensors, so they load anywhere.
    """
    phase, runs = _phase_runs(outputs)
    dev = resolve_device(device)
    data = load_audit_data(data_path)
    if phase == "candidate":  # a joint design: one model per candidate S̃, named by its rank
        signs = {rank: sign_vector_unrank(rank, int(cfg["m"])) for rank in runs}
    else:
        signs = _signs_for(read_parquet(signs_path, schemas.SIGNS), phase, runs, signs_path)
    model_cfg = dict(cfg["model"])
    x0 = initial_model(model_cfg["name"], model_cfg.get("params", {}), int(seed_sequence(root_seed, design, "init").generate_state(1)[0]))
    tcfg = train_config(cfg["train"])
    n_universe = len(data.retain_x) + len(data.forget_x)
    orders = shuffle_orders(n_universe, tcfg.epochs, int(seed_sequence(root_seed, design, "order").generate_state(1)[0]))
    log = ProgressLog(len(runs), f"nn_train {design} {phase}")
    for run, out in zip(runs, outputs):
        x, y, ids = training_set(data, signs[run])
        model = build_model(model_cfg["name"], **model_cfg.get("params", {}))
        model.load_state_dict(x0)
        train_model(model.to(dev), x, y, ids, orders, tcfg)
        save_state_dict(model.state_dict(), out)
        log.step(run)


def _forget_ids(data) -> np.ndarray:
    """Global ids of the candidate forget pool (as in the design's split.parquet)."""
    ids = getattr(data, "forget_id", None)
    return (np.arange(len(data.forget_x)) if ids is None else np.asarray(ids)).astype(np.int64)


def _accuracy(model, x, y, kind: str) -> float:
    if len(x) == 0:
        return float("nan")
    return float(np.mean(model_scores(model, x, y, kind=kind)["correct"]))


class _RunMonitor(Monitor):
    """Collects what one unlearning run reports: scores of the candidate pool at the checkpoint
    steps (scored synchronously, the training mode restored) and the algorithm's recorded numbers."""

    def __init__(self, data):
        self.data = data
        self.checkpoints: list[tuple[int, dict]] = []
        self.values: dict[str, float] = {}

    def checkpoint(self, step: int, model) -> None:
        was_training = model.training
        self.checkpoints.append((int(step), model_scores(model, self.data.forget_x, self.data.forget_y, kind=self.data.kind)))
        model.train(was_training)

    def record(self, **values) -> None:
        self.values.update({k: v.item() if hasattr(v, "item") else v for k, v in values.items()})  # numpy → Python


def _base_of_runs(runs: Sequence[int], signs: Mapping[int, np.ndarray], base_models: Sequence[str]) -> list[str]:
    """The base model of each run: the one per-run model of the chunk, in order, or, for a joint
    design, the candidate model of the run's sign vector."""
    parsed = [run_of_path(p) for p in base_models]
    if parsed and parsed[0][0] == "candidate":
        by_rank = {rank: path for (_, rank), path in zip(parsed, base_models)}
        return [by_rank[sign_vector_rank(signs[run])] for run in runs]
    if len(base_models) != len(runs):
        raise ValueError(f"{len(runs)} runs but {len(base_models)} base models")
    return list(base_models)


def _score_frame(experiment: str, phase: str, run: int, row, data, in_forget: np.ndarray, sc: Mapping) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "experiment": experiment,
            "phase": phase,
            "run": run,
            "sign_index": int(row.sign_index),
            "seed": np.uint64(row.seed),
            "batch": data.forget_batch.astype(np.int32),
            "example": _forget_ids(data),
            "in_forget": in_forget,
            "score_logit": sc["logit"],
            "score_loss": sc["loss"],
        }
    )


def unlearn(
    experiment: str,
    design_cfg: Mapping,
    method: str,
    params: Mapping,
    root_seed: int,
    data_path,
    signs_path,
    base_models: Sequence[str],
    score_outputs: Sequence[str],
    metric_outputs: Sequence[str],
    device: str = "cpu",
    checkpoint_outputs: Sequence[str] | None = None,
) -> None:
    """Unlearn each run's base model with ``method`` on ``device`` and score the candidate forget pool.

    Every run draws its own unlearning randomness (noise included) from its own stream.  With
    ``checkpoint_outputs`` the pool is also scored at the method's checkpoint steps
    (CHECKPOINT_SCORES); what the method records (noisy steps, σ, …) goes to the metrics' ``record``.
    """
    phase, runs = _phase_runs(score_outputs)
    dev = resolve_device(device)
    data = load_audit_data(data_path)
    signs_table = read_parquet(signs_path, schemas.SIGNS)
    signs = _signs_for(signs_table, phase, runs, signs_path)
    model_cfg = dict(design_cfg["model"])
    retain = (torch.as_tensor(data.retain_x).to(dev), torch.as_tensor(data.retain_y).to(dev))  # shared by every run
    bases = _base_of_runs(runs, signs, base_models)
    checkpoint_outputs = list(checkpoint_outputs or [None] * len(runs))
    log = ProgressLog(len(runs), f"nn_unlearn {experiment} {phase}")
    for run, base, score_out, metric_out, checkpoint_out in zip(runs, bases, score_outputs, metric_outputs, checkpoint_outputs):
        s = signs[run]
        model = build_model(model_cfg["name"], **model_cfg.get("params", {}))
        model.load_state_dict(torch.load(base, map_location="cpu", weights_only=True))
        model.to(dev)
        fx, fy = forget_set(data, s)
        gen = torch.Generator().manual_seed(torch_seed(seed_sequence(root_seed, experiment, "unlearn", phase, run)))
        monitor = _RunMonitor(data)
        model = unlearn_model(method, model, retain, (torch.as_tensor(fx), torch.as_tensor(fy)), dict(params), gen, monitor=monitor)
        sc = model_scores(model, data.forget_x, data.forget_y, kind=data.kind)
        row = signs_table[(signs_table.phase == phase) & (signs_table.run == run)].iloc[0]
        in_forget = s[data.forget_batch] == 1
        write_parquet(_score_frame(experiment, phase, run, row, data, in_forget, sc), score_out, schemas.SCORES)
        if checkpoint_out is not None:
            frames = [_score_frame(experiment, phase, run, row, data, in_forget, c).assign(step=step) for step, c in monitor.checkpoints]
            if not frames:
                raise ValueError(f"{experiment}: method {method!r} reported no checkpoints; set params.checkpoint_steps")
            write_parquet(pd.concat(frames, ignore_index=True), checkpoint_out, schemas.CHECKPOINT_SCORES)
        metrics = pd.DataFrame(
            [
                {
                    "experiment": experiment,
                    "phase": phase,
                    "run": run,
                    "retain_acc": _accuracy(model, data.retain_x, data.retain_y, data.kind),
                    "forget_acc": float(np.mean(sc["correct"][in_forget])) if in_forget.any() else float("nan"),
                    "test_acc": _accuracy(model, data.test_x, data.test_y, data.kind),
                    "record": json.dumps(monitor.values, sort_keys=True),
                }
            ]
        )
        write_parquet(metrics, metric_out, schemas.RUN_METRICS)
        log.step(run)


def fit(experiment: str, score_paths: Sequence[str], fit_options: Mapping, fit_path) -> None:
    """Rule ``nn_fit``: per-example Gaussians (FIT schema) from calibration runs only."""
    scores = read_concat(score_paths, schemas.SCORES)
    write_parquet(fit_table(scores, experiment, **dict(fit_options)), fit_path, schemas.FIT)


def audit(fit_path, score_paths: Sequence[str], signs_path, m: int, experiment_cfg: Mapping, zeta: float, overlaps_path, bounds_path) -> None:
    """Rule ``nn_audit``: overlaps and bounds from evaluation runs only, the pre-registered cell marked."""
    fitted = read_parquet(fit_path, schemas.FIT)
    scores = read_concat(score_paths, schemas.SCORES)
    signs = read_parquet(signs_path, schemas.SIGNS)
    overlaps, bounds = audit_tables(
        fitted, scores, signs[signs.phase == "eval"], int(m), experiment_cfg["r"], zeta=zeta,
        primary=preregistered_cell(experiment_cfg), selection=experiment_cfg.get("selection", "preregistered"),
    )
    write_parquet(overlaps, overlaps_path, schemas.OVERLAPS)
    write_parquet(bounds, bounds_path, schemas.BOUNDS)


def table(name: str, bound_paths: Sequence[str], metric_paths: Sequence[str], experiments: Mapping[str, Mapping], table_path) -> None:
    """Rule ``nn_table``: one of the paper's Tables 1a, 1b, 3, 4, 5, 7."""
    bounds = read_concat(bound_paths, schemas.BOUNDS)
    metrics = read_concat(metric_paths, schemas.RUN_METRICS)
    render, caption = NN_TABLES[name]
    write_table(render(bounds, metrics, experiments), Path(table_path).with_suffix(""), caption=caption)


def figure_r(bound_paths: Sequence[str], experiments: Mapping[str, Mapping], figure_path) -> None:
    """Rule ``nn_figure_r``: ε_LB against r, one line per experiment."""
    epsilon_vs_r_figure(read_concat(bound_paths, schemas.BOUNDS), experiments, Path(figure_path).with_suffix(""))
