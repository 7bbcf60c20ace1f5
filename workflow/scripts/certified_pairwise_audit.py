"""Rule certified_pairwise_audit -> unlearn_audit.pipeline.certified.pairwise_audit."""

from unlearn_audit.pipeline import certified
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
p, inp = snakemake.params, snakemake.input  # noqa: F821
certified.pairwise_audit(list(p.scores), inp.signs, dict(p.cell), p.zeta, snakemake.output[0])  # noqa: F821
