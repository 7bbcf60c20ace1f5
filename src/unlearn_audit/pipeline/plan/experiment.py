"""What the sections' plans and the rule steps both read of an experiment's config: the phases, the
pre-registered cell, the method's hyperparameters, the certified claim and the audited δ.  Torch-free."""

from __future__ import annotations

from typing import Mapping

from ...stats.selection import DEFAULT_CELL, Cell

__all__ = ["PHASES", "DEVICE_PATH_KEYS", "design_seed", "preregistered_cell", "certified_claim", "audit_delta", "method_params", "chunks"]

PHASES = ("calib", "eval")
#: The design keys that name a device setting (bf16 autocast, torch.compile, deterministic kernels):
#: params of the torch rules.
DEVICE_PATH_KEYS = ("precision", "compile", "deterministic")


def design_seed(design_cfg: Mapping, root_seed: int) -> int:
    """The root seed of a design's streams (its data split, sign vectors, x0, order, base models and
    its experiments' unlearning): the design's own ``seed``, else the config's ``root_seed``
    (docs/workflow.md, "Pre-registration")."""
    return int(design_cfg.get("seed", root_seed))


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
