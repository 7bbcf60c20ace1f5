"""The Gaussian certified unlearning section's plan (docs/calibrations.md §13): its grids, cells and targets.  Torch-free."""

from __future__ import annotations

from ... import catalogue
from .files import PlanFiles

__all__ = ["GAUSSIAN_UNLEARNING_EXPERIMENTS", "GaussianUnlearningPlan"]

#: The Gaussian-unlearning experiments (:data:`unlearn_audit.catalogue.GAUSSIAN_UNLEARNING_EXPERIMENTS`):
#: the grid of each is ``p`` or ``epsilons``.
GAUSSIAN_UNLEARNING_EXPERIMENTS = tuple(catalogue.GAUSSIAN_UNLEARNING_EXPERIMENTS)


class GaussianUnlearningPlan:
    """Inputs, params and targets of the Gaussian-unlearning rules, for the ``gaussian_unlearning``
    section of a config."""

    def __init__(self, gu_config: dict, files: PlanFiles):
        self._cfg = gu_config
        self.files = files

    def enabled(self) -> bool:
        return bool(self._cfg["enabled"])

    def grid(self, experiment: str) -> list:
        """The p of each cell (:meth:`unlearn_audit.catalogue.GUExperimentSpec.grid`: an ε-grid
        experiment, ``ged_vs_eps``, is one cell, its p, every ε on shared draws)."""
        return catalogue.GAUSSIAN_UNLEARNING_EXPERIMENTS[experiment].grid(self._cfg[experiment])

    def cells(self, wildcards) -> list[str]:
        experiment = wildcards.gu_experiment
        return [self.files.gaussian_unlearning_cell(experiment, x) for x in self.grid(experiment)]

    def spec(self, wildcards) -> dict:
        return self._cfg[wildcards.gu_experiment]

    def targets(self) -> list[str]:
        if not self.enabled():
            return []
        files = self.files
        targets = files.table_files("gaussian_unlearning_slopes") + files.table_files("gaussian_unlearning_audit")
        # a GED and a UED figure per experiment: gaussian_unlearning_{ged,ued}_vs_{p,eps,m}
        targets += [f for spec in catalogue.GAUSSIAN_UNLEARNING_EXPERIMENTS.values() for err in ("ged", "ued")
                    for f in files.figure_files(f"gaussian_unlearning_{err}_vs_{spec.axis}")]
        # the clip-sensitivity figures of the m-slopes, when ged_vs_m evaluates several clipped losses
        if len(self._cfg["ged_vs_m"].get("prob_clip") or []) > 1:
            targets += [f for err in ("ged", "ued") for f in files.figure_files(f"gaussian_unlearning_{err}_m_slope_vs_clip")]
        return targets
