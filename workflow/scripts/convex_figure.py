"""Rule convex_figure -> unlearn_audit.pipeline.convex.figure."""

import sys

from unlearn_audit.pipeline import convex

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
convex.figure(list(snakemake.input), snakemake.output[0])  # noqa: F821
