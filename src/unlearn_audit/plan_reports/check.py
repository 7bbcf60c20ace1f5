"""The cost model against a finished run (``unlearn-audit plan --check <results_dir>``): for every
training and unlearning chunk job the run recorded (Snakemake's ``benchmark:`` files,
``<results_dir>/benchmarks/``), the seconds :mod:`.hours` predicts beside the seconds it took, summed
per kind of job (a model's base trainings; a method's unlearning runs of a model, the controls
apart).

A job is predicted as its start-up (process, imports, data load, writes: given, or calibrated on
the run's control jobs, whose runs only score), the import its first training step makes in a job
that takes training steps (:data:`TRAINING_IMPORT_S`), plus, for each of its runs, its steps at
a step's fixed cost and its training-image equivalents (:mod:`.runs`) at the marginal rate,
both from the throughput rows of the design's model and K on the device at two or more batch
sizes (:func:`.throughput.read_step_costs`; from one batch size: no fixed cost, the one rate).  A kind whose measured time is
more than ``tolerance`` times its prediction, or less than its prediction over ``tolerance``, is
flagged.  Torch-free.
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from ..pipeline.controls import RETRAIN
from ..pipeline.plan import WorkflowPlan
from ..pipeline.plan.cost.runs import base_training_images, base_training_steps, retrain_work, takes_training_steps, training_k, unlearning_k, unlearning_run_work
from ..pipeline.plan.cost.throughput import run_seconds
from .hours import job_kind

__all__ = ["KindCheck", "check_kinds", "format_check", "TOLERANCE", "TRAINING_IMPORT_S"]

#: How far a kind's measured time may be from its prediction, either way, before it is flagged.
TOLERANCE = 1.3
#: Seconds of the import a job's first training step makes (``torch._dynamo``, :func:`.runs.takes_training_steps`),
#: which the controls that calibrate the start-up never make: 2.0 s on the throughput rows' CPU
#: (benchmarks/RESULTS.md, "Measured throughput": ``benchmarks/optimizer.py``, process start to the first step).
TRAINING_IMPORT_S = 2.0


@dataclass
class KindCheck:
    """One kind of job: how many jobs and runs the run recorded, their predicted and measured seconds."""

    kind: str
    jobs: int = 0
    runs: int = 0
    predicted_s: float = 0.0
    measured_s: float = 0.0

    @property
    def ratio(self) -> float:
        """Measured over predicted."""
        return self.measured_s / self.predicted_s if self.predicted_s > 0 else math.nan

    def within(self, tolerance: float = TOLERANCE) -> bool:
        return math.isfinite(self.ratio) and 1 / tolerance <= self.ratio <= tolerance


def _seconds(tsv: Path) -> float:
    with tsv.open() as f:
        return float(next(csv.DictReader(f, delimiter="\t"))["s"])


@dataclass
class _Job:
    kind: str
    runs: int
    run_s: float       # the runs' predicted seconds (and a training step's import), start-up apart
    measured_s: float


def check_kinds(config: dict, results_dir: str | Path, step_costs: Mapping, startup_s: float | None = None,
                unit_costs: Mapping | None = None, speed: float = 1.0) -> tuple[list[KindCheck], float]:
    """(predicted against measured seconds per kind of job, the start-up a job was priced at), over
    the benchmark files of ``results_dir`` that the config's DAG names (a file of another config is
    ignored).  ``speed``: the run machine's speed over the throughput rows' (the reference job's
    images/s beside the run over its row's, :func:`.throughput.reference_rate`); each measured second
    counts as ``speed`` seconds of the rows' machine, so a machine that ran slower or faster than on
    the day the rows were measured does not read as a model error.  Without ``startup_s`` the start-up is calibrated on the control jobs, whose runs only
    score: the median of their measured less their runs' predicted seconds; the controls are then
    not a check (:func:`format_check` says so).  The parts of a run that a per-unit row prices
    (Hessian–vector products, noisy steps, full-batch micro-batches) are priced at ``unit_costs``
    (:func:`.throughput.read_unit_costs`) where the model has one."""
    if not speed > 0:
        raise ValueError(f"the machine's speed over the throughput rows' must be positive, got {speed}")
    jobs = [_Job(j.kind, j.runs, j.run_s, j.measured_s * speed) for j in _jobs(config, Path(results_dir) / "benchmarks", step_costs, unit_costs or {})]
    if not jobs:
        raise ValueError(f"{results_dir}: no training or unlearning job of this config has a benchmark file there; "
                         "give the config(s) the run used (--configfile)")
    if startup_s is None:
        controls = sorted(j.measured_s - j.run_s for j in jobs if j.kind.startswith("control ") and math.isfinite(j.run_s))
        if not controls:
            raise ValueError(f"{results_dir}: no control job with a benchmark file to calibrate the start-up on; give --startup-s")
        startup_s = max(controls[len(controls) // 2], 0.0)
    kinds: dict[str, KindCheck] = {}
    for j in jobs:
        k = kinds.setdefault(j.kind, KindCheck(j.kind))
        k.jobs += 1
        k.runs += j.runs
        k.predicted_s += startup_s + j.run_s
        k.measured_s += j.measured_s
    return sorted(kinds.values(), key=lambda k: k.kind), startup_s


def _jobs(config: dict, bench: Path, step_costs: Mapping, unit_costs: Mapping | None = None) -> list[_Job]:
    """Every training and unlearning chunk job of the config that has a benchmark file under ``bench``."""
    plan = WorkflowPlan(config)
    jobs: list[_Job] = []

    def add(kind: str, tsv: Path, runs: int, per_run_s: float, method: str | None = None) -> None:
        if tsv.is_file():
            jobs.append(_Job(kind, runs, per_run_s * runs + (TRAINING_IMPORT_S if takes_training_steps(method) else 0.0), _seconds(tsv)))

    for design, chunk, keys in plan.nn.design_chunks():
        cfg = plan.nn.design(design)
        if chunk == RETRAIN:
            steps, images = retrain_work(cfg)
            add(job_kind(plan, design), bench / "nn" / design / "train_retrain.tsv", 1, run_seconds(cfg, steps, images, 1, step_costs))
        else:
            add(job_kind(plan, design), bench / "nn" / design / f"train_{chunk}.tsv", len(keys),
                run_seconds(cfg, base_training_steps(cfg), base_training_images(cfg), training_k(cfg), step_costs))
    for group, chunk, keys in plan.nn.experiment_chunks():
        cfg = plan.nn.design(plan.nn.design_of(group[0]))
        experiments = [plan.nn.experiment(e) for e in group]
        work = unlearning_run_work(cfg, experiments)
        k = unlearning_k(cfg, experiments[0])
        calib = run_seconds(cfg, work.steps, work.calib_images, k, step_costs, parts=work.parts, unit_costs=unit_costs)
        evals = run_seconds(cfg, work.eval_steps, work.eval_images, k, step_costs, parts=work.eval_parts, unit_costs=unit_costs)
        n_calib = sum(1 for phase, _ in keys if phase == "calib")
        mean = (n_calib * calib + (len(keys) - n_calib) * evals) / len(keys)
        add(job_kind(plan, plan.nn.design_of(group[0]), group), bench / group[0] / f"unlearn_{chunk}.tsv", len(keys), mean, experiments[0]["method"])
    return jobs


def format_check(rows: list[KindCheck], device: str, startup_s: float, calibrated: bool, tolerance: float = TOLERANCE,
                 reference: tuple[float, float] | None = None) -> str:
    """The rows as a fixed-width table, a total, and the kinds outside ``tolerance`` (with a
    ``calibrated`` start-up the controls, which calibrated it, are shown but not counted)."""
    w = max([len("kind of job"), *(len(r.kind) for r in rows)])
    head = f"{'kind of job':<{w}} {'jobs':>5} {'runs':>6} {'predicted s':>12} {'measured s':>11} {'measured/predicted':>19}"
    lines = [head, "-" * len(head)]
    priced = [r for r in rows if math.isfinite(r.predicted_s)]
    total = KindCheck("all priced", sum(r.jobs for r in priced), sum(r.runs for r in priced),
                      sum(r.predicted_s for r in priced), sum(r.measured_s for r in priced))
    checked = [r for r in priced if not (calibrated and r.kind.startswith("control "))]
    for r in [*rows, total]:
        flag = "" if r.within(tolerance) else f"  outside {tolerance:g}x"
        flag = "  (calibrated the start-up)" if calibrated and r.kind.startswith("control ") else flag
        lines.append(f"{r.kind:<{w}} {r.jobs:>5} {r.runs:>6} {r.predicted_s:>12,.1f} {r.measured_s:>11,.1f} {r.ratio:>19.2f}{flag}")
    off = [r.kind for r in checked if not r.within(tolerance)]
    source = "the median control job less its runs' scoring" if calibrated else "--startup-s"
    lines.append(f"predicted: {startup_s:.2f} s of start-up a job ({source}) + {TRAINING_IMPORT_S:g} s of its first training step's import "
                 "in a job that trains + each run's steps and training-image equivalents "
                 f"at the step costs of the throughput rows whose device contains {device!r}; measured: the jobs' benchmark files")
    if reference is not None:
        here, rows_rate = reference
        lines.append(f"measured seconds normalised by the reference job: {here:,.0f} images/s beside the run against {rows_rate:,.0f} "
                     f"in its throughput row, so each measured second counts as {here / rows_rate:.3f} s of the rows' machine")
    else:
        lines.append("measured seconds as recorded (not normalised: give --reference-img-s, the reference job's images/s beside the run)")
    unpriced = [r.kind for r in rows if not math.isfinite(r.predicted_s)]
    if unpriced:
        lines.append(f"not priced (no throughput row for their model on this device): {', '.join(unpriced)}")
    lines.append(f"{len(checked) - len(off)} of {len(checked)} kinds checked within {tolerance:g}x" + (f"; outside: {', '.join(off)}" if off else ""))
    return "\n".join(lines)
