"""Rule tradeoff_convex -> unlearn_audit.pipeline.tradeoff.convex."""

from unlearn_audit.pipeline import tradeoff
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
tradeoff.convex(list(snakemake.input), snakemake.output[0])  # noqa: F821
