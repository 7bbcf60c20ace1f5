"""Rule certified_figure -> unlearn_audit.pipeline.certified.figure."""

from unlearn_audit.pipeline import certified
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
inp = snakemake.input  # noqa: F821
certified.figure(
    snakemake.wildcards.figure, list(inp.bounds), list(inp.checkpoint_bounds), list(inp.pairwise),  # noqa: F821
    snakemake.params.experiments, snakemake.output[0], list(snakemake.params.metrics),  # noqa: F821
)
