"""Tables (CSV + Markdown + LaTeX) and figures (PNG + PDF) for the paper's results."""

from .tables import format_latex, format_markdown, write_table

__all__ = ["write_table", "format_markdown", "format_latex"]
