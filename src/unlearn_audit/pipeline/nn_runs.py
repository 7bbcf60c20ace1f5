"""The two torch rules of the neural-network audits: base training and unlearning (docs/workflow.md#the-dag-step-by-step).

Rules ``nn_train`` (wildcards ``design`` and ``chunk``) and ``nn_train_retrain`` (``design``) →
``workflow/scripts/nn_train.py`` → :func:`train`; rule ``nn_unlearn`` (wildcards ``group`` and
``chunk``) → ``workflow/scripts/nn_unlearn.py`` → :func:`unlearn`.  One wildcard rule per step makes
every chunk: a chunk job's output is its chunk's folder (``nn_train_retrain``'s the one model
file), and the per-run files come in the rule's params (the plan's ``nn_train_job`` and
``nn_unlearn_job``); each run's (phase, index) is read back from its output path
(:func:`~.paths.run_of_path`).  The other rules of :mod:`.nn` stay torch-free.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import Iterator, Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd
import torch

from .. import schemas
from ..data import load_audit_data
from ..io import read_parquet, write_parquet
from ..models import build_model, initial_model, model_factories
from ..scores import model_scores
from ..seeds import seed_sequence, torch_seed
from ..catalogue import SCORE_NAMES, score_column
from ..stats.signs import sign_vector_rank, sign_vector_unrank
from ..torch_utils import ProgressLog, compile_model, compute_precision, deterministic_default, save_state_dict
from ..training import BaseTrainConfig, TrainConfig, shuffle_orders, train_many, train_model
from ..training.resume import TrainingCheckpoint
from ..unlearning import Monitor
from ..unlearning import get_method, unlearn_many, unlearn_variants_many
from .controls import RETRAIN
from .plan.paths import run_of_path
from .run_stash import RunStash
from .runtime import resolve_device

__all__ = ["train_config", "RunSwitches", "run_switches", "chance_accuracy", "training_ids", "training_set", "forget_set", "base_training_setup", "universe_tensors", "train", "unlearn"]


def train_config(cfg: Mapping) -> BaseTrainConfig:
    """A design's base training from its ``train`` mapping, refusing unknown keys."""
    return BaseTrainConfig.from_dict(cfg)


class RunSwitches(NamedTuple):
    """The design's device switches of its training and unlearning steps, recorded per run
    (docs/workflow.md#many-models-per-job-threads-and-precision)."""

    precision: str       # "fp32", or "bf16" autocast
    compiled: bool       # torch.compile of the model's forward
    deterministic: bool  # deterministic kernels (torch.use_deterministic_algorithms)

    @contextlib.contextmanager
    def steps(self, device) -> Iterator[None]:
        """The region of training or unlearning steps: the precision's autocast and the kernels' determinism."""
        with compute_precision(self.precision, device), deterministic_default(self.deterministic):
            yield


def run_switches(design_cfg: Mapping) -> RunSwitches:
    """The design's ``precision``, ``compile`` and ``deterministic`` switches."""
    return RunSwitches(str(design_cfg.get("precision", "fp32")), bool(design_cfg.get("compile", False)),
                       bool(design_cfg.get("deterministic", True)))


def _chosen(data, signs: np.ndarray) -> np.ndarray:
    """Rows of the candidate pool in D_f(S): the examples of the batches with sign +1."""
    return np.flatnonzero(np.asarray(signs)[data.forget_batch] == 1)


def training_ids(data, signs: np.ndarray) -> np.ndarray:
    """Universe ids (retain ‖ forget pool) of D(S) = D_r ∪ D_f(S), retain first."""
    n_r = len(data.retain_x)
    return np.concatenate([np.arange(n_r), n_r + _chosen(data, signs)])


def training_set(data, signs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(x, y, example ids) of D(S) = D_r ∪ D_f(S); ids index the universe retain ‖ forget pool."""
    chosen = _chosen(data, signs)
    x = np.concatenate([data.retain_x, data.forget_x[chosen]])
    y = np.concatenate([data.retain_y, data.forget_y[chosen]])
    return x, y, training_ids(data, signs)


def forget_set(data, signs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """D_f(S): only the sampled forget batches (never the whole candidate pool)."""
    chosen = _chosen(data, signs)
    return data.forget_x[chosen], data.forget_y[chosen]


def _signs_for(table: pd.DataFrame, keys: Sequence[tuple[str, int]], signs_path) -> dict[tuple[str, int], np.ndarray]:
    """The sign vectors of the (phase, run) ``keys`` from the design's sign table (read from ``signs_path``)."""
    wanted = set(keys)
    found = {(str(ph), int(r)): np.asarray(s, dtype=np.int8) for ph, r, s in zip(table.phase, table.run, table.signs) if (ph, r) in wanted}
    missing = sorted(wanted - set(found))
    if missing:
        raise ValueError(f"{signs_path}: no sign vectors for (phase, run) {missing}")
    return found


def _run_keys(paths: Sequence[str]) -> list[tuple[str, int]]:
    """The (phase, run) of each of a chunk's per-run output paths: calibration and evaluation runs
    may share a chunk, candidate models (a joint design's training) never share one with runs."""
    keys = [run_of_path(p) for p in paths]
    if len({ph if ph in _MODEL_KEYS else "run" for ph, _ in keys}) > 1:
        raise ValueError("a chunk's outputs are candidate models, the retrained model or runs, never a mix")
    return keys


#: The phases of base-model outputs that are not runs: a joint design's candidate models, A(D_r).
_MODEL_KEYS = ("candidate", "retrain")


def base_training_setup(design: str, cfg: Mapping, root_seed: int, data) -> tuple[dict, TrainConfig, np.ndarray]:
    """(x0, training config, order π) of a design's base trainings (Section 3: both fixed per
    design, drawn from the design's own seed streams), for the audit data ``data``."""
    model_cfg = dict(cfg["model"])
    x0 = initial_model(model_cfg["name"], model_cfg.get("params", {}), int(seed_sequence(root_seed, design, "init").generate_state(1)[0]))
    tcfg = train_config(cfg["train"])
    n_universe = len(data.retain_x) + len(data.forget_x)
    orders = shuffle_orders(n_universe, tcfg.epochs, int(seed_sequence(root_seed, design, "order").generate_state(1)[0]))
    return x0, tcfg, orders


def universe_tensors(data) -> tuple[torch.Tensor, torch.Tensor]:
    """(x, y) of the universe retain ‖ forget pool, the rows that :func:`training_ids` index."""
    return (torch.as_tensor(np.concatenate([data.retain_x, data.forget_x])),
            torch.as_tensor(np.concatenate([data.retain_y, data.forget_y])))


def _resumed(stash: RunStash | None, runs_outputs: Sequence[Sequence[str]], step: str) -> list[int]:
    """The indices of the runs still to compute: all without a ``stash``; with one, those whose
    outputs (``runs_outputs``, one list a run) it does not hold all of (:mod:`.run_stash`)."""
    todo = [i for i, outs in enumerate(runs_outputs) if stash is None or not stash.finished(outs)]
    if len(todo) < len(runs_outputs):
        print(f"{step}: {len(runs_outputs) - len(todo)} of {len(runs_outputs)} runs kept from an earlier attempt ({stash.root})",
              file=sys.stderr, flush=True)
    return todo


def _target(stash: RunStash | None, path: str | None) -> str | None:
    """Where a run writes ``path``: the path itself, or its place in the job's stash."""
    return path if stash is None or path is None else stash.path(path)


def train(design: str, cfg: Mapping, root_seed: int, data_path, signs_path, outputs: Sequence[str], device: str = "cpu",
          stash: RunStash | None = None) -> None:
    """Train the base model A(D(S)) of each output's run from the design's fixed x0 and π on ``device``.

    A joint design's outputs are candidate models (``…/base/candidate/<rank>.pt``), one per S̃ ∈ S_m:
    training is a deterministic function of S, so calibration and evaluation runs share them.  The
    output ``…/base/retrain.pt`` is A(D_r), trained on the retain set alone (the *Retrain* control).
    Models are saved with CPU tensors, so they load anywhere.  The design's ``precision``,
    ``compile`` and ``deterministic`` switches apply to the training steps (:func:`run_switches`).  With ``models_per_group``
    K > 1 the runs are trained K at a time as one grouped network (:func:`~unlearn_audit.training.train_many`;
    a short last group is padded to K, so a model does not depend on how the runs are chunked).
    With a ``stash`` (:mod:`.run_stash`) the models go there first, the runs it already holds are not
    trained again, and the job ends by moving them all into the chunk's folder; a run trained alone
    (K = 1) also keeps its training's state there (:mod:`~unlearn_audit.training.resume`), so it
    resumes after SIGTERM or a lost job where it stopped (a group of K starts again).
    """
    runs = _run_keys(outputs)
    todo = _resumed(stash, [[o] for o in outputs], f"nn_train {design}")
    switches = run_switches(cfg)
    dev = resolve_device(device)
    data = load_audit_data(data_path)
    if runs and runs[0][0] == "candidate":  # a joint design: one model per candidate S̃, named by its rank
        signs = {(phase, rank): sign_vector_unrank(rank, int(cfg["m"])) for phase, rank in runs}
    elif runs and runs[0][0] == RETRAIN:  # A(D_r): no candidate batch in the training set
        signs = {key: np.full(int(cfg["m"]), -1, dtype=np.int8) for key in runs}
    else:
        signs = _signs_for(read_parquet(signs_path, schemas.SIGNS), runs, signs_path)
    model_cfg = dict(cfg["model"])
    x0, tcfg, orders = base_training_setup(design, cfg, root_seed, data)
    log = ProgressLog(len(todo), f"nn_train {design}")
    # A(D_r) is one model of its own job: trained alone, not padded to a group of K
    k = 1 if runs and runs[0][0] == RETRAIN else int(cfg.get("models_per_group", 1))
    if k > 1:
        make_model, make_grouped = model_factories(model_cfg["name"], model_cfg.get("params", {}))
        universe = tuple(t.to(dev) for t in universe_tensors(data))
        for i in range(0, len(todo), k):
            group = [(runs[j], _target(stash, outputs[j])) for j in todo[i : i + k]]
            ids_list = [training_ids(data, signs[key]) for key, _ in group]
            with switches.steps(dev):
                states = train_many(make_model, x0, *universe, ids_list, orders, tcfg, make_grouped=make_grouped,
                                    grouped=True, group_size=k, progress=False)
            for ((phase, run), out), state in zip(group, states):
                save_state_dict(state, out)
                log.step(f"{phase} {run}")
    else:
        for j in todo:
            checkpoint = None if stash is None else TrainingCheckpoint(stash.checkpoint_path(outputs[j]))
            _train_one(runs[j], _target(stash, outputs[j]), data, signs, model_cfg, x0, tcfg, orders, switches, dev, log, checkpoint)
    if stash is not None:
        stash.commit()


def _train_one(key: tuple[str, int], out: str, data, signs, model_cfg: Mapping, x0, tcfg: TrainConfig, orders, switches: RunSwitches,
               dev, log: ProgressLog, checkpoint: TrainingCheckpoint | None = None) -> None:
    """One base model of :func:`train`, one run at a time (K = 1); resumable with a ``checkpoint``."""
    phase, run = key
    x, y, ids = training_set(data, signs[(phase, run)])
    model = build_model(model_cfg["name"], **model_cfg.get("params", {}))
    model.load_state_dict(x0)
    model = compile_model(model.to(dev), switches.compiled)
    with switches.steps(dev):
        train_model(model, x, y, ids, orders, tcfg, checkpoint=checkpoint)
    save_state_dict(model.state_dict(), out)
    if checkpoint is not None:
        checkpoint.remove()
    log.step(f"{phase} {run}")


def _forget_ids(data) -> np.ndarray:
    """Global ids of the candidate forget pool (as in the design's split.parquet)."""
    ids = getattr(data, "forget_id", None)
    return (np.arange(len(data.forget_x)) if ids is None else np.asarray(ids)).astype(np.int64)


def _accuracy(model, x, y, kind: str) -> float:
    if len(x) == 0:
        return float("nan")
    return float(np.mean(model_scores(model, x, y, kind=kind)["correct"]))


def chance_accuracy(data) -> float:
    """1 / the number of classes seen in the retain and test labels (characters, for text): the
    accuracy of a model that guesses, against which a model set is flagged at chance."""
    labels = np.concatenate([np.asarray(data.retain_y).ravel(), np.asarray(data.test_y).ravel()])
    return 1.0 / max(len(np.unique(labels)), 1)


class _RunMonitor(Monitor):
    """Collects what one unlearning run reports: scores of the candidate pool at the checkpoint
    steps (scored synchronously, the training mode restored) and the algorithm's recorded numbers.
    With ``in_forget`` (evaluation runs) it also records the test accuracy and the accuracy on
    D_f(S) at each checkpoint step (``checkpoint_test_acc``, ``checkpoint_forget_acc``: step → value)."""

    def __init__(self, data, in_forget: np.ndarray | None = None):
        self.data = data
        self.in_forget = in_forget
        self.checkpoints: list[tuple[int, dict]] = []
        self.values: dict = {}

    def checkpoint(self, step: int, model) -> None:
        was_training = model.training
        sc = model_scores(model, self.data.forget_x, self.data.forget_y, kind=self.data.kind)
        self.checkpoints.append((int(step), sc))
        if self.in_forget is not None:
            test = _accuracy(model, self.data.test_x, self.data.test_y, self.data.kind)
            forget = float(np.mean(sc["correct"][self.in_forget])) if self.in_forget.any() else float("nan")
            self.values.setdefault("checkpoint_test_acc", {})[str(int(step))] = test
            self.values.setdefault("checkpoint_forget_acc", {})[str(int(step))] = forget
        model.train(was_training)

    def record(self, **values) -> None:
        self.values.update({k: v.item() if hasattr(v, "item") else v for k, v in values.items()})  # numpy → Python


def _base_of_runs(keys: Sequence[tuple[str, int]], signs: Mapping[tuple[str, int], np.ndarray], base_models: Sequence[str]) -> list[str]:
    """The base model of each (phase, run): the one retrained model A(D_r) for every run, a joint
    design's candidate model of the run's sign vector (``base_models``: every candidate's), or else
    ``base_models`` as given, one a run."""
    if len(base_models) == 1 and str(base_models[0]).endswith(".pt") and run_of_path(base_models[0])[0] == RETRAIN:
        return [str(base_models[0])] * len(keys)
    parsed = [run_of_path(p) for p in base_models]
    if parsed and parsed[0][0] == "candidate":
        by_rank = {rank: path for (_, rank), path in zip(parsed, base_models)}
        return [by_rank[sign_vector_rank(signs[key])] for key in keys]
    if len(base_models) != len(keys):
        raise ValueError(f"{len(keys)} runs but {len(base_models)} base models")
    if parsed != list(keys):
        raise ValueError(f"the base models are of runs {parsed}, not of the chunk's runs {list(keys)}")
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
            **{score_column(name): sc[name] for name in SCORE_NAMES},
        }
    )


def _generator(root_seed: int, key: str, stream: str, phase: str, run: int) -> torch.Generator:
    return torch.Generator().manual_seed(torch_seed(seed_sequence(root_seed, key, stream, phase, run)))


def _split(seq: Sequence | None, parts: int) -> list[list]:
    """``seq`` cut into ``parts`` equal consecutive lists (one per experiment of a group)."""
    if seq is None:
        return [None] * parts
    if len(seq) % parts:
        raise ValueError(f"{len(seq)} outputs cannot be split evenly among {parts} experiments")
    size = len(seq) // parts
    return [list(seq[i * size : (i + 1) * size]) for i in range(parts)]


class _Run(NamedTuple):
    """One run of an unlearning chunk, ready to unlearn: its position in the chunk's outputs, its
    base model, its forget set D_f(S) and the monitor of each experiment of the group."""

    index: int
    phase: str
    run: int
    model: torch.nn.Module
    forget: tuple[torch.Tensor, torch.Tensor]
    in_forget: np.ndarray
    measure_accuracy: bool
    monitors: list


def unlearn(
    experiments: str | Sequence[str],
    design_cfg: Mapping,
    method: str,
    params: Mapping | Sequence[Mapping],
    root_seed: int,
    data_path,
    signs_path,
    base_models: Sequence[str],
    score_outputs: Sequence[str],
    metric_outputs: Sequence[str],
    device: str = "cpu",
    checkpoint_outputs: Sequence[str] | None = None,
    release_key: str | None = None,
    stash: RunStash | None = None,
) -> None:
    """Unlearn each run's base model with ``method`` on ``device`` and score the candidate forget pool.

    ``experiments`` is one experiment, or, with ``release_key`` (:meth:`.plan.nn.NNPlan.release_key`),
    a group whose ``params`` (one mapping each) differ only in the method's noise release: each run's
    noiseless part is then computed once, from the stream of ``release_key``, and each experiment
    draws its release noise from its own ``noise`` stream (:func:`~unlearn_audit.unlearning.unlearn_variants`).
    Without ``release_key`` a run draws all its randomness from the experiment's ``unlearn`` stream.
    The output lists hold each experiment's runs in turn.

    With ``checkpoint_outputs`` the pool is also scored at the method's checkpoint steps
    (CHECKPOINT_SCORES); what the method records (noisy steps, σ, …) goes to the metrics' ``record``.
    Retain and test accuracies are measured on evaluation runs (the tables report those) and are
    NaN for calibration runs, whose forward passes over the retain and test sets would be unused.
    Each run's metrics also record the design's ``precision``, ``compile`` and ``deterministic``
    switches, which apply to its base training and its unlearning steps alike.  A question-answer
    design's evaluation runs also record TOFU's metrics (QA_RUN_METRICS, :func:`~unlearn_audit.qa_eval.qa_run_metrics`).

    With a ``stash`` (:mod:`.run_stash`) each run's files go there first, a run whose files it holds
    for every experiment is not unlearned again, and the job ends by moving them into the chunk's folder.
    """
    group = [experiments] if isinstance(experiments, str) else list(experiments)
    plist = [dict(params)] if isinstance(params, Mapping) else [dict(p) for p in params]
    if len(plist) != len(group):
        raise ValueError(f"{len(group)} experiments but {len(plist)} parameter sets")
    if release_key is None and len(group) != 1:
        raise ValueError("a group of experiments shares its noiseless part only through a release_key")
    scores_of, metrics_of, checkpoints_of = (_split(o, len(group)) for o in (score_outputs, metric_outputs, checkpoint_outputs))
    keys = _run_keys(scores_of[0])
    for e, outs in zip(group, scores_of):
        if _run_keys(outs) != keys:
            raise ValueError(f"{e}: the group's experiments must cover the same runs")
    todo = _resumed(stash, [[o[i] for o in (*scores_of, *metrics_of, *checkpoints_of) if o is not None] for i in range(len(keys))],
                    f"nn_unlearn {', '.join(group)}")
    scores_of, metrics_of, checkpoints_of = ([None if o is None else [_target(stash, p) for p in o] for o in outs]
                                             for outs in (scores_of, metrics_of, checkpoints_of))
    switches = run_switches(design_cfg)
    dev = resolve_device(device)
    data = load_audit_data(data_path)
    signs_table = read_parquet(signs_path, schemas.SIGNS)
    signs = _signs_for(signs_table, keys, signs_path)
    model_cfg = dict(design_cfg["model"])
    retain = (torch.as_tensor(data.retain_x).to(dev), torch.as_tensor(data.retain_y).to(dev))  # shared by every run
    bases = _base_of_runs(keys, signs, base_models)
    chance = chance_accuracy(data)
    qa_tokens = _qa_tokens(design_cfg, data)
    log = ProgressLog(len(todo), f"nn_unlearn {', '.join(group)}")
    # K runs' final retain steps at once (unlearn_many: a grouped network or vmap), padded to K; 1: one at a time;
    # a group sharing a noise release batches its noiseless part where the method can (rewind-to-delete, by vmap)
    k = int(design_cfg.get("unlearn_models_per_group", 1))
    if release_key is not None and get_method(method).noise_release.prepare_many is None:
        k = 1
    group_mode = str(design_cfg.get("unlearn_group_mode", "grouped"))
    make_grouped = model_factories(model_cfg["name"], model_cfg.get("params", {}))[1] if k > 1 and group_mode == "grouped" else None
    for start in range(0, len(todo), k):
        runs = []
        for i in todo[start : start + k]:
            phase, run = keys[i]
            s = signs[(phase, run)]
            model = build_model(model_cfg["name"], **model_cfg.get("params", {}))
            model.load_state_dict(torch.load(bases[i], map_location="cpu", weights_only=True))
            fx, fy = forget_set(data, s)
            in_forget = s[data.forget_batch] == 1
            measure_accuracy = phase == "eval"  # the tables report evaluation runs' accuracies only
            runs.append(_Run(i, phase, run, compile_model(model.to(dev), switches.compiled), (torch.as_tensor(fx), torch.as_tensor(fy)), in_forget,
                             measure_accuracy, [_RunMonitor(data, in_forget if measure_accuracy else None) for _ in group]))
        with switches.steps(dev):  # scores inside stay fp32 (model_scores)
            if release_key is None:  # K = 1 (make_grouped None): unlearn_many is one unlearn() per run
                outs = unlearn_many(method, [r.model for r in runs], retain, [r.forget for r in runs], plist[0],
                                    [_generator(root_seed, group[0], "unlearn", r.phase, r.run) for r in runs], make_grouped,
                                    [r.monitors[0] for r in runs], group_size=k, group_mode=group_mode)
                models_of = [[o] for o in outs]
            else:
                models_of = unlearn_variants_many(
                    method, [r.model for r in runs], retain, [r.forget for r in runs],
                    [[(p, _generator(root_seed, e, "noise", r.phase, r.run), mon) for e, p, mon in zip(group, plist, r.monitors)] for r in runs],
                    [_generator(root_seed, release_key, "unlearn", r.phase, r.run) for r in runs], group_size=k)
        for r, models in zip(runs, models_of):
            _write_run(group, models, r.monitors, r.index, r.phase, r.run, signs_table, data, r.in_forget, r.measure_accuracy, chance,
                       switches, scores_of, metrics_of, checkpoints_of, method, qa_tokens)
            log.step(f"{r.phase} {r.run}")
    if stash is not None:
        stash.commit()


def _qa_tokens(design_cfg: Mapping, data):
    """The tokens of a question-answer design's data (its ``dataset_params.tokenizer``), whose
    evaluation runs measure TOFU's metrics; None for other data."""
    if "qa_retain_sample" not in data.extra:
        return None
    from ..data.qa import QA_DEFAULTS, tokens_of

    return tokens_of(str(dict(design_cfg.get("dataset_params") or {}).get("tokenizer", QA_DEFAULTS["tokenizer"])))


def _write_run(group, models, monitors, i: int, phase: str, run: int, signs_table, data, in_forget, measure_accuracy: bool, chance: float,
               switches: RunSwitches, scores_of, metrics_of, checkpoints_of, method: str, qa_tokens=None) -> None:
    """Run i's outputs for each experiment of the group: its scores (SCORES), checkpoint scores and
    metrics (RUN_METRICS; a question-answer design's QA_RUN_METRICS, ``qa_tokens`` its tokens)."""
    row = signs_table[(signs_table.phase == phase) & (signs_table.run == run)].iloc[0]
    for k, (e, unlearned, mon) in enumerate(zip(group, models, monitors)):
        sc = model_scores(unlearned, data.forget_x, data.forget_y, kind=data.kind)
        write_parquet(_score_frame(e, phase, run, row, data, in_forget, sc), scores_of[k][i], schemas.SCORES)
        if checkpoints_of[k] is not None:
            frames = [_score_frame(e, phase, run, row, data, in_forget, c).assign(step=step) for step, c in mon.checkpoints]
            if not frames:
                raise ValueError(f"{e}: method {method!r} reported no checkpoints; set params.checkpoint_steps")
            write_parquet(pd.concat(frames, ignore_index=True), checkpoints_of[k][i], schemas.CHECKPOINT_SCORES)
        held = {part: model_scores(unlearned, getattr(data, f"{part}_x"), getattr(data, f"{part}_y"), kind=data.kind)
                for part in ("retain", "test") if measure_accuracy and len(getattr(data, f"{part}_x"))}
        accuracy = {part: float(np.mean(held[part]["correct"])) if part in held else float("nan") for part in ("retain", "test")}
        metrics = {
            "experiment": e,
            "phase": phase,
            "run": run,
            "retain_acc": accuracy["retain"],
            "forget_acc": float(np.mean(sc["correct"][in_forget])) if in_forget.any() else float("nan"),
            "test_acc": accuracy["test"],
            "n_test": int(len(data.test_x)),
            "n_forget": int(in_forget.sum()),
            "chance_acc": chance,
            "record": json.dumps(mon.values, sort_keys=True),
            "precision": switches.precision,
            "compiled": switches.compiled,
            "deterministic": switches.deterministic,
        }
        schema = schemas.RUN_METRICS
        if qa_tokens is not None:  # the TOFU metrics' modules load for question-answer designs only
            from ..auditors.qa_metrics import not_measured
            from ..qa_eval import qa_run_metrics

            schema = schemas.QA_RUN_METRICS
            metrics |= qa_run_metrics(unlearned, data, in_forget, {"forget": sc["loss"], **{p: held[p]["loss"] for p in held}},
                                      qa_tokens.decode, eos=qa_tokens.eos, pad=qa_tokens.pad) if measure_accuracy else not_measured()
        write_parquet(pd.DataFrame([metrics]), metrics_of[k][i], schema)
