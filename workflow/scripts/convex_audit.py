"""Rule convex_audit -> unlearn_audit.pipeline.convex.audit."""

from unlearn_audit.pipeline import convex
from unlearn_audit.pipeline.job_log import start_job_log
from unlearn_audit.pipeline.runtime import limit_threads

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
limit_threads(snakemake.threads)  # noqa: F821
p, w, out = snakemake.params, snakemake.wildcards, snakemake.output  # noqa: F821
convex.audit(w.mechanism, float(w.epsilon), p.params, p.settings, p.zeta, p.seed, out.decisions, out.summary)
