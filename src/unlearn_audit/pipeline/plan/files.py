"""The files of a run under its ``results_dir``, as the rules name them (:mod:`.paths` builds each
one; docs/workflow.md#the-dag-step-by-step).  The sections' plans are built with one.  Torch-free."""

from __future__ import annotations

# each method calls the function of its name in .paths with the run's results_dir
from .paths import (base_chunk_dir, base_model, convex_file, design_file, experiment_file, figure_files, gaussian_unlearning_cell,
                    gaussian_unlearning_file, retrain_model, run_file, table_files, unlearn_chunk_dir)

__all__ = ["PlanFiles"]


class PlanFiles:
    """The paths of one results directory's tables, figures, logs, benchmarks and per-run files."""

    def __init__(self, results: str):
        self.results = results

    def table_files(self, name: str) -> list[str]:
        return table_files(self.results, name)

    def figure_files(self, name: str) -> list[str]:
        return figure_files(self.results, name)

    def table_stem(self, name: str) -> str:
        return f"{self.results}/tables/{name}"

    def figure_stem(self, name: str) -> str:
        return f"{self.results}/figures/{name}"

    def log(self, name: str) -> str:
        return f"{self.results}/logs/{name}"

    def benchmark(self, name: str) -> str:
        return f"{self.results}/benchmarks/{name}"

    def design_file(self, design: str, name: str) -> str:
        return design_file(self.results, design, name)

    def base_chunk_dir(self, design: str, chunk: str) -> str:
        return base_chunk_dir(self.results, design, chunk)

    def base_model(self, design: str, chunk: str, phase: str, run: int | str) -> str:
        return base_model(self.results, design, chunk, phase, run)

    def retrain_model(self, design: str) -> str:
        return retrain_model(self.results, design)

    def experiment_file(self, experiment: str, name: str) -> str:
        return experiment_file(self.results, experiment, name)

    def unlearn_chunk_dir(self, group: str, chunk: str) -> str:
        return unlearn_chunk_dir(self.results, group, chunk)

    def run_file(self, group: str, chunk: str, experiment: str, phase: str, run: int | str, name: str) -> str:
        return run_file(self.results, group, chunk, experiment, phase, run, name)

    def convex_file(self, mechanism: str, epsilon, name: str) -> str:
        return convex_file(self.results, mechanism, epsilon, name)

    def gaussian_unlearning_file(self, name: str) -> str:
        return gaussian_unlearning_file(self.results, name)

    def gaussian_unlearning_cell(self, experiment: str, x) -> str:
        return gaussian_unlearning_cell(self.results, experiment, x)
