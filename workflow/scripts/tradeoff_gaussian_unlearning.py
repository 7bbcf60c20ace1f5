"""Rule tradeoff_gaussian_unlearning -> unlearn_audit.pipeline.tradeoff.gaussian_unlearning."""

from unlearn_audit.pipeline import tradeoff
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
tradeoff.gaussian_unlearning(snakemake.input[0], snakemake.output[0])  # noqa: F821
