"""Rule nn_audit -> unlearn_audit.pipeline.nn.audit."""

import sys

from unlearn_audit.pipeline import nn

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
p, inp, out = snakemake.params, snakemake.input, snakemake.output  # noqa: F821
nn.audit(inp.fit, list(inp.scores), inp.signs, p.m, p.cell, p.zeta, out.overlaps, out.bounds)
