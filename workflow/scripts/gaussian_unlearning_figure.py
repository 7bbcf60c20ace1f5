"""Rule gaussian_unlearning_figure -> unlearn_audit.pipeline.gaussian_unlearning.figure."""

import sys

from unlearn_audit.pipeline import gaussian_unlearning

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
w = snakemake.wildcards  # noqa: F821
gaussian_unlearning.figure(f"ged_vs_{w.gu_axis}", w.gu_error, snakemake.input[0], snakemake.output.figure)  # noqa: F821
