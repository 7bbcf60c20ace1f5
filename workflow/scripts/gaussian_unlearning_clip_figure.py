"""Rule gaussian_unlearning_clip_figure -> unlearn_audit.pipeline.gaussian_unlearning.clip_figure."""

from unlearn_audit.pipeline import gaussian_unlearning
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
gaussian_unlearning.clip_figure(snakemake.wildcards.gu_error, snakemake.input[0], snakemake.output.figure)  # noqa: F821
