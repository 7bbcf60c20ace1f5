"""Rule attainable_bounds -> unlearn_audit.pipeline.statistics.attainable_bounds."""

from unlearn_audit.pipeline import statistics
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
p = snakemake.params  # noqa: F821
statistics.attainable_bounds(p.grid, p.L, p.zeta, snakemake.output[0])  # noqa: F821
