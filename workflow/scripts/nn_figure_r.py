"""Rule nn_figure_r -> unlearn_audit.pipeline.nn.figure_r."""

import sys

from unlearn_audit.pipeline import nn

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
nn.figure_r(list(snakemake.input.bounds), snakemake.params.experiments, snakemake.output[0])  # noqa: F821
