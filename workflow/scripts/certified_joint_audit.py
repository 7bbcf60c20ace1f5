"""Rule certified_joint_audit -> unlearn_audit.pipeline.certified.joint_audit."""

from unlearn_audit.pipeline import certified
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
p, inp, out = snakemake.params, snakemake.input, snakemake.output  # noqa: F821
certified.joint_audit(
    list(p.scores), inp.signs, p.m, dict(p.cell), p.zeta, out.overlaps, out.bounds,
    checkpoint_paths=list(p.checkpoints), checkpoint_bounds_path=out.checkpoint_bounds,
)
