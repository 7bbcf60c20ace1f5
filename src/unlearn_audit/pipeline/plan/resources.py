"""The resources of the neural-network jobs (SLURM ``mem_mb``, ``runtime``, ``gpu``), from the design's
dataset and run counts; each grows with the attempt so that ``--retries`` asks for more, the runtime up
to the walltime a job may ask for (``cluster.walltime_minutes``).  A base training is priced at the
design's ``runtime_minutes_per_run``; an unlearning run at that times the cost model's ratio of its
training-image equivalents to a base training's (:mod:`..run_cost`).  Torch-free."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Sequence

from ...checks import check_positive_int
from ...data import DATASETS
from ..run_cost import base_training_images, base_training_steps, training_k, unlearning_k, unlearning_run_work
from ..throughput import model_key, read_hvp_costs, read_step_costs, run_seconds
from .. import paths
from .base import PlanBase

__all__ = ["ResourcesPlan"]


class ResourcesPlan(PlanBase):
    """``resources:`` of the nn rules (it reads designs through :class:`.nn.NNPlan`'s methods)."""

    # ------------------------------------------------------------------ job resources (SLURM)
    #: Host memory (MB) of one neural-network job: the Python + torch process ...
    NN_BASE_MEM_MB = 1500
    #: ... plus its dataset's arrays and loaders (``DatasetSpec.job_mem_mb`` of ``unlearn_audit.data.DATASETS``) ...
    #: ... plus the host side of a CUDA context when the job requests a GPU.
    NN_CUDA_MEM_MB = 2000
    #: CPU cores per GPU of a GPU job (the nn rules run one thread, ``threads: 1``).
    NN_CPUS_PER_GPU = 1

    def _check_resource_args(self, design: str, attempt: int) -> None:
        if design not in self.nn["designs"]:
            raise ValueError(f"unknown design {design!r}; nn.designs defines {sorted(self.nn['designs'])}")
        if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
            raise ValueError(f"attempt must be an integer >= 1 (Snakemake counts from 1), got {attempt!r}")

    def nn_mem_mb(self, design: str, attempt: int = 1, *, cuda: bool | None = None) -> int:
        """SLURM ``mem_mb`` of a job of ``design``: process + dataset (+ CUDA when ``cuda``, by
        default when the config's jobs request a GPU), times ``attempt`` (so that each retry under
        ``--retries`` asks for more)."""
        self._check_resource_args(design, attempt)
        dataset = self.nn_design(design)["dataset"]
        base = self.NN_BASE_MEM_MB + DATASETS[dataset].job_mem_mb
        cuda = bool(self.nn_gpus()) if cuda is None else cuda
        return (base + (self.NN_CUDA_MEM_MB if cuda else 0)) * attempt

    #: Minutes a chunk job spends besides its runs (process and torch start-up, data load, writes).
    NN_JOB_OVERHEAD_MINUTES = 5

    def nn_walltime_minutes(self) -> int:
        """The longest ``runtime`` a job asks for (``cluster.walltime_minutes``, default 24 h)."""
        return int(self.config.get("cluster", {}).get("walltime_minutes", 1440))

    def nn_run_minutes(self, design: str, experiments: Sequence[str] | None = None) -> float:
        """Minutes of one run: a base training of ``design`` (its ``runtime_minutes_per_run``), or, with
        ``experiments`` (a group that unlearns together, :meth:`nn_unlearn_groups`), one unlearning run
        of them with its scoring: the training minutes times the ratio of the two runs' training-image
        equivalents (the training minutes where the cost model has no size for the design)."""
        key = (design, None if experiments is None else tuple(experiments))
        cache = self.__dict__.setdefault("_nn_run_minutes_cache", {})  # a large DAG asks once a job
        if key not in cache:
            cache[key] = self._nn_run_minutes(design, experiments)
        return cache[key]

    #: The throughput records ``cluster.runtime_from: cost_model`` prices runs with.
    THROUGHPUT_RECORDS = Path(__file__).resolve().parents[4] / "benchmarks" / "RESULTS.md"

    def _nn_run_minutes(self, design: str, experiments: Sequence[str] | None) -> float:
        cfg = self.nn_design(design)
        if self.config.get("cluster", {}).get("runtime_from") == "cost_model":
            return self._priced_run_minutes(design, experiments)
        minutes = float(cfg.get("runtime_minutes_per_run", 5))
        if experiments is None:
            return minutes
        train = base_training_images(cfg)
        # an evaluation run (it also measures retain and test accuracy) prices every run of the job
        run = unlearning_run_work(cfg, [self.nn_experiment(e) for e in experiments])[2]
        return minutes * run / train if math.isfinite(run) and math.isfinite(train) and train > 0 else minutes

    def _priced_run_minutes(self, design: str, experiments: Sequence[str] | None) -> float:
        """``cluster.runtime_from: cost_model``: the run's steps and images (an evaluation run's
        scoring included) at the step costs recorded for ``cluster.cost_device`` (else at
        ``cluster.assume_tflops``), times ``cluster.safety_factor``, in minutes."""
        cluster = self.config.get("cluster", {})
        costs = self.__dict__.get("_step_costs")
        if costs is None:
            device = cluster.get("cost_device", "cpu")
            costs = self.__dict__["_step_costs"] = (read_step_costs(self.THROUGHPUT_RECORDS, device), read_hvp_costs(self.THROUGHPUT_RECORDS, device))
        costs, hvp_costs = costs
        cfg = self.nn_design(design)
        if experiments is None:
            steps, images, k, hvps = base_training_steps(cfg), base_training_images(cfg), training_k(cfg), (0.0, 0.0)
        else:  # an evaluation run (it also measures retain and test accuracy) prices every run of the job
            exps = [self.nn_experiment(e) for e in experiments]
            steps, _, images, hvps = unlearning_run_work(cfg, exps)
            k = unlearning_k(cfg, exps[0])
        seconds = run_seconds(cfg, steps, images, k, costs, cluster.get("assume_tflops"), hvps, hvp_costs)
        if not math.isfinite(seconds):
            model, inp, _ = model_key(cfg)
            raise ValueError(f"cluster.runtime_from is cost_model, but no throughput row of {model} {inp} (design {design!r}) "
                             f"on {cluster.get('cost_device', 'cpu')!r} is in {self.THROUGHPUT_RECORDS} and cluster.assume_tflops "
                             "is not set: record one (bash benchmarks/gpu.sh), set assume_tflops, or use runtime_from: config")
        return float(cluster.get("safety_factor", 2)) * seconds / 60

    def nn_runs_per_job(self, design: str, experiments: Sequence[str] | None = None) -> int:
        """How many runs one chunk job holds: the design's ``chunk_size``, or fewer where that many
        would ask for more than the walltime.  Raises where one run alone would."""
        per_run = self.nn_run_minutes(design, experiments)
        room = self.nn_walltime_minutes() - self.NN_JOB_OVERHEAD_MINUTES
        fits = math.floor(room / per_run) if per_run > 0 else self.nn_design(design)["chunk_size"]
        if fits < 1:
            what = f"an unlearning run of {', '.join(experiments)}" if experiments else f"a base training of design {design!r}"
            raise ValueError(f"{what} is priced at {per_run:.0f} min (runtime_minutes_per_run = "
                             f"{self.nn_design(design).get('runtime_minutes_per_run', 5)} min a base training), more than "
                             f"cluster.walltime_minutes = {self.nn_walltime_minutes()} less {self.NN_JOB_OVERHEAD_MINUTES} min of start-up; "
                             "raise cluster.walltime_minutes to what your partition grants, or lower runtime_minutes_per_run if the estimate is too high")
        return min(int(self.nn_design(design)["chunk_size"]), fits)

    def nn_walltime_problems(self) -> list[tuple[str, str]]:
        """(config key, message) for every design or unlearning group one run of which exceeds the walltime."""
        problems = []
        for design in self.nn_used_designs():
            for experiments in [None] + [g for g in self.nn_unlearn_groups() if self.nn_design_of(g[0]) == design]:
                try:
                    self.nn_runs_per_job(design, experiments)
                except ValueError as err:
                    problems.append((f"nn.designs.{design}.runtime_minutes_per_run", str(err)))
        return problems

    def nn_runtime_minutes(self, design: str, n_runs: int, attempt: int = 1, experiments: Sequence[str] | None = None) -> int:
        """SLURM ``runtime`` of a chunk job of ``n_runs`` runs (base trainings, or unlearning runs of
        ``experiments``): their minutes plus :attr:`NN_JOB_OVERHEAD_MINUTES`, times ``attempt``, at most
        the walltime."""
        self._check_resource_args(design, attempt)
        minutes = math.ceil(self.nn_run_minutes(design, experiments) * n_runs) + self.NN_JOB_OVERHEAD_MINUTES
        return min(minutes * attempt, self.nn_walltime_minutes())

    def nn_gpus(self) -> int:
        return 1 if self.config["device"] == "cuda" else 0

    def nn_job_resources(self, design: str, n_runs: int, experiments: Sequence[str] | None = None) -> dict[str, Any]:
        """``resources:`` of a training chunk job of ``design`` (or, with ``experiments``, an unlearning
        chunk job of that group) over ``n_runs`` runs: ``mem_mb`` and ``runtime`` as functions of the
        attempt, ``gpu`` (the SLURM executor's ``--gpus``: one, or none on CPU) and, for a GPU job
        only, ``cpus_per_gpu`` and ``gpu_model`` (``cluster.gpu_model``, where set)."""
        self._check_resource_args(design, 1)
        return self._nn_chunk_resources(lambda wildcards: (design, experiments), lambda wildcards: n_runs)

    def nn_train_resources(self) -> dict[str, Any]:
        """``resources:`` of rules nn_train and nn_train_retrain (wildcards ``design`` and, for a chunk,
        ``chunk``): :meth:`nn_job_resources` of the chunk's runs."""
        return self._nn_chunk_resources(lambda wildcards: (wildcards.design, None), self._nn_chunk_runs)

    def nn_unlearn_resources(self) -> dict[str, Any]:
        """``resources:`` of rule nn_unlearn (wildcards ``group`` and ``chunk``): :meth:`nn_job_resources`
        of the group's unlearning runs in the chunk."""
        return self._nn_chunk_resources(lambda wildcards: (self.nn_design_of(wildcards.group), self.nn_group(wildcards.group)),
                                        self._nn_chunk_runs)

    @staticmethod
    def _nn_chunk_runs(wildcards) -> int:
        chunk = getattr(wildcards, "chunk", None)
        return 1 if chunk is None else len(paths.chunk_keys(chunk))

    def _nn_chunk_resources(self, owner, n_runs) -> dict[str, Any]:
        """The resources of a chunk job whose (design, experiments or None) and run count are functions
        of the rule's wildcards."""

        def runtime(wildcards, attempt):
            design, experiments = owner(wildcards)
            return self.nn_runtime_minutes(design, n_runs(wildcards), attempt, experiments)

        resources: dict[str, Any] = {
            "mem_mb": lambda wildcards, attempt: self.nn_mem_mb(owner(wildcards)[0], attempt),
            "runtime": runtime,
            "gpu": self.nn_gpus(),
        }
        if resources["gpu"]:
            resources["cpus_per_gpu"] = self.NN_CPUS_PER_GPU
            gpu_model = self.config.get("cluster", {}).get("gpu_model")
            if gpu_model:
                resources["gpu_model"] = gpu_model
        return resources

    # ------------------------------------------------------------------ jobs that need no GPU
    def cpu_jobs_local(self) -> bool:
        """Whether the jobs that need no GPU (data preparation, fits, convex and Gaussian-unlearning
        cells) run on the submitting host (``cluster.cpu_jobs: local``), not as cluster jobs."""
        return self.config.get("cluster", {}).get("cpu_jobs", "submit") == "local"

    def cpu_job_resources(self, mem_mb: int, runtime: int) -> dict[str, Any]:
        """``resources:`` of a job that needs no GPU: :meth:`attempt_resources`, and the partition
        ``cluster.cpu_partition`` where one is set (docs/cluster.md, "GPU and CPU partitions")."""
        return self.attempt_resources(mem_mb, runtime) | self._cpu_partition()

    def _cpu_partition(self) -> dict[str, str]:
        partition = self.config.get("cluster", {}).get("cpu_partition")
        return {"slurm_partition": partition} if partition else {}

    def nn_step_resources(self, minutes: int) -> dict[str, Any]:
        """``resources:`` of a CPU job of one design or experiment (wildcard ``design`` or
        ``experiment``): the design's ``mem_mb`` without CUDA and ``minutes`` of runtime, both
        times the attempt, and ``cluster.cpu_partition`` where one is set."""

        def design_of(wildcards) -> str:
            design = getattr(wildcards, "design", None)
            return design if design is not None else self.nn_design_of(wildcards.experiment)

        return {
            "mem_mb": lambda wildcards, attempt: self.nn_mem_mb(design_of(wildcards), attempt, cuda=False),
            "runtime": lambda wildcards, attempt: minutes * attempt,
        } | self._cpu_partition()

    @staticmethod
    def attempt_resources(mem_mb: int, runtime: int) -> dict[str, Any]:
        """``resources:`` ``mem_mb`` and ``runtime`` (minutes) that grow linearly with the attempt."""
        check_positive_int(mem_mb, "mem_mb")
        check_positive_int(runtime, "runtime")
        return {"mem_mb": lambda wildcards, attempt: mem_mb * attempt, "runtime": lambda wildcards, attempt: runtime * attempt}
