"""Rule certified_pairwise_table -> unlearn_audit.pipeline.certified.pairwise_table."""

from unlearn_audit.pipeline import certified
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
inp = snakemake.input  # noqa: F821
certified.pairwise_table(snakemake.wildcards.table, list(inp.pairwise), list(snakemake.params.metrics), snakemake.params.experiments, snakemake.output[0])  # noqa: F821
