"""Rule provenance -> unlearn_audit.pipeline.provenance.write_provenance."""

from unlearn_audit.pipeline.job_log import start_job_log
from unlearn_audit.pipeline.provenance import write_provenance

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
p = snakemake.params  # noqa: F821
write_provenance(dict(p.config), p.checkout, snakemake.output.record, snakemake.output.header)  # noqa: F821
