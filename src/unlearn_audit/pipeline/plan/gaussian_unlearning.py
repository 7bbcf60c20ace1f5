"""The Gaussian certified unlearning section's plan (docs/calibrations.md §13): its grids, cells and targets.  Torch-free."""

from __future__ import annotations

from ... import catalogue
from .. import paths
from .base import PlanBase

__all__ = ["GAUSSIAN_UNLEARNING_EXPERIMENTS", "GaussianUnlearningPlan"]

#: The Gaussian-unlearning experiments (:data:`unlearn_audit.catalogue.GAUSSIAN_UNLEARNING_EXPERIMENTS`):
#: the grid of each is ``p`` or ``epsilons``.
GAUSSIAN_UNLEARNING_EXPERIMENTS = tuple(catalogue.GAUSSIAN_UNLEARNING_EXPERIMENTS)


class GaussianUnlearningPlan(PlanBase):
    """Inputs, params and targets of the Gaussian-unlearning rules."""

    # ------------------------------------------------------------------ Gaussian certified unlearning
    def gaussian_unlearning_file(self, name: str) -> str:
        return paths.gaussian_unlearning_file(self.results, name)

    def gaussian_unlearning_cell(self, experiment: str, x) -> str:
        return paths.gaussian_unlearning_cell(self.results, experiment, x)

    def gaussian_unlearning_grid(self, experiment: str) -> list:
        """The p of each cell: ``ged_vs_eps`` is one cell (its p, every ε on shared draws)."""
        spec = self.config["gaussian_unlearning"][experiment]
        return [spec["p"]] if experiment == "ged_vs_eps" else spec["p"]

    def gaussian_unlearning_cells(self, wildcards) -> list[str]:
        experiment = wildcards.gu_experiment
        return [self.gaussian_unlearning_cell(experiment, x) for x in self.gaussian_unlearning_grid(experiment)]

    def gaussian_unlearning_spec(self, wildcards) -> dict:
        return self.config["gaussian_unlearning"][wildcards.gu_experiment]

    def gaussian_unlearning_targets(self) -> list[str]:
        if not self.config["gaussian_unlearning"]["enabled"]:
            return []
        targets = self.table_files("gaussian_unlearning_slopes") + self.table_files("gaussian_unlearning_audit")
        # a GED and a UED figure per experiment: gaussian_unlearning_{ged,ued}_vs_{p,eps,m}
        targets += [f for e in GAUSSIAN_UNLEARNING_EXPERIMENTS for err in ("ged", "ued")
                    for f in self.figure_files(f"gaussian_unlearning_{err}_{e.removeprefix('ged_')}")]
        # the clip-sensitivity figures of the m-slopes, when ged_vs_m evaluates several clipped losses
        if len(self.config["gaussian_unlearning"]["ged_vs_m"].get("prob_clip") or []) > 1:
            targets += [f for err in ("ged", "ued") for f in self.figure_files(f"gaussian_unlearning_{err}_m_slope_vs_clip")]
        return targets
