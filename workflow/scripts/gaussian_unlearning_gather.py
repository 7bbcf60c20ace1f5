"""Rule gaussian_unlearning_gather -> unlearn_audit.pipeline.gaussian_unlearning.gather."""

import sys

from unlearn_audit.pipeline import gaussian_unlearning

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
out = snakemake.output  # noqa: F821
gaussian_unlearning.gather(snakemake.wildcards.gu_experiment, list(snakemake.input), out.raw, out.figure)  # noqa: F821
