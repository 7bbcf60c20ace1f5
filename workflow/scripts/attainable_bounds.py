"""Rule attainable_bounds -> unlearn_audit.pipeline.statistics.attainable_bounds."""

import sys

from unlearn_audit.pipeline import statistics

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
p = snakemake.params  # noqa: F821
statistics.attainable_bounds(p.grid, p.L, p.zeta, snakemake.output[0])  # noqa: F821
