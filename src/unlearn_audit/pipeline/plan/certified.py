"""The certified audits' plan (Section 7.1, Table 6, Figures 1a–c): the joint and pairwise audits'
inputs and params and what the table and figures show of each experiment.  Torch-free."""

from __future__ import annotations

import dataclasses

from ... import catalogue
from ...catalogue import base_of, is_control
from ...stats.selection import DEFAULT_CELL
from .experiment import PHASES, audit_delta, certified_claim, method_params
from .nn import NNPlan

__all__ = ["CERTIFIED_TABLES", "CERTIFIED_FIGURES", "CertifiedPlan"]

#: The certified audits' table and figures (paper Table 6, Figures 1a–c; :mod:`unlearn_audit.catalogue`).
CERTIFIED_TABLES = tuple(catalogue.CERTIFIED_TABLES)
CERTIFIED_FIGURES = tuple(catalogue.CERTIFIED_FIGURES)


class CertifiedPlan:
    """Inputs of the certified audit, table and figure rules (the joint and pairwise auditors; Table 6,
    Figures 1a–c), over the experiments and runs of ``nn`` (:class:`.nn.NNPlan`)."""

    def __init__(self, nn: NNPlan):
        self.nn = nn
        self.files = nn.files

    def all_dirs(self, wildcards) -> list[str]:
        """The chunk folders holding the experiment's runs (the input of the rules that read them)."""
        return list(dict.fromkeys(self.nn.calibration_dirs(wildcards) + self.nn.evaluation_dirs(wildcards)))

    def all_scores(self, wildcards) -> list[str]:
        return self.nn.calibration_scores(wildcards) + self.nn.evaluation_scores(wildcards)

    def all_checkpoint_scores(self, wildcards) -> list[str]:
        if not self.nn.checkpoint_steps(wildcards.experiment):
            return []
        return [f for phase in PHASES for f in self.nn.run_files(wildcards.experiment, phase, "checkpoint_scores.parquet")]

    def cell(self, wildcards) -> dict:
        """What a joint or pairwise audit's result depends on: the pre-registered statistic and score,
        the selection rule and the δ it is audited at."""
        exp = self.nn.experiment(wildcards.experiment)
        cell = {k: exp[k] for k in ("statistic", "score", "test", "selection") if k in exp}
        return {**cell, "delta": audit_delta(exp)}

    def summary(self, name: str) -> dict:
        """What Table 6 and Figures 1a–c show of an experiment."""
        exp = self.nn.experiment(name)
        design = self.nn.design(exp["design"])
        resolved = method_params(exp)  # a dataclass, or a plain dict for an unannotated import-path method
        params = dataclasses.asdict(resolved) if dataclasses.is_dataclass(resolved) else dict(resolved)
        return {
            "design": exp["design"],
            "dataset": design["dataset"],
            "split": design["split"],
            "m": design["m"],
            "method": exp["method"],
            "base": base_of(exp),
            "label": exp.get("label") or exp["method"],
            "params": params,
            "auditor": self.nn.auditor(name),
            "score": exp.get("score", DEFAULT_CELL["score"]),
            "variant": "control" if is_control(exp) else ("uncertified" if certified_claim(exp) is None else "certified"),
        }

    def table_inputs(self, wildcards) -> dict[str, list[str]]:
        names = self.nn.table_experiments(wildcards.table)
        return {
            "bounds": [self.files.experiment_file(e, "bounds.parquet") for e in names],
            "checkpoint_bounds": [self.files.experiment_file(e, "checkpoint_bounds.parquet") for e in names],
            "overlaps": [self.files.experiment_file(e, "overlaps.parquet") for e in names],
            "metrics": self.nn.evaluation_dirs_of(names),
        }

    def pairwise_table_inputs(self, wildcards) -> dict[str, list[str]]:
        """The pairwise audits and evaluation metrics of a pairwise table's experiments (Sec. 7.3)."""
        names = self.nn.table_experiments(wildcards.table)
        return {
            "pairwise": [self.files.experiment_file(e, "pairwise.parquet") for e in names],
            "metrics": self.nn.evaluation_dirs_of(names),
        }

    def figure_inputs(self, wildcards) -> dict[str, list[str]]:
        names = self.nn.figure_experiments(wildcards.figure)
        joint = [e for e in names if self.nn.auditor(e) == "joint"]
        return {
            "bounds": [self.files.experiment_file(e, "bounds.parquet") for e in joint],
            "checkpoint_bounds": [self.files.experiment_file(e, "checkpoint_bounds.parquet") for e in joint if wildcards.figure == "figure1a"],
            "pairwise": [self.files.experiment_file(e, "pairwise.parquet") for e in names if self.nn.auditor(e) == "pairwise"],
            "metrics": self.nn.evaluation_dirs_of(names),
        }

    def figure_metrics(self, wildcards) -> list[str]:
        """Params of rule certified_figure: the per-run metrics of its evaluation runs (their chunk
        folders are the rule's ``metrics`` input)."""
        return self.nn.evaluation_metrics_of(self.nn.figure_experiments(wildcards.figure))

    def table_summaries(self, wildcards) -> dict:
        return {e: self.summary(e) for e in self.nn.table_experiments(wildcards.table)}

    def figure_summaries(self, wildcards) -> dict:
        return {e: self.summary(e) for e in self.nn.figure_experiments(wildcards.figure)}
