"""The convex audits' plan (Section 8, Table 2): enabled mechanisms, their cells and tables.  Torch-free."""

from __future__ import annotations

from .. import paths
from .base import PlanBase

__all__ = ["ConvexPlan"]


class ConvexPlan(PlanBase):
    """Inputs, params and targets of the convex rules."""

    # ------------------------------------------------------------------ convex audits
    def convex_mechanisms(self) -> list[str]:
        convex = self.config["convex"]
        return [name for name, m in convex["mechanisms"].items() if m["enabled"]] if convex["enabled"] else []

    def convex_file(self, mechanism: str, epsilon, name: str) -> str:
        return paths.convex_file(self.results, mechanism, epsilon, name)

    def convex_file_details(self, table: str) -> str:
        """The per-row details of a convex table: ``results/convex/<table>_details.csv``."""
        return f"{self.results}/convex/{table}_details.csv"

    def convex_summaries(self, mechanism: str) -> list[str]:
        eps = self.config["convex"]["mechanisms"][mechanism]["epsilons"]
        return [self.convex_file(mechanism, e, "summary.parquet") for e in eps]

    def convex_table_mechanism(self, table: str) -> str:
        for name in self.convex_mechanisms():
            if self.config["convex"]["mechanisms"][name]["table"] == table:
                return name
        raise ValueError(f"no enabled convex mechanism renders {table}")

    def convex_mechanism_params(self, wildcards) -> dict:
        return self.config["convex"]["mechanisms"][wildcards.mechanism]["params"]

    def convex_table_summaries(self, wildcards) -> list[str]:
        return self.convex_summaries(self.convex_table_mechanism(wildcards.table))

    def convex_all_summaries(self) -> list[str]:
        return [f for mech in self.convex_mechanisms() for f in self.convex_summaries(mech)]

    def convex_sweeps(self) -> list[dict]:
        """App. H.4's sweeps of ρ (``convex.sweep.grids``), when enabled."""
        sweep = self.config["convex"].get("sweep", {})
        return list(sweep.get("grids", [])) if self.config["convex"]["enabled"] and sweep.get("enabled") else []

    def convex_sweep_params(self) -> dict:
        """What the sweep table depends on: the grids and the configured mechanisms they vary."""
        mechanisms = self.config["convex"]["mechanisms"]
        return {"sweeps": self.convex_sweeps(), "mechanisms": {s["mechanism"]: mechanisms.get(s["mechanism"], {}) for s in self.convex_sweeps()}}

    def convex_targets(self) -> list[str]:
        mechs = self.convex_mechanisms()
        tables = [f for m in mechs for f in self.table_files(self.config["convex"]["mechanisms"][m]["table"])]
        sweep = self.table_files("appendix_h4") if self.convex_sweeps() else []
        return tables + sweep + (self.figure_files("convex_epsilon_lb") if mechs else [])
