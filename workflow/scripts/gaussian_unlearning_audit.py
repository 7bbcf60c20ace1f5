"""Rule gaussian_unlearning_audit -> unlearn_audit.pipeline.gaussian_unlearning.audit."""

from unlearn_audit.pipeline import gaussian_unlearning
from unlearn_audit.pipeline.job_log import start_job_log
from unlearn_audit.pipeline.runtime import limit_threads

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
limit_threads(snakemake.threads)  # noqa: F821
p = snakemake.params  # noqa: F821
gaussian_unlearning.audit(p.spec, p.model, p.seed, p.zeta, snakemake.output[0], snakemake.output.raw)  # noqa: F821
