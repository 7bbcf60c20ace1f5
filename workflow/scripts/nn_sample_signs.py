"""Rule nn_sample_signs -> unlearn_audit.pipeline.nn.sample_signs."""

import sys

from unlearn_audit.pipeline import nn

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
nn.sample_signs(snakemake.wildcards.design, snakemake.params.cfg, snakemake.params.seed, snakemake.output[0])  # noqa: F821
