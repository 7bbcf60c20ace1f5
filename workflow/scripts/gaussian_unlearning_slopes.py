"""Rule gaussian_unlearning_slopes -> unlearn_audit.pipeline.gaussian_unlearning.slopes."""

from unlearn_audit.pipeline import gaussian_unlearning
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
gaussian_unlearning.slopes(list(snakemake.input), snakemake.output[0])  # noqa: F821
