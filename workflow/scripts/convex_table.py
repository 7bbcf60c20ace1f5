"""Rule convex_table -> unlearn_audit.pipeline.convex.table."""

import sys

from unlearn_audit.pipeline import convex

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
convex.table(snakemake.wildcards.table, list(snakemake.input), snakemake.output[0], snakemake.output.details)  # noqa: F821
