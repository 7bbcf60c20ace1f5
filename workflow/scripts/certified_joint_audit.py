"""Rule certified_joint_audit -> unlearn_audit.pipeline.certified.joint_audit."""

import sys

from unlearn_audit.pipeline import certified

sys.stderr = open(snakemake.log[0], "w")  # noqa: F821
p, inp, out = snakemake.params, snakemake.input, snakemake.output  # noqa: F821
certified.joint_audit(
    list(inp.scores), inp.signs, p.m, dict(p.cell), p.zeta, out.overlaps, out.bounds,
    checkpoint_paths=list(inp.checkpoints), checkpoint_bounds_path=out.checkpoint_bounds,
)
