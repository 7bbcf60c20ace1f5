"""What the workflow runs for a validated config: experiments, chunks, per-rule inputs and targets.

One plan per section, each an object built with the sections it reads, in its own module with the
section's name lists: :mod:`.nn` (designs, runs, the nn rules), :mod:`.resources` (the jobs' SLURM
resources), :mod:`.certified` (Table 6, Figures 1a–c), :mod:`.convex`, :mod:`.gaussian_unlearning`,
:mod:`.tradeoff` (the μ-GDP figures) and :mod:`.report` (where each output sits in the HTML report),
over :mod:`.files` (the run's file paths, built by :mod:`.paths`), :mod:`.pricing` (how many runs a
chunk job holds, shared by the nn plan and the resources) and :mod:`.experiment` (what the rule steps
read of an experiment too); the cost model is :mod:`.cost`.  :class:`WorkflowPlan` composes them:
``workflow/rules/common.smk`` makes one of the config and the rules call its sections
(``plan.nn.design_chunks()``, ``plan.resources.train_resources()``; input functions take the rule's
wildcards); the same objects are what the tests check, so the DAG's shape is plain, tested Python.
The plans import no rule step (:mod:`unlearn_audit.pipeline.tradeoff` draws what :mod:`.tradeoff`
selects).  Torch-free.
"""

from __future__ import annotations

from typing import Any

from .certified import CERTIFIED_FIGURES, CERTIFIED_TABLES, CertifiedPlan
from .convex import ConvexPlan
from .experiment import PHASES, audit_delta, certified_claim, preregistered_cell
from .files import PlanFiles
from .gaussian_unlearning import GAUSSIAN_UNLEARNING_EXPERIMENTS, GaussianUnlearningPlan
from .nn import NN_TABLES, NNPlan
from .pricing import ChunkPricing
from .report import ReportPlan
from .resources import ResourcesPlan
from .tradeoff import TradeoffPlan

__all__ = ["NN_TABLES", "CERTIFIED_TABLES", "CERTIFIED_FIGURES", "preregistered_cell", "certified_claim", "audit_delta",
           "GAUSSIAN_UNLEARNING_EXPERIMENTS", "PHASES", "PlanFiles", "ChunkPricing", "NNPlan", "ResourcesPlan", "CertifiedPlan",
           "ConvexPlan", "GaussianUnlearningPlan", "TradeoffPlan", "ReportPlan", "WorkflowPlan"]


class WorkflowPlan:
    """The DAG's shape for one validated config (see :func:`..config.validate_config`): its section
    plans, each built with the sections it reads, as attributes the rules call (``plan.nn``,
    ``plan.resources``, ``plan.certified``, ``plan.convex``, ``plan.gaussian_unlearning``,
    ``plan.tradeoff``, ``plan.report``; the paths: ``plan.files``; chunk pricing: ``plan.pricing``)."""

    def __init__(self, config: dict[str, Any]):
        self.config = config
        self.results = config["results_dir"]
        self.files = PlanFiles(self.results)
        self.pricing = ChunkPricing(config)
        self.nn = NNPlan(config["nn"], self.files, self.pricing, config["seed"])
        self.resources = ResourcesPlan(config, self.nn, self.pricing)
        self.certified = CertifiedPlan(self.nn)
        self.convex = ConvexPlan(config["convex"], self.files)
        self.gaussian_unlearning = GaussianUnlearningPlan(config["gaussian_unlearning"], self.files)
        self.tradeoff = TradeoffPlan(self.nn, self.convex, self.gaussian_unlearning)
        self.report = ReportPlan()

    def all_targets(self) -> list[str]:
        """Every table and figure the config enables."""
        targets = self.files.table_files("attainable_bounds") if self.config["perfect_prediction"]["enabled"] else []
        return targets + self.convex.targets() + self.gaussian_unlearning.targets() + self.nn.targets() + self.tradeoff.targets()
