"""Rule nn_membership -> unlearn_audit.pipeline.nn.membership."""

from unlearn_audit.pipeline import nn
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
nn.membership(snakemake.wildcards.experiment, list(snakemake.params.calib_scores), list(snakemake.params.scores),  # noqa: F821
              snakemake.input.fit, snakemake.output[0])  # noqa: F821
