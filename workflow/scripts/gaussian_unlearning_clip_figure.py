"""Rule gaussian_unlearning_clip_figure -> unlearn_audit.pipeline.gaussian_unlearning.clip_figure."""

import sys

from unlearn_audit.pipeline import gaussian_unlearning

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
gaussian_unlearning.clip_figure(snakemake.wildcards.gu_error, snakemake.input[0], snakemake.output.figure)  # noqa: F821
