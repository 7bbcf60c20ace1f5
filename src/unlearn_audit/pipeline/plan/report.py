"""Where each output sits in Snakemake's HTML report (``snakemake --report``): the subcategory of a
table or figure, from the rule's wildcards.  Functions of the plan, so that no rule holds a lambda."""

from __future__ import annotations

from .base import PlanBase

__all__ = ["ReportPlan"]

#: Convex tables whose report subcategory is not "Table 2<x>" (the logistic loss is App. H.4.2's).
CONVEX_TABLE_SUBCATEGORIES = {"table2c": "Logistic loss (App. H.4.2)"}


class ReportPlan(PlanBase):
    """The ``subcategory`` of each reported output, a function of the rule's wildcards."""

    @staticmethod
    def report_table_subcategory(wildcards) -> str:
        """``Table 1a`` for ``{table}`` = table1a (the nn and certified tables)."""
        return f"Table {wildcards.table.removeprefix('table')}"

    @staticmethod
    def report_figure_subcategory(wildcards) -> str:
        """``Figure 1a`` for ``{figure}`` = figure1a (the certified figures)."""
        return f"Figure {wildcards.figure.removeprefix('figure')}"

    @staticmethod
    def report_convex_subcategory(wildcards) -> str:
        """A convex table's subcategory: ``Table 2a``, or its own (:data:`CONVEX_TABLE_SUBCATEGORIES`)."""
        return CONVEX_TABLE_SUBCATEGORIES.get(wildcards.table, f"Table {wildcards.table.removeprefix('table')}")

    @staticmethod
    def report_gaussian_unlearning_subcategory(wildcards) -> str:
        """``Figure: GED vs p`` for ``{gu_error}`` = ged, ``{gu_axis}`` = p."""
        return f"Figure: {wildcards.gu_error.upper()} vs {wildcards.gu_axis}"

    @staticmethod
    def report_clip_subcategory(wildcards) -> str:
        """The clip-sensitivity figure of the GED or UED m-slope."""
        return f"Figure: {wildcards.gu_error.upper()}-vs-m slope against the clip c"
