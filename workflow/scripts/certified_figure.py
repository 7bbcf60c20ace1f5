"""Rule certified_figure -> unlearn_audit.pipeline.certified.figure."""

import sys

from unlearn_audit.pipeline import certified

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
inp = snakemake.input  # noqa: F821
certified.figure(
    snakemake.wildcards.figure, list(inp.bounds), list(inp.checkpoint_bounds), list(inp.pairwise),  # noqa: F821
    snakemake.params.experiments, snakemake.output[0], list(inp.metrics),  # noqa: F821
)
