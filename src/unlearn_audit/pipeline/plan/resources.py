"""The resources of the jobs (SLURM ``mem_mb``, ``runtime``, ``gpu``, partition): a neural-network job's
from its design's dataset and run counts and the chunk pricing (:mod:`.pricing`), a CPU job's from
fixed sizes; each grows with the attempt so that ``--retries`` asks for more, the runtime up to the
walltime a job may ask for (``cluster.walltime_minutes``; docs/cluster.md).  Torch-free."""

from __future__ import annotations

from typing import Any, Sequence

from ...checks import check_positive_int
from ...data import dataset_job_mem_mb
from ...model_specs import model_spec
from .paths import chunk_keys
from .nn import NNPlan
from .pricing import ChunkPricing

__all__ = ["ResourcesPlan"]


class ResourcesPlan:
    """``resources:`` of the rules, for the designs of ``nn`` priced by ``pricing``."""

    #: Host memory (MB) of one neural-network job: the Python + torch process ...
    BASE_MEM_MB = 1500
    #: ... plus its dataset's arrays and loaders (``DatasetSpec.job_mem_mb`` of ``unlearn_audit.data.DATASETS``) ...
    #: ... plus its model's weights where its spec says (``ModelSpec.host_mem_mb``: a language model's,
    #: :func:`unlearn_audit.language_model_shapes.lm_host_mem_mb`) ...
    #: ... plus the host side of a CUDA context when the job requests a GPU.
    CUDA_MEM_MB = 2000
    #: CPU cores per GPU of a GPU job (the nn rules run one thread, ``threads: 1``).
    CPUS_PER_GPU = 1

    def __init__(self, config: dict[str, Any], nn: NNPlan, pricing: ChunkPricing):
        self.device = config["device"]
        self.cluster = config.get("cluster", {})
        self.nn = nn
        self.pricing = pricing

    def _check_resource_args(self, design: str, attempt: int) -> None:
        if design not in self.nn.designs():
            raise ValueError(f"unknown design {design!r}; nn.designs defines {sorted(self.nn.designs())}")
        if isinstance(attempt, bool) or not isinstance(attempt, int) or attempt < 1:
            raise ValueError(f"attempt must be an integer >= 1 (Snakemake counts from 1), got {attempt!r}")

    # ------------------------------------------------------------------ neural-network jobs
    def mem_mb(self, design: str, attempt: int = 1, *, cuda: bool | None = None, model: bool = True) -> int:
        """SLURM ``mem_mb`` of a job of ``design``: process + dataset (+ the model's weights where its
        spec counts them, a language model's, and the job loads the ``model``) (+ CUDA when ``cuda``,
        by default when the config's jobs request a GPU), times ``attempt`` (so that each retry under
        ``--retries`` asks for more)."""
        self._check_resource_args(design, attempt)
        cfg = self.nn.design(design)
        base = self.BASE_MEM_MB + dataset_job_mem_mb(cfg["dataset"])
        spec = model_spec(cfg["model"]["name"])
        if model and spec is not None:
            base += spec.job_mem_mb(cfg["model"].get("params", {}))
        cuda = bool(self.gpus()) if cuda is None else cuda
        return (base + (self.CUDA_MEM_MB if cuda else 0)) * attempt

    def runtime_minutes(self, design: str, n_runs: int, attempt: int = 1, experiments: Sequence[str] | None = None) -> int:
        """SLURM ``runtime`` of a chunk job of ``n_runs`` runs (base trainings, or unlearning runs of
        ``experiments``): :meth:`.pricing.ChunkPricing.job_runtime_minutes`."""
        self._check_resource_args(design, attempt)
        return self.pricing.job_runtime_minutes(design, n_runs, attempt, experiments)

    def walltime_problems(self) -> list[tuple[str, str]]:
        """(config key, message) for every design or unlearning group one run of which exceeds the walltime."""
        problems = []
        for design in self.nn.used_designs():
            for experiments in [None] + [g for g in self.nn.unlearn_groups() if self.nn.design_of(g[0]) == design]:
                try:
                    self.pricing.runs_per_job(design, experiments)
                except ValueError as err:
                    problems.append((f"nn.designs.{design}.runtime_minutes_per_run", str(err)))
        return problems

    def gpus(self) -> int:
        return 1 if self.device == "cuda" else 0

    def job_resources(self, design: str, n_runs: int, experiments: Sequence[str] | None = None) -> dict[str, Any]:
        """``resources:`` of a training chunk job of ``design`` (or, with ``experiments``, an unlearning
        chunk job of that group) over ``n_runs`` runs: ``mem_mb`` and ``runtime`` as functions of the
        attempt, ``gpu`` (the SLURM executor's ``--gpus``: one, or none on CPU) and, for a GPU job
        only, ``cpus_per_gpu`` and ``gpu_model`` (``cluster.gpu_model``, where set)."""
        self._check_resource_args(design, 1)
        return self._chunk_resources(lambda wildcards: (design, experiments), lambda wildcards: n_runs)

    def train_resources(self) -> dict[str, Any]:
        """``resources:`` of rules nn_train and nn_train_retrain (wildcards ``design`` and, for a chunk,
        ``chunk``): :meth:`job_resources` of the chunk's runs."""
        return self._chunk_resources(lambda wildcards: (wildcards.design, None), self._chunk_runs)

    def unlearn_resources(self) -> dict[str, Any]:
        """``resources:`` of rule nn_unlearn (wildcards ``group`` and ``chunk``): :meth:`job_resources`
        of the group's unlearning runs in the chunk."""
        return self._chunk_resources(lambda wildcards: (self.nn.design_of(wildcards.group), self.nn.group(wildcards.group)),
                                     self._chunk_runs)

    @staticmethod
    def _chunk_runs(wildcards) -> int:
        chunk = getattr(wildcards, "chunk", None)
        return 1 if chunk is None else len(chunk_keys(chunk))

    def _chunk_resources(self, owner, n_runs) -> dict[str, Any]:
        """The resources of a chunk job whose (design, experiments or None) and run count are functions
        of the rule's wildcards."""

        def runtime(wildcards, attempt):
            design, experiments = owner(wildcards)
            return self.runtime_minutes(design, n_runs(wildcards), attempt, experiments)

        resources: dict[str, Any] = {
            "mem_mb": lambda wildcards, attempt: self.mem_mb(owner(wildcards)[0], attempt),
            "runtime": runtime,
            "gpu": self.gpus(),
        }
        if resources["gpu"]:
            resources["cpus_per_gpu"] = self.CPUS_PER_GPU
            gpu_model = self.cluster.get("gpu_model")
            if gpu_model:
                resources["gpu_model"] = gpu_model
        return resources

    # ------------------------------------------------------------------ jobs that need no GPU
    def cpu_jobs_local(self) -> bool:
        """Whether the jobs that need no GPU (data preparation, fits, convex and Gaussian-unlearning
        cells) run on the submitting host (``cluster.cpu_jobs: local``), not as cluster jobs."""
        return self.cluster.get("cpu_jobs", "submit") == "local"

    def cpu_job_resources(self, mem_mb: int, runtime: int) -> dict[str, Any]:
        """``resources:`` of a job that needs no GPU: :meth:`attempt_resources`, and the partition
        ``cluster.cpu_partition`` where one is set (docs/cluster.md, "GPU and CPU partitions")."""
        return self.attempt_resources(mem_mb, runtime) | self._cpu_partition()

    def _cpu_partition(self) -> dict[str, str]:
        partition = self.cluster.get("cpu_partition")
        return {"slurm_partition": partition} if partition else {}

    def step_resources(self, minutes: int) -> dict[str, Any]:
        """``resources:`` of a CPU job of one design or experiment (wildcard ``design`` or
        ``experiment``): the design's ``mem_mb`` without CUDA or a model and ``minutes`` of runtime, both
        times the attempt, and ``cluster.cpu_partition`` where one is set."""

        def design_of(wildcards) -> str:
            design = getattr(wildcards, "design", None)
            return design if design is not None else self.nn.design_of(wildcards.experiment)

        return {
            "mem_mb": lambda wildcards, attempt: self.mem_mb(design_of(wildcards), attempt, cuda=False, model=False),
            "runtime": lambda wildcards, attempt: minutes * attempt,
        } | self._cpu_partition()

    @staticmethod
    def attempt_resources(mem_mb: int, runtime: int) -> dict[str, Any]:
        """``resources:`` ``mem_mb`` and ``runtime`` (minutes) that grow linearly with the attempt."""
        check_positive_int(mem_mb, "mem_mb")
        check_positive_int(runtime, "runtime")
        return {"mem_mb": lambda wildcards, attempt: mem_mb * attempt, "runtime": lambda wildcards, attempt: runtime * attempt}
