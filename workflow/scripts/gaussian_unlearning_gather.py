"""Rule gaussian_unlearning_gather -> unlearn_audit.pipeline.gaussian_unlearning.gather."""

import sys

from unlearn_audit.pipeline import gaussian_unlearning

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
gaussian_unlearning.gather(list(snakemake.input), snakemake.output.raw)  # noqa: F821
