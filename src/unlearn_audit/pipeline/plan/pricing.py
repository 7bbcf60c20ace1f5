"""How many runs a chunk job holds, from what one run is priced at: shared by the NN plan (which cuts
the chunks, :class:`.nn.NNPlan`) and the jobs' resources (which ask for their runtime,
:class:`.resources.ResourcesPlan`).  A base training is priced at the design's
``runtime_minutes_per_run``; an unlearning run at that times the cost model's ratio of its
training-image equivalents to a base training's (:mod:`.cost.runs`); under ``cluster.runtime_from:
cost_model`` both at the step costs recorded in ``benchmarks/RESULTS.md``, the parts its per-unit rows
measure at those rows (:mod:`.cost.throughput`), times ``cluster.safety_factor`` (docs/cluster.md).
Torch-free."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

from .cost.runs import base_training_images, base_training_steps, training_k, unlearning_k, unlearning_run_work
from .cost.throughput import model_key, priced_parts, read_step_costs, read_throughputs, read_unit_costs, run_seconds

__all__ = ["ChunkPricing"]


class ChunkPricing:
    """Minutes of one run and runs per chunk job, for the designs and experiments of ``config["nn"]``
    under the walltime and cost settings of ``config["cluster"]``."""

    #: Minutes a chunk job spends besides its runs (process and torch start-up, data load, writes).
    JOB_OVERHEAD_MINUTES = 5
    #: The throughput records ``cluster.runtime_from: cost_model`` prices runs with.
    THROUGHPUT_RECORDS = Path(__file__).resolve().parents[4] / "benchmarks" / "RESULTS.md"

    def __init__(self, config: dict[str, Any]):
        self.cluster = config.get("cluster", {})
        self._designs = config["nn"]["designs"]
        self._experiments = config["nn"]["experiments"]
        self._minutes: dict[tuple, float] = {}  # a large DAG asks once a job
        self._records: tuple | None = None

    def _costs(self) -> tuple[dict, dict, dict]:
        """(step costs, per-unit costs, training images/s) that ``benchmarks/RESULTS.md`` records for
        ``cluster.cost_device`` (:mod:`.cost.throughput`), read once."""
        if self._records is None:
            device = self.cluster.get("cost_device", "cpu")
            self._records = (read_step_costs(self.THROUGHPUT_RECORDS, device), read_unit_costs(self.THROUGHPUT_RECORDS, device),
                             read_throughputs(self.THROUGHPUT_RECORDS, device))
        return self._records

    def safety_factor(self) -> float:
        """What a run's priced minutes are multiplied by in its job's ``runtime``: ``cluster.safety_factor``
        (default 2) under ``runtime_from: cost_model``, 1 under ``runtime_from: config`` (docs/cluster.md)."""
        return float(self.cluster.get("safety_factor", 2)) if self.cluster.get("runtime_from") == "cost_model" else 1.0

    def walltime_minutes(self) -> int:
        """The longest ``runtime`` a job asks for (``cluster.walltime_minutes``, default 24 h)."""
        return int(self.cluster.get("walltime_minutes", 1440))

    def run_minutes(self, design: str, experiments: Sequence[str] | None = None) -> float:
        """Minutes of one run: a base training of ``design`` (its ``runtime_minutes_per_run``), or, with
        ``experiments`` (a group that unlearns together, :meth:`.nn.NNPlan.unlearn_groups`), one unlearning run
        of them with its scoring: the training minutes times the ratio of the two runs' training-image
        equivalents (the training minutes where the cost model has no size for the design)."""
        key = (design, None if experiments is None else tuple(experiments))
        if key not in self._minutes:
            self._minutes[key] = self._run_minutes(design, experiments)
        return self._minutes[key]

    def _run_minutes(self, design: str, experiments: Sequence[str] | None) -> float:
        cfg = self._designs[design]
        if self.cluster.get("runtime_from") == "cost_model":
            return self.safety_factor() * self._priced_run_seconds(design, experiments) / 60
        minutes = float(cfg.get("runtime_minutes_per_run", 5))
        if experiments is None:
            return minutes
        train = base_training_images(cfg)
        # an evaluation run (it also measures retain and test accuracy) prices every run of the job
        work = unlearning_run_work(cfg, [self._experiments[e] for e in experiments])
        run = self._measured_parts_as_images(cfg, work.eval_images, work.eval_parts)
        return minutes * run / train if math.isfinite(run) and math.isfinite(train) and train > 0 else minutes

    def _measured_parts_as_images(self, cfg: dict, images: float, parts: dict) -> float:
        """``runtime_from: config``: a run's training-image equivalents with the parts that a per-unit
        row of ``cluster.cost_device`` prices (:func:`.cost.throughput.priced_parts`: Hessian–vector
        products, noisy steps, full-batch micro-batches) counted as the images their measured seconds
        buy at the model's recorded training rate there (K = 1); as counted without both."""
        if not parts:
            return images
        _, unit_costs, rates = self._costs()
        model, inp, _ = model_key(cfg)
        rate = rates.get((model, inp, 1))
        _, taken, seconds = priced_parts(cfg, parts, unit_costs)
        return images - taken + seconds * rate if taken and rate else images

    def priced_run_minutes(self, design: str, experiments: Sequence[str] | None = None) -> float:
        """Minutes of one run before :meth:`safety_factor`: :meth:`run_minutes` over it."""
        return self.run_minutes(design, experiments) / self.safety_factor()

    def _priced_run_seconds(self, design: str, experiments: Sequence[str] | None) -> float:
        """``cluster.runtime_from: cost_model``: the run's steps and images (an evaluation run's
        scoring included) at the step costs recorded for ``cluster.cost_device`` (else at
        ``cluster.assume_tflops``), the parts a per-unit row of the device prices at that row
        (:func:`.cost.throughput.run_seconds`), in seconds, before :meth:`safety_factor`."""
        costs, unit_costs, _ = self._costs()
        cfg = self._designs[design]
        if experiments is None:
            steps, images, k, parts = base_training_steps(cfg), base_training_images(cfg), training_k(cfg), {}
        else:  # an evaluation run (it also measures retain and test accuracy) prices every run of the job
            exps = [self._experiments[e] for e in experiments]
            work = unlearning_run_work(cfg, exps)
            steps, images, parts, k = work.eval_steps, work.eval_images, work.eval_parts, unlearning_k(cfg, exps[0])
        seconds = run_seconds(cfg, steps, images, k, costs, self.cluster.get("assume_tflops"), parts, unit_costs)
        if not math.isfinite(seconds):
            model, inp, _ = model_key(cfg)
            raise ValueError(f"cluster.runtime_from is cost_model, but no throughput row of {model} {inp} (design {design!r}) "
                             f"on {self.cluster.get('cost_device', 'cpu')!r} is in {self.THROUGHPUT_RECORDS} and cluster.assume_tflops "
                             "is not set: record one (bash benchmarks/gpu.sh), set assume_tflops, or use runtime_from: config")
        return seconds

    def runs_per_job(self, design: str, experiments: Sequence[str] | None = None) -> int:
        """How many runs one chunk job holds: the design's ``chunk_size``, or fewer where that many
        would ask for more than the walltime.  Raises where one run alone would."""
        cfg = self._designs[design]
        per_run = self.run_minutes(design, experiments)
        room = self.walltime_minutes() - self.JOB_OVERHEAD_MINUTES
        fits = math.floor(room / per_run) if per_run > 0 else cfg["chunk_size"]
        if fits < 1:
            what = f"an unlearning run of {', '.join(experiments)}" if experiments else f"a base training of design {design!r}"
            raise ValueError(f"{what} is priced at {per_run:.0f} min (runtime_minutes_per_run = "
                             f"{cfg.get('runtime_minutes_per_run', 5)} min a base training), more than "
                             f"cluster.walltime_minutes = {self.walltime_minutes()} less {self.JOB_OVERHEAD_MINUTES} min of start-up; "
                             "raise cluster.walltime_minutes to what your partition grants, or lower runtime_minutes_per_run if the estimate is too high")
        return min(int(cfg["chunk_size"]), fits)

    def job_runtime_minutes(self, design: str, n_runs: int, attempt: int = 1, experiments: Sequence[str] | None = None) -> int:
        """SLURM ``runtime`` of a chunk job of ``n_runs`` runs (base trainings, or unlearning runs of
        ``experiments``): their minutes plus :attr:`JOB_OVERHEAD_MINUTES`, times ``attempt``, at most
        the walltime."""
        minutes = math.ceil(self.run_minutes(design, experiments) * n_runs) + self.JOB_OVERHEAD_MINUTES
        return min(minutes * attempt, self.walltime_minutes())
