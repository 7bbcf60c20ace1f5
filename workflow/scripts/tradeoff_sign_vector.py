"""Rule tradeoff_sign_vector -> unlearn_audit.pipeline.tradeoff.sign_vector."""

import sys

from unlearn_audit.pipeline import tradeoff

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
tradeoff.sign_vector(list(snakemake.input), snakemake.params.experiments, snakemake.params.zeta, snakemake.output[0])  # noqa: F821
