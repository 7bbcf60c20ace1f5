"""Rule nn_prepare_data -> unlearn_audit.pipeline.nn.prepare_data."""

from unlearn_audit.pipeline import nn
from unlearn_audit.pipeline.job_log import start_job_log
from unlearn_audit.pipeline.runtime import limit_threads

start_job_log(snakemake.log[0], snakemake.output, job=snakemake)  # noqa: F821  (stderr to the log, a summary line at the end; Parquet outputs stamped)
limit_threads(snakemake.threads)  # noqa: F821
p, out = snakemake.params, snakemake.output  # noqa: F821
# resources_dir is where datasets are cached, not a param: moving the cache reruns nothing
nn.prepare_data(snakemake.wildcards.design, p.cfg, p.seed, snakemake.config["resources_dir"], out.data, out.split)  # noqa: F821
