"""Rule certified_table6 -> unlearn_audit.pipeline.certified.table6."""

from unlearn_audit.pipeline import certified
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
inp = snakemake.input  # noqa: F821
certified.table6(list(inp.bounds), list(inp.checkpoint_bounds), list(snakemake.params.metrics), snakemake.params.experiments, snakemake.output[0],
                 overlap_paths=list(inp.overlaps))  # noqa: F821
