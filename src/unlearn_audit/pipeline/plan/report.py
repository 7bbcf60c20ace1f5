"""Where each output sits in Snakemake's HTML report (``snakemake --report``): the subcategory of a
table or figure, from the rule's wildcards, and the labels the report lists it by.  Functions of the
plan, so that no rule holds a lambda."""

from __future__ import annotations

from typing import Callable

__all__ = ["ReportPlan", "REPORT_KINDS"]

#: Convex tables whose report subcategory is not "Table 2<x>" (the logistic loss is App. H.4.2's).
CONVEX_TABLE_SUBCATEGORIES = {"table2c": "Logistic loss (App. H.4.2)"}
#: The file each kind of report item is (its ``kind`` label): a table's CSV, a figure's PNG, a
#: record's JSON (``provenance.json``).
REPORT_KINDS = {"table": "csv", "figure": "png", "record": "json"}


#: The tables that are not the paper's, by the label the report lists them under.
OWN_LABELS = {"llm_qa": "Language models (question-answer pairs)", "audit_size": "The audit's size (growing m)"}


def paper_label(name: str) -> str:
    """``Table 1a`` for ``table1a``, ``Figure 1c`` for ``figure1c``, ``App. F.4`` for ``appendix_f4``:
    the paper's name of an output."""
    if name in OWN_LABELS:
        return OWN_LABELS[name]
    if name.startswith("appendix_"):
        return "App. " + ".".join(name.removeprefix("appendix_").upper())
    for kind in ("table", "figure"):
        if name.startswith(kind):
            return f"{kind.title()} {name.removeprefix(kind)}"
    raise ValueError(f"{name!r} is neither a table nor a figure of the paper")


class ReportPlan:
    """The ``subcategory`` and ``labels`` of each reported output, functions of the rule's wildcards."""

    @staticmethod
    def table_subcategory(wildcards) -> str:
        """The nn and certified tables: ``Table 1a``."""
        return paper_label(wildcards.table)

    @staticmethod
    def figure_subcategory(wildcards) -> str:
        """The certified figures: ``Figure 1a``."""
        return paper_label(wildcards.figure)

    @staticmethod
    def summary_subcategory(wildcards) -> str:
        """The summary figures: ``Figure: the finding at a glance``, ``Figure: the audit's size``."""
        return {"finding": "Figure: the finding at a glance", "nn_epsilon_vs_m": "Figure: the audit's size"}[wildcards.figure]

    @staticmethod
    def convex_subcategory(wildcards) -> str:
        """A convex table's subcategory: ``Table 2a``, or its own (:data:`CONVEX_TABLE_SUBCATEGORIES`)."""
        return CONVEX_TABLE_SUBCATEGORIES.get(wildcards.table) or paper_label(wildcards.table)

    @staticmethod
    def gaussian_unlearning_subcategory(wildcards) -> str:
        """``Figure: GED vs p`` for ``{gu_error}`` = ged, ``{gu_axis}`` = p."""
        return f"Figure: {wildcards.gu_error.upper()} vs {wildcards.gu_axis}"

    @staticmethod
    def clip_subcategory(wildcards) -> str:
        """The clip-sensitivity figure of the GED or UED m-slope."""
        return f"Figure: {wildcards.gu_error.upper()}-vs-m slope against the clip c"

    @staticmethod
    def labels(kind: str, name: str | Callable, suffix: str = "") -> dict | Callable:
        """``labels=`` of a report item: ``{kind: name + suffix, "kind": "csv" | "png" | "json"}`` for
        ``kind`` ``table``, ``figure`` or ``record``, a name of the form ``Figure: X`` (as the
        Gaussian-unlearning subcategories are) shortened to ``X`` under its ``figure`` label.  The name
        comes first: a subcategory's list shows the labels as columns in that order and is sorted by
        the first, and the other label has one value per subcategory (two values splitting a
        subcategory in halves would make Snakemake show a toggle instead of rows).  ``name`` is a
        string, or a function of the wildcards (one of the ``*_subcategory`` functions above),
        which makes the labels one too."""
        if kind not in REPORT_KINDS:
            raise ValueError(f"kind must be one of {sorted(REPORT_KINDS)}, got {kind!r}")

        def labels(text: str) -> dict:
            return {kind: text.removeprefix(f"{kind.title()}: ") + suffix, "kind": REPORT_KINDS[kind]}

        return (lambda wildcards: labels(name(wildcards))) if callable(name) else labels(name)
