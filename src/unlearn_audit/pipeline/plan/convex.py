"""The convex audits' plan (Section 8, Table 2): enabled mechanisms, their cells and tables.  Torch-free."""

from __future__ import annotations

from .files import PlanFiles

__all__ = ["ConvexPlan"]


class ConvexPlan:
    """Inputs, params and targets of the convex rules, for the ``convex`` section of a config."""

    def __init__(self, convex_config: dict, files: PlanFiles):
        self._cfg = convex_config
        self.files = files

    def mechanisms(self) -> list[str]:
        return [name for name, m in self._cfg["mechanisms"].items() if m["enabled"]] if self._cfg["enabled"] else []

    def epsilons(self, mechanism: str) -> list:
        """The certified ε a mechanism is audited at (one cell each)."""
        return self._cfg["mechanisms"][mechanism]["epsilons"]

    def details_file(self, table: str) -> str:
        """The per-row details of a convex table: ``results/convex/<table>_details.csv``."""
        return f"{self.files.results}/convex/{table}_details.csv"

    def summaries(self, mechanism: str) -> list[str]:
        return [self.files.convex_file(mechanism, e, "summary.parquet") for e in self.epsilons(mechanism)]

    def table_mechanism(self, table: str) -> str:
        for name in self.mechanisms():
            if self._cfg["mechanisms"][name]["table"] == table:
                return name
        raise ValueError(f"no enabled convex mechanism renders {table}")

    def mechanism_params(self, wildcards) -> dict:
        return self._cfg["mechanisms"][wildcards.mechanism]["params"]

    def table_summaries(self, wildcards) -> list[str]:
        return self.summaries(self.table_mechanism(wildcards.table))

    def all_summaries(self) -> list[str]:
        return [f for mech in self.mechanisms() for f in self.summaries(mech)]

    def sweeps(self) -> list[dict]:
        """App. H.4's sweeps of ρ (``convex.sweep.grids``), when enabled."""
        sweep = self._cfg.get("sweep", {})
        return list(sweep.get("grids", [])) if self._cfg["enabled"] and sweep.get("enabled") else []

    def sweep_params(self) -> dict:
        """What the sweep table depends on: the grids and the configured mechanisms they vary."""
        mechanisms = self._cfg["mechanisms"]
        return {"sweeps": self.sweeps(), "mechanisms": {s["mechanism"]: mechanisms.get(s["mechanism"], {}) for s in self.sweeps()}}

    def targets(self) -> list[str]:
        mechs = self.mechanisms()
        tables = [f for m in mechs for f in self.files.table_files(self._cfg["mechanisms"][m]["table"])]
        sweep = self.files.table_files("appendix_h4") if self.sweeps() else []
        return tables + sweep + (self.files.figure_files("convex_epsilon_lb") if mechs else [])
