"""Rule tradeoff_convex -> unlearn_audit.pipeline.tradeoff.convex."""

import sys

from unlearn_audit.pipeline import tradeoff

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
tradeoff.convex(list(snakemake.input), snakemake.output[0])  # noqa: F821
