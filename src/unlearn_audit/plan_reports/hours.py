"""The cost model of a config (``unlearn-audit plan``): the work its neural-network DAG runs, per table
and figure, and the device-hours it costs at a measured throughput.

Work is counted as the DAG runs it (:class:`~.plan.WorkflowPlan`): base trainings (one per sign
vector of a batchwise design, one per candidate of a joint design, shared by every experiment on
the design), unlearning runs (one per experiment and run; experiments sharing a noiseless part
count it once, as :meth:`~..nn.NNPlan.unlearn_groups` runs it) and score extractions
(one per run, and one per checkpoint step).  Each is converted into *training-image equivalents*
(one forward and backward pass of one image; a forward-only pass counts 1/3, a Hessian–vector
product 2) from the design's data sizes and the method's hyperparameters, and into device-hours at
the images/s that ``benchmarks/throughput.py`` recorded in ``benchmarks/RESULTS.md`` for the
model on the named device (fp32; one model at a time, or the design's ``models_per_group`` K for its
base trainings and its ``unlearn_models_per_group`` K for the unlearning runs of the methods that can
be grouped, where K's row was recorded); the parts of a run that a per-unit row of the device
measures (Hessian–vector products, noisy steps, full-batch micro-batches: :func:`.runs.run_parts`)
at that row instead.  Where nothing
was recorded the hours are left out, or, with an assumed sustained TFLOP/s, estimated from the
model's FLOPs and marked as estimates.  Beside them, the runtime each kind of job asks for
(:func:`walltime_rows`: priced minutes, ``cluster.safety_factor``, start-up; docs/cluster.md).
Torch-free.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Mapping

from ..pipeline.controls import control_of
from ..pipeline.plan import WorkflowPlan
from ..pipeline.plan.pricing import ChunkPricing
from ..pipeline.plan.cost.runs import RunPart, add_parts, base_training_images, design_sizes, evaluation_metrics_work, group_run_parts, retrain_work, training_k, unlearning_k, unlearning_run_images
from ..pipeline.plan.cost.throughput import model_key, priced_parts, read_throughputs, tinynet_training_flops  # noqa: F401  (re-exported)

__all__ = ["Work", "design_sizes", "tinynet_training_flops", "read_throughputs", "plan_rows", "format_plan", "job_kind", "walltime_rows",
           "format_walltimes"]


@dataclass
class Work:
    """Counts and training-image equivalents of one table or figure (or of the whole config)."""

    base_trainings: int = 0
    unlearning_runs: int = 0
    score_extractions: int = 0
    images: float = 0.0

    def __iadd__(self, other: "Work") -> "Work":
        for f in dataclasses.fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        return self


def _design_work(plan: WorkflowPlan, design: str) -> Work:
    cfg = plan.nn.design(design)
    models = len(plan.nn.candidates(design)) if plan.nn.is_joint(design) else cfg["calibration_runs"] + cfg["evaluation_runs"]
    retrain = 1 if plan.nn.retrains(design) else 0  # A(D_r), the Retrain control's model
    return Work(base_trainings=models + retrain, images=models * base_training_images(cfg) + retrain * retrain_work(cfg)[1])


def _group_work(plan: WorkflowPlan, group: list[str]) -> dict[str, tuple[Work, dict[str, RunPart]]]:
    """Each experiment's share of its group's unlearning (the noiseless part split evenly), and of the
    parts of its runs that a per-unit row can price (:func:`.runs.run_parts`), over all its runs."""
    design = plan.nn.design_of(group[0])
    calib, evals = (len(plan.nn.phase_runs(design, ph)) for ph in ("calib", "eval"))
    experiments = [plan.nn.experiment(e) for e in group]
    per_run = unlearning_run_images(plan.nn.design(design), experiments)
    parts = add_parts({}, group_run_parts(plan.nn.design(design), experiments), (calib + evals) / len(group))
    add_parts(parts, evaluation_metrics_work(plan.nn.design(design))[2], evals)  # each experiment's own, in its evaluation runs
    out = {}
    for e, (shared, calib_scoring, eval_scoring) in zip(group, per_run):
        extractions = (calib + evals) * (1 + len(plan.nn.checkpoint_steps(e)))
        images = (calib + evals) * shared + calib * calib_scoring + evals * eval_scoring
        out[e] = (Work(unlearning_runs=calib + evals, score_extractions=extractions, images=images), parts)
    return out


def plan_rows(config: dict, throughputs: Mapping[tuple[str, str, int], float], assume_tflops: float | None = None,
              batched: int | None = None, unit_costs: Mapping | None = None) -> list[dict]:
    """One row per table and figure, and a ``total`` row in which every job counts once.

    A design's base trainings at the rate of its ``models_per_group`` K, and the unlearning runs of
    a method that can be grouped (:data:`~unlearn_audit.unlearning.params.BUILTIN_GROUPED`) at the rate
    of its design's ``unlearn_models_per_group`` K, where that row was recorded; everything else at
    the K = 1 rate; the parts of the runs that ``unit_costs`` (:func:`.throughput.read_unit_costs`)
    prices for the model at their own unit cost (:func:`.throughput.priced_parts`).  With ``batched``
    K each row also has ``device_hours_batched``: the same work with every TinyNet base training and
    every groupable unlearning run at K's rate (where recorded)."""
    plan = WorkflowPlan(config)
    per_exp: dict[str, tuple[Work, dict[str, RunPart]]] = {}
    for group in plan.nn.unlearn_groups():
        per_exp.update(_group_work(plan, group))
    per_design = {d: _design_work(plan, d) for d in plan.nn.used_designs()}

    def hours(experiments: list[str], designs: list[str], k: int | None = None) -> tuple[float, bool, list[str]]:
        """(device-hours of what can be costed, whether any of it is an estimate, designs left out)."""
        total, estimate, left_out = 0.0, False, set()
        parts = [(d, per_design[d].images, training_k(plan.nn.design(d), k), {}) for d in designs]
        parts += [(plan.nn.design_of(e), per_exp[e][0].images, unlearning_k(plan.nn.design(plan.nn.design_of(e)), plan.nn.experiment(e), k),
                   per_exp[e][1]) for e in experiments]
        for name, images, k, measured in parts:
            model, inp, flops = model_key(plan.nn.design(name))
            rate = throughputs.get((model, inp, k), throughputs.get((model, inp, 1)))
            _, taken, seconds = priced_parts(plan.nn.design(name), measured, unit_costs or {})
            if math.isfinite(images) and rate is not None:
                total += ((images - taken) / rate + seconds) / 3600
            elif math.isfinite(images) and assume_tflops and math.isfinite(flops):
                total += ((images - taken) * flops / (assume_tflops * 1e12) + seconds) / 3600
                estimate = True
            else:
                left_out.add(name)
        if len(left_out) == len({name for name, _, _, _ in parts}):
            return math.nan, False, sorted(left_out)
        return total, estimate, sorted(left_out)

    rows = []
    for target, experiments in {**plan.nn.target_experiments(), "total": plan.nn.experiments()}.items():
        designs = sorted({plan.nn.design_of(e) for e in experiments})
        work = Work()
        for d in designs:
            work += per_design[d]
        for e in experiments:
            work += per_exp[e][0]
        h, estimate, left_out = hours(experiments, designs)
        row = {"target": target, **dataclasses.asdict(work), "device_hours": h, "estimate": estimate, "left_out": left_out}
        if batched:
            row["device_hours_batched"] = hours(experiments, designs, batched)[0]
        rows.append(row)
    return rows


def format_plan(rows: list[dict], device: str, batched: int | None = None) -> str:
    """The rows as a fixed-width text table (with ``batched``, a column of the hours at K = ``batched``)."""
    head = f"{'target':<16} {'base trainings':>14} {'unlearning runs':>15} {'score extractions':>17} {'train-image equiv.':>18} {'hours on ' + device:>24}"
    if batched:
        head += f" {f'hours at K = {batched}':>16}"
    lines = [head, "-" * len(head)]
    left_out = sorted({d for r in rows for d in r["left_out"]})
    for r in rows:
        h = "not measured" if math.isnan(r["device_hours"]) else f"{r['device_hours']:,.2f}" + (" (estimate)" if r["estimate"] else "")
        h += " *" if r["left_out"] and not math.isnan(r["device_hours"]) else ""
        images = f"{r['images']:,.3g}" if math.isfinite(r["images"]) else "n/a"
        line = f"{r['target']:<16} {r['base_trainings']:>14,} {r['unlearning_runs']:>15,} {r['score_extractions']:>17,} {images:>18} {h:>24}"
        if batched:
            hb = r["device_hours_batched"]
            line += f" {'not measured' if math.isnan(hb) else f'{hb:,.2f}':>16}"
        lines.append(line)
    lines.append("tables and figures share base models and runs; 'total' counts every job once")
    if left_out:
        lines.append(f"* hours without the designs {', '.join(left_out)} (no size model or no throughput recorded for their model)")
    return "\n".join(lines)


def job_kind(plan: WorkflowPlan, design: str, group: list[str] | None = None) -> str:
    """A chunk job's kind: ``train <model>`` (a base training or A(D_r)), ``unlearn <method>, <model>``
    or, for a control's group, ``control <label>, <model>``."""
    model = model_key(plan.nn.design(design))[0]
    if group is None:
        return f"train {model}"
    exp = plan.nn.experiment(group[0])
    control = control_of(exp)
    if control is not None:
        return f"control {control.label}, {model}"
    return f"unlearn {exp['method']}, {model}"


def _chunk_jobs(plan: WorkflowPlan) -> list[tuple[str, int, list[str] | None]]:
    """(design, runs, group or None) of every training and unlearning chunk job of the DAG."""
    jobs = [(d, len(keys), None) for d, _, keys in plan.nn.design_chunks()]
    return jobs + [(plan.nn.design_of(g[0]), len(keys), g) for g, _, keys in plan.nn.experiment_chunks()]


def walltime_rows(config: dict) -> list[dict]:
    """Per kind of chunk job (:func:`job_kind`), what its jobs ask SLURM for at the first attempt
    (docs/cluster.md, "Runtimes from the cost model"): ``jobs``, ``runs``, ``priced_min`` (their
    runs' minutes before the factor, :meth:`..pricing.ChunkPricing.priced_run_minutes`), ``factor``
    (:meth:`..pricing.ChunkPricing.safety_factor`), ``startup_min`` (:attr:`..pricing.ChunkPricing.JOB_OVERHEAD_MINUTES`
    a job) and ``requested_min``
    (the jobs' ``runtime``: the factor times the priced minutes, rounded up, plus the start-up, at
    most ``cluster.walltime_minutes``)."""
    plan = WorkflowPlan(config)
    pricing = plan.pricing
    rows: dict[str, dict] = {}
    for design, runs, group in _chunk_jobs(plan):
        kind = job_kind(plan, design, group)
        row = rows.setdefault(kind, {"kind": kind, "jobs": 0, "runs": 0, "priced_min": 0.0, "factor": pricing.safety_factor(),
                                     "startup_min": 0, "requested_min": 0})
        row["jobs"] += 1
        row["runs"] += runs
        row["priced_min"] += runs * pricing.priced_run_minutes(design, group)
        row["startup_min"] += pricing.JOB_OVERHEAD_MINUTES
        row["requested_min"] += plan.resources.runtime_minutes(design, runs, 1, group)
    return sorted(rows.values(), key=lambda r: r["kind"])


def format_walltimes(rows: list[dict], cluster: Mapping) -> str:
    """:func:`walltime_rows` as a fixed-width table with a total, and how the runs were priced."""
    w = max([len("kind of job"), *(len(r["kind"]) for r in rows)])
    head = f"{'kind of job':<{w}} {'jobs':>5} {'runs':>6} {'priced min':>11} {'factor':>6} {'start-up min':>12} {'requested min':>13}"
    total = {"kind": "all", **{key: sum(r[key] for r in rows) for key in ("jobs", "runs", "priced_min", "startup_min", "requested_min")},
             "factor": rows[0]["factor"] if rows else 1.0}
    lines = [head, "-" * len(head)]
    for r in [*rows, total]:
        lines.append(f"{r['kind']:<{w}} {r['jobs']:>5,} {r['runs']:>6,} {r['priced_min']:>11,.1f} {r['factor']:>6g} {r['startup_min']:>12,} "
                     f"{r['requested_min']:>13,}")
    if cluster.get("runtime_from") == "cost_model":
        basis = (f"each run's steps and images at the step costs of the rows whose device contains {cluster.get('cost_device', 'cpu')!r} "
                 f"(its per-unit rows for Hessian–vector products, noisy steps and full-batch micro-batches), else at "
                 f"{cluster.get('assume_tflops')} TFLOP/s")
    else:
        basis = "a base training at the design's runtime_minutes_per_run, an unlearning run at that times its training-image equivalents' ratio"
    lines.append(f"runtime requests (cluster.runtime_from: {cluster.get('runtime_from', 'config')}): a chunk job asks for factor x its runs' "
                 f"priced minutes, rounded up, + {ChunkPricing.JOB_OVERHEAD_MINUTES} min of start-up, at most "
                 f"cluster.walltime_minutes = {cluster.get('walltime_minutes', 1440)}; priced: {basis}")
    return "\n".join(lines)
