"""The resources of the neural-network jobs (SLURM ``mem_mb``, ``runtime``, ``gpu``), from the design's
dataset and run counts; each grows with the attempt so that ``--retries`` asks for more.  Torch-free."""

from __future__ import annotations

from typing import Any

from ...checks import check_positive_int
from ...data import DATASETS
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

    def nn_runtime_minutes(self, design: str, n_runs: int, attempt: int = 1) -> int:
        """SLURM ``runtime`` of a chunk job: the design's minutes per run times its runs, plus 5,
        times ``attempt``."""
        self._check_resource_args(design, attempt)
        return (int(self.nn_design(design).get("runtime_minutes_per_run", 5) * n_runs) + 5) * attempt

    def nn_gpus(self) -> int:
        return 1 if self.config["device"] == "cuda" else 0

    def nn_job_resources(self, design: str, n_runs: int) -> dict[str, Any]:
        """``resources:`` of a training or unlearning chunk job of ``design`` over ``n_runs`` runs:
        ``mem_mb`` and ``runtime`` as functions of the attempt, ``gpu`` (the SLURM executor's
        ``--gpus``) and, for a GPU job only, ``cpus_per_gpu``."""
        self._check_resource_args(design, 1)
        resources: dict[str, Any] = {
            "mem_mb": lambda wildcards, attempt: self.nn_mem_mb(design, attempt),
            "runtime": lambda wildcards, attempt: self.nn_runtime_minutes(design, n_runs, attempt),
            "gpu": self.nn_gpus(),
        }
        if resources["gpu"]:
            resources["cpus_per_gpu"] = self.NN_CPUS_PER_GPU
        return resources

    def nn_step_resources(self, minutes: int) -> dict[str, Any]:
        """``resources:`` of a CPU job of one design or experiment (wildcard ``design`` or
        ``experiment``): the design's ``mem_mb`` without CUDA and ``minutes`` of runtime, both
        times the attempt."""

        def design_of(wildcards) -> str:
            design = getattr(wildcards, "design", None)
            return design if design is not None else self.nn_design_of(wildcards.experiment)

        return {
            "mem_mb": lambda wildcards, attempt: self.nn_mem_mb(design_of(wildcards), attempt, cuda=False),
            "runtime": lambda wildcards, attempt: minutes * attempt,
        }

    @staticmethod
    def attempt_resources(mem_mb: int, runtime: int) -> dict[str, Any]:
        """``resources:`` ``mem_mb`` and ``runtime`` (minutes) that grow linearly with the attempt."""
        check_positive_int(mem_mb, "mem_mb")
        check_positive_int(runtime, "runtime")
        return {"mem_mb": lambda wildcards, attempt: mem_mb * attempt, "runtime": lambda wildcards, attempt: runtime * attempt}
