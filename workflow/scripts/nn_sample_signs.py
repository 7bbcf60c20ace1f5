"""Rule nn_sample_signs -> unlearn_audit.pipeline.nn.sample_signs."""

from unlearn_audit.pipeline import nn
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
nn.sample_signs(snakemake.wildcards.design, snakemake.params.cfg, snakemake.params.seed, snakemake.output[0])  # noqa: F821
