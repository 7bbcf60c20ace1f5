"""Rule convex_table -> unlearn_audit.pipeline.convex.table."""

from unlearn_audit.pipeline import convex
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
convex.table(snakemake.wildcards.table, list(snakemake.input), snakemake.output[0], snakemake.output.details)  # noqa: F821
