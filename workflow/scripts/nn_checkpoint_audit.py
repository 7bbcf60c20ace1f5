"""Rule nn_checkpoint_audit -> unlearn_audit.pipeline.nn.checkpoint_audit."""

from unlearn_audit.pipeline import nn
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
p, inp, out = snakemake.params, snakemake.input, snakemake.output  # noqa: F821
nn.checkpoint_audit(list(p.checkpoints), inp.signs, p.m, dict(p.cell), dict(p.fit), p.zeta, out[0])
