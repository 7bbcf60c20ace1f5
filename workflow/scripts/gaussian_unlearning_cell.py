"""Rule gaussian_unlearning_cell -> unlearn_audit.pipeline.gaussian_unlearning.cell."""

from unlearn_audit.pipeline import gaussian_unlearning
from unlearn_audit.pipeline.job_log import start_job_log
from unlearn_audit.pipeline.runtime import limit_threads

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
limit_threads(snakemake.threads)  # noqa: F821
p, w = snakemake.params, snakemake.wildcards  # noqa: F821
gaussian_unlearning.cell(w.gu_experiment, float(w.x), p.spec, p.model, p.seed, snakemake.output[0])  # noqa: F821
