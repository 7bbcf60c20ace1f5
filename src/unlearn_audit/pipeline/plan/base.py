"""What every section's plan shares: the config, the results directory, the file paths (:mod:`..paths`)
and the experiment helpers that the rule steps read too (the pre-registered cell, the certified claim,
the audited δ).  Torch-free."""

from __future__ import annotations

from typing import Any, Mapping

from .. import paths
from ...stats.selection import DEFAULT_CELL, Cell

__all__ = ["PHASES", "DEVICE_PATH_KEYS", "preregistered_cell", "certified_claim", "audit_delta", "method_params", "chunks", "PlanBase"]

PHASES = ("calib", "eval")
#: The design keys that name a device setting (bf16 autocast, torch.compile, deterministic kernels):
#: params of the torch rules.
DEVICE_PATH_KEYS = ("precision", "compile", "deterministic")


def chunks(runs: list[int], size: int) -> list[list[int]]:
    return [runs[i : i + size] for i in range(0, len(runs), size)]


def preregistered_cell(experiment_cfg: Mapping) -> Cell:
    """The experiment's pre-registered cell (report_r, statistic, score, test); defaults: largest r, mean, logit, theorem4.2.
    Under ``report_r: calibrated`` the r is chosen by the audit itself, on the calibration runs
    (:mod:`unlearn_audit.auditors.calibrated_r`): here it is the grid's largest, a placeholder."""
    r = experiment_cfg.get("report_r") or max(experiment_cfg["r"])
    if r == "calibrated":
        r = max(experiment_cfg["r"])
    return Cell(int(r), experiment_cfg.get("statistic", DEFAULT_CELL["statistic"]), experiment_cfg.get("score", DEFAULT_CELL["score"]),
                experiment_cfg.get("test", DEFAULT_CELL["test"]))


def method_params(experiment_cfg: Mapping):
    """The experiment's hyperparameters as its method's dataclass (defaults filled in; torch-free)."""
    from ...unlearning import make_params

    return make_params(experiment_cfg["method"], experiment_cfg.get("params", {}))


def certified_claim(experiment_cfg: Mapping) -> tuple[float, float] | None:
    """The (ε, δ) an experiment's algorithm is certified at (its params' ``claim``), or ``None``."""
    return getattr(method_params(experiment_cfg), "claim", None)


def audit_delta(experiment_cfg: Mapping) -> float:
    """The δ an experiment is audited at: the certified δ of its (ε, δ) claim (model clipping's
    fixed-step variant and the uncertified methods make none), else 0.  A δ = 0 bound is not a
    test of an (ε, δ) claim (Lemma C.1, App. A.3)."""
    claim = certified_claim(experiment_cfg)
    return 0.0 if claim is None else claim[1]


class PlanBase:
    """The config of a plan and the paths of its files (every section's plan derives from it)."""

    def __init__(self, config: dict[str, Any]):
        self.config = config
        self.results = config["results_dir"]
        self.nn = config["nn"]

    # ------------------------------------------------------------------ files
    def table_files(self, name: str) -> list[str]:
        return paths.table_files(self.results, name)

    def figure_files(self, name: str) -> list[str]:
        return paths.figure_files(self.results, name)

    def table_stem(self, name: str) -> str:
        return f"{self.results}/tables/{name}"

    def figure_stem(self, name: str) -> str:
        return f"{self.results}/figures/{name}"

    def log(self, name: str) -> str:
        return f"{self.results}/logs/{name}"

    def benchmark(self, name: str) -> str:
        return f"{self.results}/benchmarks/{name}"

    def design_file(self, design: str, name: str) -> str:
        return paths.design_file(self.results, design, name)

    def base_chunk_dir(self, design: str, chunk: str) -> str:
        return paths.base_chunk_dir(self.results, design, chunk)

    def base_model(self, design: str, chunk: str, phase: str, run: int | str) -> str:
        return paths.base_model(self.results, design, chunk, phase, run)

    def retrain_model(self, design: str) -> str:
        return paths.retrain_model(self.results, design)

    def experiment_file(self, experiment: str, name: str) -> str:
        return paths.experiment_file(self.results, experiment, name)

    def unlearn_chunk_dir(self, group: str, chunk: str) -> str:
        return paths.unlearn_chunk_dir(self.results, group, chunk)

    def run_file(self, group: str, chunk: str, experiment: str, phase: str, run: int | str, name: str) -> str:
        return paths.run_file(self.results, group, chunk, experiment, phase, run, name)
