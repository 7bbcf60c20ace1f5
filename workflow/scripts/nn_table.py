"""Rule nn_table -> unlearn_audit.pipeline.nn.table."""

from unlearn_audit.pipeline import nn
from unlearn_audit.pipeline.job_log import start_job_log

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
inp = snakemake.input  # noqa: F821
nn.table(snakemake.wildcards.table, list(inp.bounds), list(snakemake.params.metrics), snakemake.params.experiments, snakemake.output[0],  # noqa: F821
         checkpoint_bound_paths=list(inp.checkpoint_bounds), overlap_paths=list(inp.overlaps),
         membership_paths=list(inp.membership), retrain_controls=snakemake.params.retrain_controls)  # noqa: F821
