"""Rule nn_table -> unlearn_audit.pipeline.nn.table."""

import sys

from unlearn_audit.pipeline import nn

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
inp = snakemake.input  # noqa: F821
nn.table(snakemake.wildcards.table, list(inp.bounds), list(inp.metrics), snakemake.params.experiments, snakemake.output[0])  # noqa: F821
