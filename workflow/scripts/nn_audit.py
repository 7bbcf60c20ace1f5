"""Rule nn_audit -> unlearn_audit.pipeline.nn.audit."""

from unlearn_audit.pipeline import nn
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
p, inp, out = snakemake.params, snakemake.input, snakemake.output  # noqa: F821
nn.audit(inp.fit, list(p.scores), inp.signs, p.m, p.cell, p.zeta, out.overlaps, out.bounds,
         calib_score_paths=list(p.calib_scores), fit_options=dict(p.fit))
