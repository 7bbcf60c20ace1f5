"""Rule nn_figure_r -> unlearn_audit.pipeline.nn.figure_r."""

from unlearn_audit.pipeline import nn
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
nn.figure_r(list(snakemake.input.bounds), snakemake.params.experiments, snakemake.output[0], list(snakemake.params.metrics))  # noqa: F821
