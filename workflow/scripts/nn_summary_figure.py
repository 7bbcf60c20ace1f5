"""Rule nn_summary_figure -> unlearn_audit.pipeline.nn.summary_figure."""

from unlearn_audit.pipeline import nn
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
nn.summary_figure(snakemake.wildcards.figure, dict(snakemake.input), snakemake.output[0])  # noqa: F821
