"""Rule nn_fit -> unlearn_audit.pipeline.nn.fit."""

import sys

from unlearn_audit.pipeline import nn

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
nn.fit(snakemake.wildcards.experiment, list(snakemake.input.scores), snakemake.params.fit, snakemake.output[0])  # noqa: F821
