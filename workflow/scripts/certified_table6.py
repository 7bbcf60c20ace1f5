"""Rule certified_table6 -> unlearn_audit.pipeline.certified.table6."""

import sys

from unlearn_audit.pipeline import certified

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
inp = snakemake.input  # noqa: F821
certified.table6(list(inp.bounds), list(inp.checkpoint_bounds), list(inp.metrics), snakemake.params.experiments, snakemake.output[0])  # noqa: F821
