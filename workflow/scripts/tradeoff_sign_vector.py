"""Rule tradeoff_sign_vector -> unlearn_audit.pipeline.tradeoff.sign_vector."""

from unlearn_audit.pipeline import tradeoff
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
tradeoff.sign_vector(list(snakemake.input), snakemake.params.experiments, snakemake.params.zeta, snakemake.output[0])  # noqa: F821
