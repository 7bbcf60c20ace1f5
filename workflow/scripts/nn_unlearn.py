"""Rules nn_unlearn_<experiment>_<phase>_<chunk> -> unlearn_audit.pipeline.nn_runs.unlearn."""

import sys

from unlearn_audit.pipeline import nn_runs
from unlearn_audit.pipeline.job_log import start_job_log
from unlearn_audit.pipeline.runtime import job_gpu_slot, limit_threads

start_job_log(snakemake.log[0], snakemake.output)  # noqa: F821  (stderr to the log; a summary line at the end)
limit_threads(snakemake.threads)  # noqa: F821
p, inp, out = snakemake.params, snakemake.input, snakemake.output  # noqa: F821
# A GPU job holds one GPU slot (CUDA_VISIBLE_DEVICES) before anything touches CUDA.
with job_gpu_slot(snakemake.config["device"], snakemake.config["results_dir"], log=sys.stderr):  # noqa: F821
    nn_runs.unlearn(
        list(p.experiments), p.design_cfg, p.method, list(p.method_params), p.seed, inp.data, inp.signs,
        list(inp.base), list(out.scores), list(out.metrics), device=snakemake.config["device"],  # noqa: F821
        checkpoint_outputs=list(out.checkpoints) if hasattr(out, "checkpoints") else None, release_key=p.release_key,
    )
