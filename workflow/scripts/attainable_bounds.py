"""Thin entry point: App. F attainable-bound table."""

import sys
from pathlib import Path

from unlearn_audit.report import write_table
from unlearn_audit.report.attainable import attainable_bounds_table

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
p = snakemake.params  # noqa: F821
table = attainable_bounds_table(p.grid, p.L, p.zeta)
stem = Path(snakemake.output[0]).with_suffix("")  # noqa: F821
write_table(table, stem, caption=f"Bounds from perfect prediction (all L = {p.L} runs with V = r), zeta = {p.zeta}")
