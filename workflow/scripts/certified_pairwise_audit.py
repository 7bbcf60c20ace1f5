"""Rule certified_pairwise_audit -> unlearn_audit.pipeline.certified.pairwise_audit."""

import sys

from unlearn_audit.pipeline import certified

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
p, inp = snakemake.params, snakemake.input  # noqa: F821
certified.pairwise_audit(list(inp.scores), inp.signs, dict(p.cell), p.zeta, snakemake.output[0])  # noqa: F821
