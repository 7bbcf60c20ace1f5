"""Rule tradeoff_gaussian_unlearning -> unlearn_audit.pipeline.tradeoff.gaussian_unlearning."""

import sys

from unlearn_audit.pipeline import tradeoff

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
tradeoff.gaussian_unlearning(snakemake.input[0], snakemake.output[0])  # noqa: F821
