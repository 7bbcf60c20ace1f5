"""What the workflow runs for a validated config: experiments, chunks, per-rule inputs and targets.

One plan per section, each in its own module with the section's name lists: :mod:`.nn` (designs,
runs, the nn rules), :mod:`.resources` (their jobs' SLURM resources), :mod:`.certified` (Table 6,
Figures 1a–c), :mod:`.convex`, :mod:`.gaussian_unlearning`, :mod:`.tradeoff` (the μ-GDP
figures) and :mod:`.report` (where each output sits in the HTML report), over :mod:`.base` (the config, the file paths, the experiment helpers the rule steps
read too).  :class:`WorkflowPlan` composes them: ``workflow/rules/common.smk`` makes one of the
config and the rules call its methods (input functions take the rule's wildcards); the same object
is what the tests check, so the DAG's shape is plain, tested Python.  The plans import no rule
step (:mod:`unlearn_audit.pipeline.tradeoff` draws what :mod:`.tradeoff` selects).  Torch-free.
"""

from __future__ import annotations

from .base import PHASES, PlanBase, audit_delta, certified_claim, preregistered_cell
from .certified import CERTIFIED_FIGURES, CERTIFIED_TABLES, CertifiedPlan
from .convex import ConvexPlan
from .gaussian_unlearning import GAUSSIAN_UNLEARNING_EXPERIMENTS, GaussianUnlearningPlan
from .nn import NN_TABLES, NNPlan
from .report import ReportPlan
from .resources import ResourcesPlan
from .tradeoff import TradeoffPlan

__all__ = ["NN_TABLES", "CERTIFIED_TABLES", "CERTIFIED_FIGURES", "preregistered_cell", "certified_claim", "audit_delta",
           "GAUSSIAN_UNLEARNING_EXPERIMENTS", "PHASES", "PlanBase", "WorkflowPlan"]


class WorkflowPlan(NNPlan, ResourcesPlan, CertifiedPlan, ConvexPlan, GaussianUnlearningPlan, TradeoffPlan, ReportPlan):
    """The DAG's shape for one validated config (see :func:`..config.validate_config`): the section
    plans composed, each rule calling the method of its section by name (``nn_*``, ``convex_*``,
    ``gaussian_unlearning_*``, ``tradeoff_*``)."""

    def all_targets(self) -> list[str]:
        """Every table and figure the config enables."""
        targets = self.table_files("attainable_bounds") if self.config["perfect_prediction"]["enabled"] else []
        return targets + self.convex_targets() + self.gaussian_unlearning_targets() + self.nn_targets() + self.tradeoff_targets()
