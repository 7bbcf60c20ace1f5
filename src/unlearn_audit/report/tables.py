"""Render a DataFrame as CSV, Markdown and LaTeX (booktabs) next to each other.

``write_table(df, "results/tables/table2a")`` writes ``table2a.csv``, ``table2a.md`` and
``table2a.tex`` atomically.  The CSV keeps full precision; Markdown and LaTeX are rounded
for reading.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pandas as pd

from ..io import atomic_path, write_text_atomic
from ..schemas import DIAGNOSTIC_FLAGS

__all__ = ["write_table", "format_markdown", "format_latex", "format_cell", "DIAGNOSTIC_FLAGS", "diagnostics_row"]


def diagnostics_row(diagnostics: pd.DataFrame | None, experiment: str, columns) -> dict:
    """The experiment's ``columns`` (accuracies and the flags of ``DIAGNOSTIC_FLAGS``) from its row of
    :func:`unlearn_audit.pipeline.diagnostics.experiment_diagnostics`, in that order; ``{}`` without
    diagnostics."""
    if diagnostics is None:
        return {}
    rows = diagnostics[diagnostics.experiment == experiment]
    if len(rows) != 1:
        raise ValueError(f"experiment {experiment!r}: expected one diagnostics row, found {len(rows)}")
    row = rows.iloc[0]
    return {k: bool(row[k]) if k in DIAGNOSTIC_FLAGS else float(row[k]) for k in columns}


def format_cell(value, digits: int = 4) -> str:
    """Human-readable cell: floats to ``digits`` decimals, missing values as empty."""
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if math.isinf(value):
            return "inf" if value > 0 else "-inf"
        if value != 0 and (abs(value) >= 1e6 or abs(value) < 10 ** (-digits)):
            return f"{value:.{digits - 1}e}"
        return f"{value:.{digits}f}"
    return str(value)


def format_markdown(df: pd.DataFrame, digits: int = 4, caption: str | None = None) -> str:
    cols = [str(c) for c in df.columns]
    rows = [[format_cell(v, digits) for v in row] for row in df.itertuples(index=False)]
    lines = []
    if caption:
        lines += [f"**{caption}**", ""]
    lines.append("| " + " | ".join(cols) + " |")
    lines.append("|" + "|".join("---" for _ in cols) + "|")
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n"


def _latex_escape(text: str) -> str:
    for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"), ("#", r"\#"), ("_", r"\_"), ("{", r"\{"), ("}", r"\}")):
        text = text.replace(a, b)
    return text


def format_latex(df: pd.DataFrame, digits: int = 4, caption: str | None = None, label: str | None = None) -> str:
    align = "".join("r" if pd.api.types.is_numeric_dtype(t) and not pd.api.types.is_bool_dtype(t) else "l" for t in df.dtypes)
    lines = [r"\begin{table}[t]", r"\centering"]
    if caption:
        lines.append(rf"\caption{{{_latex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines += [rf"\begin{{tabular}}{{{align}}}", r"\toprule"]
    lines.append(" & ".join(_latex_escape(str(c)) for c in df.columns) + r" \\")
    lines.append(r"\midrule")
    for row in df.itertuples(index=False):
        lines.append(" & ".join(_latex_escape(format_cell(v, digits)) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}", r"\end{table}"]
    return "\n".join(lines) + "\n"


def write_table(
    df: pd.DataFrame,
    stem: str | os.PathLike,
    *,
    caption: str | None = None,
    digits: int = 4,
    markdown: str | None = None,
    latex: str | None = None,
) -> list[Path]:
    """Write ``stem``.csv / .md / .tex atomically; returns the three paths.

    ``markdown`` and ``latex``, when given, are the already rendered texts of a table whose reading
    form differs from its CSV (e.g. marks in place of flag columns); by default both are rendered
    from ``df``."""
    stem = Path(stem)
    paths = [stem.with_suffix(s) for s in (".csv", ".md", ".tex")]
    with atomic_path(paths[0]) as tmp:
        df.to_csv(tmp, index=False)
    write_text_atomic(paths[1], format_markdown(df, digits, caption) if markdown is None else markdown)
    write_text_atomic(paths[2], format_latex(df, digits, caption, label=f"tab:{stem.name}") if latex is None else latex)
    return paths
