"""Thin entry point: all sign vectors of one design."""

import sys

from unlearn_audit.nn_pipeline import design_signs

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
design_signs(snakemake.wildcards.design, snakemake.params.cfg, snakemake.params.seed, snakemake.output[0])  # noqa: F821
