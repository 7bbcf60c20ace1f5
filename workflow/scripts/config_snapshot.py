"""Rule config_snapshot -> unlearn_audit.pipeline.config.config_snapshot."""

from unlearn_audit.pipeline.config import config_snapshot
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
config_snapshot(dict(snakemake.params.config), snakemake.output[0])  # noqa: F821
