"""Rule gaussian_unlearning_slopes -> unlearn_audit.pipeline.gaussian_unlearning.slopes."""

import sys

from unlearn_audit.pipeline import gaussian_unlearning

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
gaussian_unlearning.slopes(list(snakemake.input), snakemake.output[0])  # noqa: F821
